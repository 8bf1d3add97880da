import ArgumentParser
import Koe

/// The F0 edits beyond constant ratios, and the output limiter: options of convert and batch.
struct VoiceCurveOptions: ParsableArguments {
    @Option(name: .customLong("pitch-curve"), help: ArgumentHelp(
        "Pitch ratio over time: a file of lines 'time ratio' (seconds of input, CSV or whitespace), linear between points, held past the ends; multiplies --pitch.",
        valueName: "file"))
    var pitchCurve: String?

    @Option(name: .customLong("f0-file"), help: ArgumentHelp(
        "F0 in Hz for each analysis frame (0 = unvoiced), replacing the analysed F0: a float64 .npy as `koe analyze` writes f0.npy, or text with one value a line. Its length must be the input's frame count.",
        valueName: "file"))
    var f0File: String?

    @Option(name: .customLong("snap"), help: ArgumentHelp(
        "Pull voiced F0 to the nearest note: chromatic, or KEY:SCALE such as C:major, A:minor, F#:dorian (\(Self.modeNames)).",
        valueName: "key:scale"), transform: parsed(MusicalScale.init(parsing:)))
    var snap: MusicalScale?

    @Option(name: .customLong("snap-strength"), parsing: .unconditional, help: ArgumentHelp(
        "How far --snap moves F0 to its note: 0 not at all, 1 all the way (default 1).", valueName: "s"))
    var snapStrength: Double?

    @Option(name: .customLong("snap-speed"), parsing: .unconditional, help: ArgumentHelp(
        "Time constant in ms with which --snap reaches a note (default 0: at once).", valueName: "ms"))
    var snapSpeed: Double?

    @Option(name: .customLong("a4"), parsing: .unconditional, help: ArgumentHelp("Tuning of --snap: A4 in Hz (default 440).", valueName: "hz"))
    var a4: Double?

    @Option(name: .customLong("vibrato"), help: ArgumentHelp(
        "Sinusoidal vibrato on voiced frames: rate in Hz and depth in cents either way, e.g. 5.5:50.", valueName: "hz:cents"),
        transform: Self.vibratoOptions(parsing:))
    var vibrato: Vibrato.Options?

    @Flag(name: .customLong("no-limit"), help: ArgumentHelp(
        "Turn off the output limiter: samples beyond full scale are clipped and counted instead."))
    var noLimit = false

    private static var modeNames: String {
        MusicalScale.Mode.allCases.filter { $0 != .chromatic }.map(\.rawValue).joined(separator: ", ")
    }

    func validate() throws {
        if snap == nil {
            for (flag, value) in [("--snap-strength", snapStrength), ("--snap-speed", snapSpeed), ("--a4", a4)] where value != nil {
                throw ValidationError("\(flag) tunes --snap: give --snap KEY:SCALE too")
            }
        }
        try requireWithin(snapStrength, PitchSnap.Options.strengthRange, "--snap-strength")
        try requireWithin(snapSpeed, PitchSnap.Options.speedRange, "--snap-speed", unit: " ms")
        try requireWithin(a4, PitchSnap.Options.a4Range, "--a4", unit: " Hz")
        if let vibrato {
            try requireWithin(vibrato.rate, Vibrato.Options.rateRange, "--vibrato's rate", unit: " Hz")
            try requireWithin(vibrato.depth, Vibrato.Options.depthRange, "--vibrato's depth", unit: " cents")
        }
    }

    /// `settings` with the files read and the F0 edits and the limiter set; throws `KoeError` for a file that
    /// cannot be used.
    func apply(to settings: inout ConversionSettings) throws {
        settings.voice.pitchCurve = try pitchCurve.map { path throws(KoeError) in try PitchCurve(contentsOf: path) }
        settings.voice.f0Track = try f0File.map { path throws(KoeError) in try F0Track(contentsOf: path) }
        settings.voice.snap = snapOptions
        settings.voice.vibrato = vibrato
        settings.limitsOutput = !noLimit
    }

    /// Reads the curve and F0 files, so that a batch refuses a bad one before it starts; a usage error.
    func checkFiles() throws {
        var settings = ConversionSettings()
        do {
            try apply(to: &settings)
        } catch let error as KoeError {
            throw ValidationError(error.description)
        }
    }

    private var snapOptions: PitchSnap.Options? {
        guard let snap else { return nil }
        let defaults = PitchSnap.Options()
        return PitchSnap.Options(
            scale: snap, strength: snapStrength ?? defaults.strength, speed: snapSpeed ?? defaults.speed, a4: a4 ?? defaults.a4)
    }

    private static func vibratoOptions(parsing argument: String) throws -> Vibrato.Options {
        let fields = argument.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2, let rate = Double(fields[0]), let depth = Double(fields[1]) else {
            throw ValidationError("expected RATE_HZ:DEPTH_CENTS, such as 5.5:50")
        }
        return Vibrato.Options(rate: rate, depth: depth)
    }
}
