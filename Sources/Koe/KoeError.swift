import KoeIO
import KoeStages
import KoeWorld

/// Why koe refused a call. Messages are written for the person who will read them, one line each.
public enum KoeError: Error, Equatable, CustomStringConvertible {
    /// A value that cannot work: a sample rate outside 8 to 192 kHz, no channels, an EQ band above Nyquist, …
    case invalidArgument(String)
    /// Audio or parameters that cannot be processed: non-finite samples, ragged channels, a too-short signal, …
    /// `source` names where they came from (a path, "standard input"), when there is one.
    case badInput(source: String?, reason: String)
    /// A file or stream could not be read or written.
    case io(String)
    /// The call does not fit the object's state: processing after `finish` without `reset`.
    case misuse(String)

    public var description: String {
        switch self {
        case .invalidArgument(let message), .io(let message), .misuse(let message):
            return message
        case .badInput(let source, let reason):
            return source.map { "\($0): \(reason)" } ?? reason
        }
    }
}

extension KoeError {
    /// The error of a lower layer, as the library's own.
    init(_ error: any Error, source: String? = nil) {
        switch error {
        case let error as KoeError: self = error
        case let error as WorldError: self = .badInput(source: source, reason: error.description)
        case let error as StageError: self = .invalidArgument(error.description)
        case let error as IOError: self = .io(error.description)
        default: self = .io(String(describing: error))
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
