import Glibc

/// Why the vocoder refused its input. Messages are written for the person at the shell.
public enum WorldError: Error, Equatable, CustomStringConvertible {
    case unsupportedSampleRate(Int)
    case signalTooShort(samples: Int, minimum: Int)
    /// A signal longer than one whole-signal analysis takes (`SignalRequirements.longestSignal`).
    case signalTooLong(samples: Int, maximum: Int)
    case nonFiniteSample(index: Int)
    /// A setting out of its range; the message names it and the value given.
    case invalidOption(String)
    /// F0, spectrogram, aperiodicity or frame times that do not fit together; the message says how.
    case invalidParameters(String)
    /// A stream was given samples, or asked to finish, after it had finished.
    case streamFinished

    public var description: String {
        switch self {
        case .unsupportedSampleRate(let rate):
            return "sample rate \(rate) Hz is not supported (8000 to 192000 Hz)"
        case .signalTooShort(let samples, let minimum):
            let held = samples == 1 ? "1 sample" : "\(samples) samples"
            return "signal is too short: \(held), at least \(minimum) needed for one analysis frame"
        case .signalTooLong(let samples, let maximum):
            return "signal is too long to analyse whole: \(samples) samples, at most \(maximum); stream it instead"
        case .nonFiniteSample(let index):
            return "sample \(index) is not a finite number (NaN or infinity)"
        case .invalidOption(let message), .invalidParameters(let message):
            return message
        case .streamFinished:
            return "the stream has already finished: nothing can follow finish()"
        }
    }
}

/// Checks a signal and settings against what every analysis needs, before any of them runs.
public enum SignalRequirements {
    public static let sampleRates = 8000...192_000
    /// The lowest F0 floor accepted: below it no voice has a pitch, and CheapTrick's FFT size grows without bound.
    public static let lowestF0Floor = 10.0
    /// The longest signal one whole-signal analysis takes (over 6 hours at 48 kHz): DIO and Harvest transform
    /// it whole, and FFTW counts a transform's points in 32 bits. `StreamingAnalyzer` takes streams of any length.
    public static let longestSignal = (1 << 30) - (1 << 20)
    /// The frame periods accepted, in milliseconds: far wider than a voice needs (WORLD uses 5 ms), but bounded so
    /// a slip of the decimal point fails at once.
    public static let framePeriods = 0.001...10_000.0

    /// The shortest signal that holds one analysis window: three periods of the F0 floor. `f0Floor` must be a
    /// validated floor (see `validateF0Range`).
    static func minimumLength(sampleRate: Int, f0Floor: Double) -> Int {
        Int((3.0 * Double(sampleRate) / f0Floor).rounded(.up))
    }

    /// Throws unless the rate is supported, the F0 floor valid, and `signal` long enough, not too long, and finite
    /// throughout.
    public static func validate(_ signal: [Double], sampleRate: Int, f0Floor: Double) throws(WorldError) {
        try validate(sampleRate: sampleRate)
        try validateF0Floor(f0Floor)
        let minimum = minimumLength(sampleRate: sampleRate, f0Floor: f0Floor)
        guard signal.count >= minimum else {
            throw .signalTooShort(samples: signal.count, minimum: minimum)
        }
        guard signal.count <= longestSignal else {
            throw .signalTooLong(samples: signal.count, maximum: longestSignal)
        }
        try requireFinite(signal)
    }

    /// Throws unless `samples` is the length of a signal one whole-signal analysis takes: 0 to `longestSignal`.
    static func validate(sampleCount samples: Int) throws(WorldError) {
        guard samples >= 0 else { throw .invalidParameters("a signal cannot have \(samples) samples") }
        guard samples <= longestSignal else { throw .signalTooLong(samples: samples, maximum: longestSignal) }
    }

    /// This machine's memory in bytes.
    private static var physicalMemory: UInt64 {
        UInt64(max(0, sysconf(Int32(_SC_PHYS_PAGES)))) * UInt64(max(0, sysconf(Int32(_SC_PAGESIZE))))
    }

    /// Throws unless `rows` × `columns` values fit in this machine's memory, `what` naming them. An allocation that
    /// fails traps, so a size that a caller's values multiply up (frames × bins) is checked before it is made.
    static func requireRoom(rows: Int, columns: Int, for what: String) throws(WorldError) {
        let (count, overflow) = rows.multipliedReportingOverflow(by: columns)
        guard !overflow, count >= 0, UInt64(count) <= physicalMemory / 8 else {
            throw .invalidParameters("\(what) of \(rows) x \(columns) values needs more memory than this machine has")
        }
    }

    /// Throws unless `sampleRate` is one the vocoder supports.
    static func validate(sampleRate: Int) throws(WorldError) {
        guard sampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
    }

    /// The position of the first value that is NaN or infinite, counted from 0; nil when all are finite. The one
    /// check every layer makes of the samples and parameters it is given.
    /// Inlinable, so each caller gets it specialised for its own sample type, not a generic walk per sample.
    @inlinable
    package static func firstNonFinite<Values: Sequence>(_ values: Values) -> Int? where Values.Element: BinaryFloatingPoint {
        for (position, value) in values.enumerated() where !value.isFinite {
            return position
        }
        return nil
    }

    /// Throws unless every sample is a finite number; `offset` is the first sample's index in the whole signal.
    @inlinable
    static func requireFinite<Samples: Sequence>(
        _ samples: Samples, offset: Int = 0
    ) throws(WorldError) where Samples.Element: BinaryFloatingPoint {
        if let position = firstNonFinite(samples) {
            throw .nonFiniteSample(index: offset + position)
        }
    }

    /// Throws `invalidParameters` unless every value is a finite number, naming the first that is not as
    /// `name(position)` does ("the F0 of frame 3").
    static func requireFinite(_ values: [Double], name: (Int) -> String) throws(WorldError) {
        if let position = firstNonFinite(values) {
            throw .invalidParameters("\(name(position)) is \(values[position]), not a finite number")
        }
    }

    /// Throws unless `signal` has samples, all finite, and every frame of `contour` has a usable time: what
    /// CheapTrick, D4C and StoneMask need of their input.
    static func validate(_ signal: [Double], contour: F0Contour) throws(WorldError) {
        guard !signal.isEmpty else { throw .signalTooShort(samples: 0, minimum: 1) }
        try requireFinite(signal)
        try contour.validateTimes()
    }

    /// Throws unless `frames` holds `fftSize / 2 + 1` bins a frame, each positive and finite: a spectrum whose
    /// logarithm a codec can take. `name` ("the spectrogram") and `kind` ("a power spectrum") word the error.
    static func validateSpectrum(
        _ frames: Matrix, fftSize: Int, name: String, kind: String
    ) throws(WorldError) {
        let bins = fftSize / 2 + 1
        guard frames.columns == bins else {
            throw .invalidParameters("\(name) has \(frames.columns) bins a frame; FFT size \(fftSize) needs \(bins)")
        }
        if let position = frames.storage.firstIndex(where: { !($0 > 0 && $0.isFinite) }) {
            throw .invalidParameters(
                "\(name)'s frame \(position / bins), bin \(position % bins) is \(frames.storage[position]); "
                    + "\(kind) must be positive and finite")
        }
    }

    static func validateFramePeriod(_ framePeriod: Double) throws(WorldError) {
        guard framePeriods.contains(framePeriod) else {
            throw .invalidOption(
                "frame period must be from \(framePeriods.lowerBound) to \(framePeriods.upperBound) ms (got \(framePeriod))")
        }
    }

    static func validateF0Floor(_ f0Floor: Double) throws(WorldError) {
        guard f0Floor.isFinite, f0Floor >= lowestF0Floor else {
            throw .invalidOption("F0 floor must be at least \(lowestF0Floor) Hz (got \(f0Floor))")
        }
    }

    /// A floor and ceiling an F0 search can use at `sampleRate`: floor valid, ceiling above it and below Nyquist.
    static func validateF0Range(floor: Double, ceil: Double, sampleRate: Int) throws(WorldError) {
        try validateF0Floor(floor)
        guard ceil.isFinite, ceil > floor else {
            throw .invalidOption("F0 ceiling (\(ceil) Hz) must be above the F0 floor (\(floor) Hz)")
        }
        let nyquist = Double(sampleRate) / 2
        guard ceil < nyquist else {
            throw .invalidOption("F0 ceiling (\(ceil) Hz) must be below half the sample rate (\(nyquist) Hz)")
        }
    }
}
