import Foundation
import Testing
import TestSupport
@testable import KoeIO

@Suite struct RawPCMTests {
    static let allFormats: [(RawPCMFormat.Encoding, Int, RawPCMFormat.Endianness)] =
        RawPCMFormat.Encoding.allCases.flatMap { encoding in
            RawPCMFormat.allowedBits(for: encoding).flatMap { bits in
                RawPCMFormat.Endianness.allCases.map { (encoding, bits, $0) }
            }
        }

    private func format(
        _ encoding: RawPCMFormat.Encoding, _ bits: Int, _ endianness: RawPCMFormat.Endianness = .little, channels: Int = 1
    ) throws -> RawPCMFormat {
        try RawPCMFormat(sampleRate: 16000, channels: channels, encoding: encoding, bits: bits, endianness: endianness)
    }

    /// Noise the format holds exactly: integers on the grid of its steps (full scale both ways included),
    /// floats at its precision (beyond ±1 too, which floats keep).
    private func exactlyHeld(by format: RawPCMFormat, count: Int) -> [Double] {
        let noise = Signals.whiteNoise(count: count - 3, amplitude: 1, seed: UInt64(format.bits))
        switch format.encoding {
        case .float:
            let values = [-1.5, 0, 1.5] + noise
            return format.bits == 32 ? values.map { Double(Float($0)) } : values
        case .signed, .unsigned:
            let steps = Double(1 << (format.bits - 1))
            let codes = [-steps, 0, steps - 1] + noise.map { min(($0 * steps).rounded(.down), steps - 1) }
            return codes.map { $0 / steps }
        }
    }

    // MARK: Format

    @Test func formatNamesWhatIsWrong() {
        let refusals: [(rate: Int, channels: Int, encoding: RawPCMFormat.Encoding, bits: Int, message: String)] = [
            (0, 1, .signed, 16, "sample rate 0 is not positive"),
            (16000, 0, .signed, 16, "0 channels is not from 1 to 1024"),
            (16000, 1025, .signed, 16, "1025 channels is not from 1 to 1024"),
            (16000, 1, .float, 16, "float samples must be 32 or 64 bits (got 16)"),
            (16000, 1, .unsigned, 64, "unsigned samples must be 8, 16, 24 or 32 bits (got 64)"),
            (16000, 1, .signed, 12, "signed samples must be 8, 16, 24 or 32 bits (got 12)"),
        ]
        for refusal in refusals {
            #expect(performing: {
                try RawPCMFormat(
                    sampleRate: refusal.rate, channels: refusal.channels, encoding: refusal.encoding, bits: refusal.bits)
            }, throws: { ($0 as? IOError)?.description == refusal.message })
        }
    }

    @Test func frameSizeAndDescription() throws {
        let stereo24 = try format(.signed, 24, .big, channels: 2)
        #expect(stereo24.bytesPerSample == 3)
        #expect(stereo24.bytesPerFrame == 6)
        #expect(stereo24.description == "signed 24-bit big-endian, 2 channels at 16000 Hz")
        #expect(try format(.unsigned, 8).description == "unsigned 8-bit, 1 channel at 16000 Hz")
    }

    // MARK: Round trips

    @Test(arguments: allFormats)
    func roundTripThroughPipesInOddPieces(
        encoding: RawPCMFormat.Encoding, bits: Int, endianness: RawPCMFormat.Endianness
    ) throws {
        let format = try format(encoding, bits, endianness, channels: 3)
        let samples = exactlyHeld(by: format, count: 3 * 150)
        let bytes = try written(samples, as: format, chunkFrames: 37)
        #expect(bytes.count == samples.count * format.bytesPerSample)
        let (chunks, reader) = try readBack(bytes, as: format, pieces: [1, 5, 2, 7, 11, 3], maxFrames: 40)
        #expect(chunks.joined().elementsEqual(samples))
        #expect(chunks.allSatisfy { !$0.isEmpty && $0.count <= 40 * 3 && $0.count % 3 == 0 })
        #expect(reader.framesRead == 150)
    }

    @Test func readerPassesOnWhatHasArrivedAndKeepsPartFrames() throws {
        let format = try format(.signed, 16, channels: 2)
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd) }
        let reader = RawPCMReader(format: format, descriptor: readEnd)
        let frames: [UInt8] = [0x00, 0x40, 0x00, 0xC0, 0x00, 0x20, 0x00, 0xE0]
        _ = frames[..<6].withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        #expect(try reader.read(maxFrames: 100) == [0.5, -0.5], "one frame and a half are there: no waiting for 100")
        _ = frames[6...].withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        close(writeEnd)
        #expect(try reader.read(maxFrames: 100) == [0.25, -0.25])
        #expect(try reader.read(maxFrames: 100) == nil)
        #expect(reader.framesRead == 2)
    }

    @Test func readerTellsWhetherInputIsWaiting() throws {
        let format = try format(.signed, 16)
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd) }
        let reader = RawPCMReader(format: format, descriptor: readEnd)
        #expect(!reader.hasInputWaiting, "nothing written yet")
        let frame: [UInt8] = [0x00, 0x40]
        _ = frame.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        #expect(reader.hasInputWaiting)
        #expect(try reader.read(maxFrames: 10) == [0.5])
        #expect(!reader.hasInputWaiting, "everything written has been read")
        close(writeEnd)
        #expect(reader.hasInputWaiting, "the end of the stream is there to read")
    }

    @Test func readerWaitsOnANonBlockingPipe() throws {
        let format = try format(.signed, 16, channels: 2)
        let samples = exactlyHeld(by: format, count: 2 * 300)
        let bytes = try written(samples, as: format, chunkFrames: 300)
        let (chunks, _) = try readBack(bytes, as: format, pieces: [13, 64], maxFrames: 1000, nonBlocking: true)
        #expect(chunks.joined().elementsEqual(samples))
    }

    @Test func writerLoopsOverPartialWritesToANonBlockingPipe() throws {
        let format = try format(.float, 64)
        let samples = Signals.whiteNoise(count: 100_000, seed: 7)
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd) }
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
        let received = ByteCollector()
        let drained = startThread { received.drain(readEnd, pieceSize: 4093) }
        let writer = RawPCMWriter(format: format, descriptor: writeEnd)
        try writer.write(interleaved: samples)
        close(writeEnd)
        drained.wait()
        #expect(received.bytes.count == samples.count * 8, "800 kB is many times what a pipe holds at once")
        #expect(received.bytes == samples.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init) })
        #expect(writer.framesWritten == samples.count)
    }

    // MARK: Exact values

    @Test func integerExtremesReadAsSoxScalesThem() throws {
        #expect(try decoded([0x00, 0x80, 0xFF, 0x7F, 0x00, 0x00, 0xFF, 0xFF], as: format(.signed, 16))
            == [-1, 32767.0 / 32768, 0, -1.0 / 32768])
        #expect(try decoded([0x00, 0x80, 0xFF, 0x7F], as: format(.unsigned, 8)) == [-1, 0, 127.0 / 128, -1.0 / 128])
        #expect(try decoded([0x00, 0x00, 0x80, 0xFF, 0xFF, 0x7F], as: format(.signed, 24)) == [-1, 8_388_607.0 / 8_388_608])
        #expect(try decoded([0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF], as: format(.unsigned, 32))
            == [-1, 2_147_483_647.0 / 2_147_483_648])
        #expect(try decoded([0x00, 0x00, 0x00, 0x80], as: format(.signed, 32)) == [-1])
    }

    @Test func fullScaleWritesAsTheExtremeCodes() throws {
        let signed16 = try format(.signed, 16)
        #expect(encoded([-1, 32767.0 / 32768, 0], as: signed16).bytes == [0x00, 0x80, 0xFF, 0x7F, 0x00, 0x00])
        #expect(try encoded([-1, 0, 127.0 / 128], as: format(.unsigned, 8)).bytes == [0x00, 0x80, 0xFF])
        let signed32 = try encoded([1.0, -1.0], as: format(.signed, 32))
        #expect(signed32.bytes == [0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x00, 0x80])
        #expect(signed32.clipped == 0, "sox takes exactly +1.0 as full scale at 32 bits")
    }

    @Test func integersRoundToTheNearestStepWithTiesUp() throws {
        let step = 1.0 / 32768
        let values = [0.4 * step, 0.6 * step, 0.5 * step, -0.5 * step, -0.6 * step, 2.5 * step]
        let written = try encoded(values, as: format(.signed, 16, .big))
        #expect(written.bytes == [0, 0, 0, 1, 0, 1, 0, 0, 0xFF, 0xFF, 0, 3])
    }

    @Test func bigEndianAndTwentyFourBitPacking() throws {
        let code = 0x123456
        let value = Double(code) / 8_388_608
        #expect(try encoded([value], as: format(.signed, 24, .little)).bytes == [0x56, 0x34, 0x12])
        #expect(try encoded([value], as: format(.signed, 24, .big)).bytes == [0x12, 0x34, 0x56])
        #expect(try encoded([-1.0 / 8_388_608], as: format(.signed, 24, .big)).bytes == [0xFF, 0xFF, 0xFF])
        #expect(try encoded([0.5], as: format(.signed, 16, .big)).bytes == [0x40, 0x00])
        #expect(try encoded([0.5], as: format(.signed, 16, .little)).bytes == [0x00, 0x40])
        #expect(try encoded([0], as: format(.unsigned, 16, .big)).bytes == [0x80, 0x00])
        #expect(try encoded([1], as: format(.float, 32, .big)).bytes == [0x3F, 0x80, 0x00, 0x00])
        #expect(try encoded([-2], as: format(.float, 64, .big)).bytes == [0xC0, 0, 0, 0, 0, 0, 0, 0])
        #expect(try decoded([0x12, 0x34, 0x56, 0xFF, 0xFF, 0xFE], as: format(.signed, 24, .big)) == [value, -2.0 / 8_388_608])
        #expect(try decoded([0x3F, 0x80, 0x00, 0x00], as: format(.float, 32, .big)) == [1])
    }

    // MARK: Clipping

    @Test func integersClipAndCountWhatWouldNotFit() throws {
        let written = try encoded([1.5, -1.5, 0.5, 1.0, -1.0, .nan, .infinity, 32767.6 / 32768], as: format(.signed, 16))
        let codes = stride(from: 0, to: written.bytes.count, by: 2).map {
            Int16(bitPattern: UInt16(written.bytes[$0]) | UInt16(written.bytes[$0 + 1]) << 8)
        }
        #expect(codes == [32767, -32768, 16384, 32767, -32768, 0, 32767, 32767])
        #expect(written.clipped == 6, "1.5, -1.5, 1.0, NaN, infinity and a value that rounds past the top")
        let unsigned = try encoded([2, -2, 0], as: format(.unsigned, 8))
        #expect(unsigned.bytes == [0xFF, 0x00, 0x80])
        #expect(unsigned.clipped == 2)
    }

    @Test func floatsPassThroughUnclipped() throws {
        let written = try encoded([1.5, -3], as: format(.float, 64))
        #expect(written.clipped == 0)
        #expect(try decoded(written.bytes, as: format(.float, 64)) == [1.5, -3])
    }

    @Test func clippedSamplesAddUpAcrossWrites() throws {
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd); close(writeEnd) }
        let writer = try RawPCMWriter(format: format(.signed, 8, channels: 2), descriptor: writeEnd)
        try writer.write(interleaved: [2, 0, 0, -2])
        try writer.write(interleaved: [0.5, 1.1])
        #expect(writer.clippedSamples == 3)
        #expect(writer.framesWritten == 3)
    }

    // MARK: Ends of streams

    @Test func strayBytesAtTheEndAreAnError() throws {
        let format = try format(.signed, 16, channels: 2)
        let bytes = try written([0.5, -0.5, 0.25, -0.25], as: format, chunkFrames: 2) + [1, 2, 3]
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd) }
        _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        close(writeEnd)
        let reader = RawPCMReader(format: format, descriptor: readEnd)
        #expect(try reader.read(maxFrames: 100) == [0.5, -0.5, 0.25, -0.25])
        let error = IOError.strayBytes(path: "standard input", count: 3, bytesPerFrame: 4)
        #expect(throws: error) { try reader.read(maxFrames: 100) }
        #expect(error.description
            == "standard input: raw audio ends with 3 stray bytes after the last whole 4-byte frame; check the raw format")
        #expect(try reader.read(maxFrames: 100) == nil)
    }

    @Test func emptyStreamEndsAtOnceWithNoFrames() throws {
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd) }
        close(writeEnd)
        let reader = try RawPCMReader(format: format(.float, 32), descriptor: readEnd)
        #expect(try reader.read(maxFrames: 4096) == nil)
        #expect(reader.framesRead == 0)
        #expect(try reader.read(maxFrames: 4096) == nil)
    }

    @Test func closedReaderIsABrokenPipe() throws {
        RawPCMWriter.ignoreBrokenPipeSignal()
        let (readEnd, writeEnd) = makePipe()
        defer { close(writeEnd) }
        close(readEnd)
        let writer = try RawPCMWriter(format: format(.signed, 16), descriptor: writeEnd, name: "out")
        #expect(throws: IOError.brokenPipe(path: "out")) { try writer.write(interleaved: [0.1, 0.2]) }
        #expect(writer.framesWritten == 0)
    }

    @Test func readFailureNamesTheStream() throws {
        let folder = TemporaryFolder()
        let descriptor = open(folder.path, O_RDONLY)
        defer { close(descriptor) }
        let reader = try RawPCMReader(format: format(.signed, 16), descriptor: descriptor, name: "in")
        #expect(throws: IOError.readFailed(path: "in", reason: "Is a directory")) { try reader.read(maxFrames: 10) }
    }

    // MARK: Against sox

    static let sox = ["/usr/bin/sox", "/usr/local/bin/sox"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static let soxFormats: [(RawPCMFormat.Encoding, Int, RawPCMFormat.Endianness)] =
        [(.signed, 16, .little), (.unsigned, 8, .little), (.signed, 24, .big), (.signed, 32, .little), (.unsigned, 16, .big)]

    @Test(.enabled(if: sox != nil, "sox is not installed"), arguments: soxFormats)
    func readsIntegersAsSoxDoes(encoding: RawPCMFormat.Encoding, bits: Int, endianness: RawPCMFormat.Endianness) throws {
        let format = try format(encoding, bits, endianness)
        let bytes = (0..<4000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 7) } + [0x00, 0x80, 0xFF, 0x7F]
        let usable = Array(bytes.prefix(bytes.count / format.bytesPerSample * format.bytesPerSample))
        let soxDoubles = try runSox(
            on: usable, input: Self.soxArguments(format), output: ["-t", "f64", "-L"]
        ).withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
        let ours = decoded(usable, as: format)
        try #require(ours.count == soxDoubles.count)
        let differing = zip(ours, soxDoubles).filter { $0 != $1 }.count
        #expect(differing == 0, "\(differing) of \(ours.count) samples differ from sox's")
    }

    @Test(.enabled(if: sox != nil, "sox is not installed"), arguments: soxFormats)
    func writesIntegersAsSoxDoes(encoding: RawPCMFormat.Encoding, bits: Int, endianness: RawPCMFormat.Endianness) throws {
        let format = try format(encoding, bits, endianness)
        let step = 1 / Double(1 << (bits - 1))
        // Halfway between steps and a hair either side, where rounding once would differ from sox's two roundings.
        let nearTies = (-40...40).flatMap { k in [-1e-7, 0, 1e-7].map { (Double(k) + 0.5 + $0) * step } }
        let extremes = [1, -1, 1 - step / 2, -1 - step]
        let samples = Signals.whiteNoise(count: 3000, amplitude: 1.2, seed: 3) + nearTies + extremes
        let doubles = samples.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian, Array.init) }
        let soxBytes = try runSox(
            on: doubles, input: ["-t", "f64", "-L", "-r", "16000", "-c", "1"], output: Self.soxArguments(format)
        )
        let ours = encoded(samples, as: format).bytes
        try #require(ours.count == soxBytes.count)
        let size = format.bytesPerSample
        let differing = samples.indices.filter { ours[$0 * size..<($0 + 1) * size] != soxBytes[$0 * size..<($0 + 1) * size] }
        let count = differing.count
        let first = differing.first.map { samples[$0] } ?? 0
        #expect(count == 0, "\(count) of \(samples.count) samples differ from sox's, the first \(first)")
    }

    private static func soxArguments(_ format: RawPCMFormat) -> [String] {
        ["-t", "raw", "-r", String(format.sampleRate), "-c", String(format.channels), "-e", format.encoding.rawValue,
         "-b", String(format.bits), format.endianness == .big ? "-B" : "-L"]
    }

    /// `sox` without dither from a file of `bytes` to a file, whose bytes are returned.
    private func runSox(on bytes: [UInt8], input: [String], output: [String]) throws -> [UInt8] {
        let folder = TemporaryFolder()
        let source = folder.write(bytes, to: "in.raw")
        let destination = folder.file("out.raw")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.sox!)
        process.arguments = ["-D", "-V1"] + input + [source] + output + [destination]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return Array(FileManager.default.contents(atPath: destination) ?? Data())
    }

    // MARK: Helpers

    /// Close-on-exec: a process another test starts meanwhile must not hold an end open (a closed reader would
    /// then not be one).
    private func makePipe() -> (readEnd: Int32, writeEnd: Int32) {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0, "cannot make a pipe")
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// The bytes a writer puts into a pipe for `samples`, given `chunkFrames` frames a call.
    private func written(_ samples: [Double], as format: RawPCMFormat, chunkFrames: Int) throws -> [UInt8] {
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd) }
        let collected = ByteCollector()
        let drained = startThread { collected.drain(readEnd, pieceSize: 1000) }
        let writer = RawPCMWriter(format: format, descriptor: writeEnd)
        let chunkSamples = chunkFrames * format.channels
        for start in stride(from: 0, to: samples.count, by: chunkSamples) {
            try writer.write(interleaved: Array(samples[start..<min(start + chunkSamples, samples.count)]))
        }
        close(writeEnd)
        drained.wait()
        return collected.bytes
    }

    /// What a reader returns, chunk by chunk, for `bytes` fed into a pipe from another thread in pieces of
    /// the sizes given (in turn), pausing after each so the reader sees them one by one.
    private func readBack(
        _ bytes: [UInt8], as format: RawPCMFormat, pieces: [Int], maxFrames: Int, nonBlocking: Bool = false
    ) throws -> (chunks: [[Double]], reader: RawPCMReader) {
        let (readEnd, writeEnd) = makePipe()
        defer { close(readEnd) }
        if nonBlocking { _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK) }
        let fed = startThread {
            var start = 0
            var piece = 0
            while start < bytes.count {
                let end = min(start + pieces[piece % pieces.count], bytes.count)
                piece += 1
                _ = bytes[start..<end].withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
                start = end
                usleep(50)
            }
            close(writeEnd)
        }
        let reader = RawPCMReader(format: format, descriptor: readEnd)
        var chunks: [[Double]] = []
        while let chunk = try reader.read(maxFrames: maxFrames) { chunks.append(chunk) }
        fed.wait()
        return (chunks, reader)
    }

    private func encoded(_ samples: [Double], as format: RawPCMFormat) -> (bytes: [UInt8], clipped: Int) {
        var bytes = [UInt8](repeating: 0, count: samples.count * format.bytesPerSample)
        let clipped = samples.withUnsafeBufferPointer { samples in
            bytes.withUnsafeMutableBytes { format.encode(samples, into: $0) }
        }
        return (bytes, clipped)
    }

    private func decoded(_ bytes: [UInt8], as format: RawPCMFormat) -> [Double] {
        var samples = [Double](repeating: .nan, count: bytes.count / format.bytesPerSample)
        samples.withUnsafeMutableBufferPointer { samples in
            bytes.withUnsafeBytes { format.decode($0, into: samples) }
        }
        return samples
    }

    /// Runs `body` on a thread of its own; waiting on the result returns once it has finished.
    private func startThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let finished = DispatchSemaphore(value: 0)
        Thread {
            body()
            finished.signal()
        }.start()
        return finished
    }
}

/// Bytes read from a pipe by another thread; `bytes` is read only after that thread has finished.
private final class ByteCollector: @unchecked Sendable {
    private(set) var bytes: [UInt8] = []

    /// Reads `descriptor` to its end, at most `pieceSize` bytes at a time.
    func drain(_ descriptor: Int32, pieceSize: Int) {
        var piece = [UInt8](repeating: 0, count: pieceSize)
        while true {
            let got = piece.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, pieceSize) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return }
            bytes += piece[..<got]
        }
    }
}
