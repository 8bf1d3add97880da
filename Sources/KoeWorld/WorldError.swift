/// Why the vocoder refused its input. Messages are written for the person at the shell.
public enum WorldError: Error, Equatable, CustomStringConvertible {
    case unsupportedSampleRate(Int)
    case signalTooShort(samples: Int, minimum: Int)
    case nonFiniteSample(index: Int)
    case invalidOption(String)

    public var description: String {
        switch self {
        case .unsupportedSampleRate(let rate):
            return "sample rate \(rate) Hz is not supported (8000 to 192000 Hz)"
        case .signalTooShort(let samples, let minimum):
            let held = samples == 1 ? "1 sample" : "\(samples) samples"
            return "signal is too short: \(held), at least \(minimum) needed for one analysis frame"
        case .nonFiniteSample(let index):
            return "sample \(index) is not a finite number (NaN or infinity)"
        case .invalidOption(let message):
            return message
        }
    }
}

/// Checks a signal against what every analysis needs, before any of them runs.
public enum SignalRequirements {
    public static let sampleRates = 8000...192_000

    /// The shortest signal that holds one analysis window: three periods of the F0 floor.
    public static func minimumLength(sampleRate: Int, f0Floor: Double) -> Int {
        Int((3.0 * Double(sampleRate) / f0Floor).rounded(.up))
    }

    public static func validate(_ signal: [Double], sampleRate: Int, f0Floor: Double) throws {
        guard sampleRates.contains(sampleRate) else { throw WorldError.unsupportedSampleRate(sampleRate) }
        let minimum = minimumLength(sampleRate: sampleRate, f0Floor: f0Floor)
        guard signal.count >= minimum else {
            throw WorldError.signalTooShort(samples: signal.count, minimum: minimum)
        }
        if let index = signal.firstIndex(where: { !$0.isFinite }) {
            throw WorldError.nonFiniteSample(index: index)
        }
    }
}
