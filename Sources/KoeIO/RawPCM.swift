import Glibc

/// Reads raw PCM from a file descriptor (standard input unless told otherwise) as interleaved doubles,
/// for pipes such as `sox in.wav -t raw -e signed -b 16 - | koe - - --type raw ...`.
/// The descriptor is borrowed: it is neither closed nor repositioned.
package final class RawPCMReader {
    package let format: RawPCMFormat
    /// Names the stream in errors.
    package let name: String
    /// Whole frames returned so far. Still 0 at the end of the stream means it held no audio at all.
    package private(set) var framesRead = 0

    private let descriptor: Int32
    /// Bytes as they arrive, reused from call to call.
    private var bytes: [UInt8] = []
    /// Bytes at the start of `bytes` still waiting for the rest of their frame.
    private var pendingBytes = 0
    private var isFinished = false

    package init(format: RawPCMFormat, descriptor: Int32 = STDIN_FILENO, name: String = "standard input") {
        self.format = format
        self.descriptor = descriptor
        self.name = name
    }

    /// Up to `maxFrames` interleaved frames, or nil at the end of the stream. Waits until at least one whole
    /// frame has arrived, then returns what the stream has delivered without waiting for more, so that live
    /// input flows on as it comes. Fails if the stream ends part way through a frame.
    package func read(maxFrames: Int) throws -> [Double]? {
        precondition(maxFrames > 0, "maxFrames must be positive")
        guard !isFinished else { return nil }
        let capacity = maxFrames * format.bytesPerFrame
        if bytes.count < capacity { bytes += repeatElement(0, count: capacity - bytes.count) }
        while true {
            let got = try readSome(upTo: capacity)
            if got == 0 { return try finish() }
            pendingBytes += got
            let frames = pendingBytes / format.bytesPerFrame
            if frames > 0 { return takeFrames(frames) }
        }
    }

    /// False when the next `read` may have to wait for the stream: nothing has arrived since the last one.
    /// (The end of the stream counts as arrived.)
    package var hasInputWaiting: Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&request, 1, 0) > 0
    }

    /// One read(2) into the room after the pending bytes; 0 at the end of the stream.
    private func readSome(upTo capacity: Int) throws -> Int {
        while true {
            let got = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + pendingBytes, capacity - pendingBytes)
            }
            if got >= 0 { return got }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                do {
                    try Descriptors.waitUntilReady(descriptor, for: POLLIN)
                } catch {
                    throw IOError.readFailed(path: name, reason: error.message)
                }
            default:
                throw IOError.readFailed(path: name, reason: Files.systemMessage(errno))
            }
        }
    }

    /// Converts the first `frames` frames and keeps the bytes after them for the next call.
    private func takeFrames(_ frames: Int) -> [Double] {
        let sampleCount = frames * format.channels
        let usedBytes = frames * format.bytesPerFrame
        let samples = bytes.withUnsafeBytes { buffer in
            [Double](unsafeUninitializedCapacity: sampleCount) { samples, initialized in
                format.decode(UnsafeRawBufferPointer(rebasing: buffer[..<usedBytes]), into: samples)
                initialized = sampleCount
            }
        }
        pendingBytes -= usedBytes
        bytes.withUnsafeMutableBytes { buffer in
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + usedBytes, byteCount: pendingBytes)
        }
        framesRead += frames
        return samples
    }

    private func finish() throws -> [Double]? {
        isFinished = true
        guard pendingBytes == 0 else {
            throw IOError.strayBytes(path: name, count: pendingBytes, bytesPerFrame: format.bytesPerFrame)
        }
        return nil
    }
}

/// Writes interleaved doubles as raw PCM to a file descriptor (standard output unless told otherwise),
/// as soon as they are given: nothing is held back, so a pipe sees output while input is still arriving.
/// Integer samples beyond full scale are clipped and counted; floats are written as they are.
/// The descriptor is borrowed: it is not closed.
package final class RawPCMWriter {
    package let format: RawPCMFormat
    /// Names the stream in errors.
    let name: String
    private(set) var framesWritten = 0
    /// Integer samples clamped to the encoding's range so far, counted as `RawPCMFormat` describes.
    package private(set) var clippedSamples = 0

    private let descriptor: Int32
    /// Converted bytes, reused from call to call.
    private var bytes: [UInt8] = []

    package init(format: RawPCMFormat, descriptor: Int32 = STDOUT_FILENO, name: String = "standard output") {
        self.format = format
        self.descriptor = descriptor
        self.name = name
    }

    /// Writes whole interleaved frames, looping until the descriptor has taken every byte. Fails with
    /// `IOError.brokenPipe` once the reader has gone (see `ignoreBrokenPipeSignal()`).
    package func write(interleaved samples: [Double]) throws {
        precondition(samples.count % format.channels == 0, "interleaved samples must fill whole frames")
        let byteCount = samples.count * format.bytesPerSample
        if bytes.count < byteCount { bytes += repeatElement(0, count: byteCount - bytes.count) }
        clippedSamples += samples.withUnsafeBufferPointer { samples in
            bytes.withUnsafeMutableBytes { buffer in
                format.encode(samples, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<byteCount]))
            }
        }
        try writeAll(byteCount)
        framesWritten += samples.count / format.channels
    }

    private func writeAll(_ byteCount: Int) throws {
        let written = bytes.withUnsafeBytes { bytes in
            Result { () throws(SystemError) in
                try Descriptors.writeAll(UnsafeRawBufferPointer(rebasing: bytes[..<byteCount]), to: descriptor)
            }
        }
        if case .failure(let error) = written {
            throw error.code == EPIPE ? IOError.brokenPipe(path: name) : IOError.writeFailed(path: name, reason: error.message)
        }
    }

    /// Makes writing to a pipe whose reader has gone fail with EPIPE, which `write` reports as
    /// `IOError.brokenPipe`, instead of raising SIGPIPE. By default that signal kills the process inside
    /// write(2), before any error can be seen: with status 141 (an error to `set -o pipefail`) and without
    /// cleaning up. Ignored, it lets a command-line program stop quietly and tidily when, say, `| head -c 4096`
    /// has read enough. Call once, early, from a command-line program; the setting is process-wide and is
    /// inherited by any program it starts.
    package static func ignoreBrokenPipeSignal() {
        signal(SIGPIPE, SIG_IGN)
    }
}
