/// Why reading or writing a file failed. Each message is one line, written for the person at the shell,
/// and names the file it is about.
package enum IOError: Error, Equatable, CustomStringConvertible {
    case fileNotFound(path: String)
    case notARegularFile(path: String)
    case permissionDenied(path: String)
    case notAudio(path: String, reason: String)
    case emptyAudio(path: String)
    case truncatedAudio(path: String, expectedFrames: Int, actualFrames: Int)
    case readFailed(path: String, reason: String)
    case channelOutOfRange(path: String, channel: Int, channels: Int)
    case folderNotFound(path: String)
    case notAFolder(path: String)
    case unwritableFolder(path: String, reason: String)
    case writeFailed(path: String, reason: String)
    case unknownAudioFormat(path: String)
    case unsupportedEncoding(path: String, encoding: String)
    case invalidNpy(path: String, reason: String)
    /// A text file of numbers that cannot be read; `line` counts from 1.
    case invalidText(path: String, line: Int?, reason: String)
    /// A raw PCM description that cannot be a format; the problem is the whole message.
    case invalidRawFormat(RawPCMFormat.Problem)
    /// A raw stream that ended part way through a frame.
    case strayBytes(path: String, count: Int, bytesPerFrame: Int)
    /// The reader of a pipe went away. Not a failure for a command-line tool: it should stop quietly.
    case brokenPipe(path: String)

    package var description: String {
        switch self {
        case .fileNotFound(let path):
            return "\(path): no such file"
        case .notARegularFile(let path):
            return "\(path): is a folder or a device, not a file"
        case .permissionDenied(let path):
            return "\(path): permission denied"
        case .notAudio(let path, let reason):
            return "\(path): not an audio file libsndfile can read (\(reason))"
        case .emptyAudio(let path):
            return "\(path): holds no audio"
        case .truncatedAudio(let path, let expected, let actual):
            return "\(path): file is truncated: its header announces \(expected) frames but only \(actual) are there"
        case .readFailed(let path, let reason):
            return "\(path): read failed: \(reason)"
        case .channelOutOfRange(let path, let channel, let channels):
            let available = channels == 1 ? "1 channel (channel 0)" : "\(channels) channels (0 to \(channels - 1))"
            return "\(path): has no channel \(channel); it has \(available)"
        case .folderNotFound(let path):
            return "\(path): no such folder"
        case .notAFolder(let path):
            return "\(path): exists and is not a folder"
        case .unwritableFolder(let path, let reason):
            return "\(path): cannot write in this folder (\(reason))"
        case .writeFailed(let path, let reason):
            return "\(path): write failed: \(reason)"
        case .unknownAudioFormat(let path):
            return "\(path): cannot tell the audio format from the file name; use an extension such as .wav, .flac, .aiff or .ogg"
        case .unsupportedEncoding(let path, let encoding):
            return "\(path): this format cannot hold \(encoding) samples"
        case .invalidNpy(let path, let reason):
            return "\(path): not a usable NumPy .npy file: \(reason)"
        case .invalidText(let path, let line, let reason):
            return "\(path): " + (line.map { "line \($0): " } ?? "") + reason
        case .invalidRawFormat(let problem):
            return problem.description
        case .strayBytes(let path, let count, let bytesPerFrame):
            let bytes = count == 1 ? "1 stray byte" : "\(count) stray bytes"
            return "\(path): raw audio ends with \(bytes) after the last whole \(bytesPerFrame)-byte frame; check the raw format"
        case .brokenPipe(let path):
            return "\(path): the reader closed the pipe"
        }
    }

    /// The same error about `destination` when it was raised while writing its temporary file.
    func reported(as destination: String, insteadOf temporary: String) -> IOError {
        switch self {
        case .writeFailed(let path, let reason) where path == temporary:
            return .writeFailed(path: destination, reason: reason)
        case .unsupportedEncoding(let path, let encoding) where path == temporary:
            return .unsupportedEncoding(path: destination, encoding: encoding)
        default:
            return self
        }
    }
}
