/// A problem with what the user gave the command that neither the I/O nor the vocoder layer can name:
/// analysis files that do not fit together, options that do not fit the input.
enum CommandError: Error, CustomStringConvertible {
    /// Something wrong with one input file, told about that file.
    case badInput(path: String, reason: String)
    /// An option value that cannot work with this input.
    case badOption(String)

    var description: String {
        switch self {
        case .badInput(let path, let reason): return "\(path): \(reason)"
        case .badOption(let message): return message
        }
    }
}
