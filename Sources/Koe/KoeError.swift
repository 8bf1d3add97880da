import KoeIO
import KoeStages
import KoeWorld

extension KoeError {
    /// A sample that is NaN or infinite: frame `frame` of `channel` (nil for a mono signal), from `source`.
    static func nonFiniteSample(frame: Int, channel: Int?, source: String?) -> KoeError {
        let sample = channel.map { "sample \(frame) of channel \($0)" } ?? "sample \(frame)"
        return .badInput(source: source, reason: "\(sample) is not a finite number (NaN or infinity)")
    }

    /// The error of a lower layer, as the library's own.
    init(_ error: any Error, source: String? = nil) {
        switch error {
        case let error as KoeError: self = error
        case let error as WorldError: self = KoeError(error, source: source)
        case let error as IOError: self = .io(error.description)
        default: self = .io(String(describing: error))
        }
    }

    /// A setting WORLD cannot run with is an invalid argument, a stream used after its end a misuse; anything
    /// else is input that cannot be processed.
    init(_ error: WorldError, source: String? = nil) {
        switch error {
        case .invalidOption: self = .invalidArgument(error.description)
        case .streamFinished: self = .misuse(error.description)
        case .unsupportedSampleRate, .signalTooShort, .signalTooLong, .nonFiniteSample, .invalidParameters:
            self = .badInput(source: source, reason: error.description)
        }
    }

    /// Runs `body`, turning whatever it throws into a `KoeError`.
    package static func wrapping<T>(source: String? = nil, _ body: () throws -> T) throws(KoeError) -> T {
        do {
            return try body()
        } catch {
            throw KoeError(error, source: source)
        }
    }
}
