import Glibc

/// Plain file access through POSIX calls, with failures turned into `IOError`s that name the real cause.
enum Files {
    /// The size in bytes of `path`, which must be a readable regular file.
    static func readableFileSize(_ path: String) throws -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw errno == ENOENT || errno == ENOTDIR
                ? IOError.fileNotFound(path: path)
                : IOError.readFailed(path: path, reason: systemMessage(errno))
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw IOError.notARegularFile(path: path) }
        guard access(path, R_OK) == 0 else { throw IOError.permissionDenied(path: path) }
        return Int(status.st_size)
    }

    /// The whole content of `path`.
    static func read(_ path: String) throws -> [UInt8] {
        let size = try readableFileSize(path)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw IOError.readFailed(path: path, reason: systemMessage(errno)) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + done, size - done) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw IOError.readFailed(path: path, reason: systemMessage(errno)) }
            if got == 0 { break }
            done += got
        }
        return Array(bytes[..<done])
    }

    /// Creates or replaces `path` with `bytes`, looping until every byte is written.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw IOError.writeFailed(path: path, reason: systemMessage(errno)) }
        do {
            try Descriptors.writeAll(bytes, to: descriptor)
        } catch {
            close(descriptor)
            throw IOError.writeFailed(path: path, reason: error.message)
        }
        guard close(descriptor) == 0 else { throw IOError.writeFailed(path: path, reason: systemMessage(errno)) }
    }

    static func systemMessage(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
