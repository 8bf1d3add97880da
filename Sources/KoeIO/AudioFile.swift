import CSndFile
import Glibc

/// An audio file open through libsndfile, for reading or for writing, closed when the object goes away.
/// Samples are doubles in [-1, 1]; multichannel audio is read interleaved or split into channels.
package final class AudioFile {
    package let path: String
    package let sampleRate: Int
    package let channels: Int
    package let format: AudioFormat
    /// Frames per channel: announced by the file when reading, written so far when writing.
    package private(set) var frames: Int

    private var handle: OpaquePointer?
    private let isWriting: Bool
    private var framesRead = 0
    /// Integer PCM is rounded and clipped here, exactly as sox and the raw writer do it, so a file and a pipe
    /// carry the same samples; libsndfile's own conversion scales by 2^(bits-1) - 1 instead.
    private var integerQuantizer: SampleCodec?
    /// Samples beyond full scale clipped so far while writing integer PCM.
    package private(set) var clippedSamples = 0

    /// Frames moved per libsndfile call when a whole file is read.
    private static let chunkFrames = 65_536

    /// Opens `path` for reading. Fails with a clear reason for a missing, unreadable, non-audio,
    /// empty or truncated file.
    package init(reading path: String) throws {
        guard try Files.readableFileSize(path) > 0 else { throw IOError.emptyAudio(path: path) }
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            throw IOError.notAudio(path: path, reason: Self.lastOpenError())
        }
        self.path = path
        self.handle = handle
        isWriting = false
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        format = AudioFormat(code: info.format)
        frames = Int(info.frames)
        guard frames > 0 else { throw IOError.emptyAudio(path: path) }
        if let announced = WaveHeader.announcedFrames(path: path, format: format), announced > frames {
            throw IOError.truncatedAudio(path: path, expectedFrames: announced, actualFrames: frames)
        }
    }

    /// Creates (or replaces) `path` for writing in `format`. Samples beyond [-1, 1] are clipped, not wrapped.
    package init(writing path: String, sampleRate: Int, channels: Int, format: AudioFormat) throws {
        var info = SF_INFO()
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channels)
        info.format = format.code
        guard sf_format_check(&info) != 0 else {
            throw IOError.unsupportedEncoding(path: path, encoding: format.description)
        }
        guard let handle = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw IOError.writeFailed(path: path, reason: Self.lastOpenError())
        }
        self.path = path
        self.handle = handle
        isWriting = true
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
        frames = 0
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        integerQuantizer = format.integerBits.flatMap {
            (try? RawPCMFormat(sampleRate: sampleRate, channels: channels, encoding: .signed, bits: $0)).map(SampleCodec.init)
        }
    }

    /// Creates `path` for writing in the format its extension names (16-bit PCM unless `encoding` says otherwise).
    convenience init(writing path: String, sampleRate: Int, channels: Int, encoding: SampleEncoding? = nil) throws {
        let format = try AudioFormat.forWriting(path, sampleRate: sampleRate, channels: channels, encoding: encoding)
        try self.init(writing: path, sampleRate: sampleRate, channels: channels, format: format)
    }

    deinit {
        if let handle { sf_close(handle) }
    }

    // MARK: Reading

    /// Up to `maxFrames` frames, interleaved; empty at the end of the file.
    package func readInterleaved(maxFrames: Int) throws -> [Double] {
        let handle = try openHandle(forWriting: false)
        var samples = [Double](repeating: 0, count: maxFrames * channels)
        let got = samples.withUnsafeMutableBufferPointer { buffer in
            Int(sf_readf_double(handle, buffer.baseAddress, sf_count_t(maxFrames)))
        }
        if sf_error(handle) != 0 {
            throw IOError.readFailed(path: path, reason: Self.reason(sf_strerror(handle)))
        }
        framesRead += got
        samples.removeLast((maxFrames - got) * channels)
        return samples
    }

    /// Up to `maxFrames` frames, one array a channel; empty arrays at the end of the file.
    func readChannels(maxFrames: Int) throws -> [[Double]] {
        deinterleave(try readInterleaved(maxFrames: maxFrames))
    }

    /// Every remaining frame, one array a channel. Fails if the file ends before the frames it announced.
    package func readAll() throws -> [[Double]] {
        var result = [[Double]](repeating: [], count: channels)
        try readRemaining { chunk in
            for (channel, samples) in deinterleave(chunk).enumerated() { result[channel] += samples }
        }
        return result
    }

    /// Every remaining frame of one channel (counted from 0).
    package func readChannel(_ channel: Int) throws -> [Double] {
        guard (0..<channels).contains(channel) else {
            throw IOError.channelOutOfRange(path: path, channel: channel, channels: channels)
        }
        var result = [Double]()
        result.reserveCapacity(min(max(frames - framesRead, 0), Self.chunkFrames * 1024))
        try readRemaining { chunk in
            result += stride(from: channel, to: chunk.count, by: channels).lazy.map { chunk[$0] }
        }
        return result
    }

    private func readRemaining(_ consume: ([Double]) -> Void) throws {
        while true {
            let chunk = try readInterleaved(maxFrames: Self.chunkFrames)
            if chunk.isEmpty { break }
            consume(chunk)
        }
        if framesRead < frames {
            throw IOError.truncatedAudio(path: path, expectedFrames: frames, actualFrames: framesRead)
        }
    }

    private func deinterleave(_ interleaved: [Double]) -> [[Double]] {
        (0..<channels).map { channel in
            stride(from: channel, to: interleaved.count, by: channels).map { interleaved[$0] }
        }
    }

    // MARK: Writing

    /// Appends interleaved frames.
    package func write(interleaved samples: [Double]) throws {
        precondition(samples.count % channels == 0, "interleaved samples must fill whole frames")
        let handle = try openHandle(forWriting: true)
        let count = samples.count / channels
        let written: Int
        if let quantizer = integerQuantizer {
            let integers = samples.map { quantizer.leftAlignedInteger(of: $0, clipped: &clippedSamples) }
            written = integers.withUnsafeBufferPointer { Int(sf_writef_int(handle, $0.baseAddress, sf_count_t(count))) }
        } else {
            written = samples.withUnsafeBufferPointer { Int(sf_writef_double(handle, $0.baseAddress, sf_count_t(count))) }
        }
        guard written == count else {
            throw IOError.writeFailed(path: path, reason: Self.reason(sf_strerror(handle)))
        }
        frames += count
    }

    /// Appends frames given one array a channel (all the same length).
    package func write(channels samples: [[Double]]) throws {
        precondition(samples.count == channels, "one array a channel")
        let count = samples.first?.count ?? 0
        precondition(samples.allSatisfy { $0.count == count }, "every channel must have the same length")
        var interleaved = [Double](repeating: 0, count: count * channels)
        for (channel, channelSamples) in samples.enumerated() {
            for (frame, sample) in channelSamples.enumerated() { interleaved[frame * channels + channel] = sample }
        }
        try write(interleaved: interleaved)
    }

    /// Finishes the file (header, trailing blocks) and reports whether that worked.
    /// Files opened for writing should end with this; deinit closes silently.
    package func close() throws {
        guard let handle else { return }
        self.handle = nil
        let status = sf_close(handle)
        if status != 0 {
            throw IOError.writeFailed(path: path, reason: Self.reason(sf_error_number(status)))
        }
    }

    private func openHandle(forWriting: Bool) throws -> OpaquePointer {
        precondition(forWriting == isWriting, forWriting ? "file is open for reading" : "file is open for writing")
        guard let handle else { throw IOError.readFailed(path: path, reason: "file is already closed") }
        return handle
    }

    private static func lastOpenError() -> String {
        reason(sf_strerror(nil))
    }

    /// A libsndfile message as the reason in one of ours: without the closing full stop, and without the
    /// "System error : " wrapper when it only carries the system's own message (such as a full disk's).
    private static func reason(_ message: UnsafePointer<CChar>) -> String {
        var reason = Substring(String(cString: message))
        let wrapper = "System error : "
        if reason.hasPrefix(wrapper) && reason.count > wrapper.count { reason = reason.dropFirst(wrapper.count) }
        if reason.hasSuffix(".") { reason = reason.dropLast() }
        return String(reason)
    }
}
