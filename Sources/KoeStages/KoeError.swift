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
