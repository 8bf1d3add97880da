import Glibc

/// Writing to and waiting on file descriptors, as every writer in koe must: to the last byte, through signals.
package enum Descriptors {
    /// Writes every byte of `bytes` to `descriptor`. write(2) may take fewer bytes than asked, or be interrupted
    /// by a signal before taking any (EINTR): both go on where they stopped. A descriptor left non-blocking by
    /// whoever shares it is waited on. Throws the failure's errno: EPIPE once a pipe's reader has gone (with
    /// SIGPIPE ignored), EIO for a descriptor that takes no bytes.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let wrote = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if wrote > 0 {
                done += wrote
                continue
            }
            guard wrote < 0 else { throw SystemError(code: EIO) }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                try waitUntilReady(descriptor, for: POLLOUT)
            case let code:
                throw SystemError(code: code)
            }
        }
    }

    package static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws(SystemError) {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try writeAll(buffer, to: descriptor) }
        }.get()
    }

    /// Blocks until `descriptor` is ready for `events` (POLLIN or POLLOUT), or has hung up or failed, which
    /// the next read or write then reports.
    static func waitUntilReady(_ descriptor: Int32, for events: Int32) throws(SystemError) {
        var request = pollfd(fd: descriptor, events: Int16(events), revents: 0)
        while poll(&request, 1, -1) < 0 {
            guard errno == EINTR else { throw SystemError(code: errno) }
        }
    }
}

/// A system call's failure.
package struct SystemError: Error, Equatable {
    /// The errno it set.
    let code: Int32

    /// The system's words for it, as strerror gives them.
    package var message: String { Files.systemMessage(code) }
}
