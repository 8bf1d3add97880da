import Foundation
import KoeIO

/// One fuzz input: eight header bytes choose a raw format (impossible ones too), the frames asked for per
/// read and the size of the pieces the pipe is fed in; the rest is the stream.
private struct RawCase {
    let sampleRate: Int
    let channels: Int
    let encoding: RawPCMFormat.Encoding
    let bits: Int
    let endianness: RawPCMFormat.Endianness
    let maxFrames: Int
    let pieceSize: Int
    let stream: [UInt8]

    /// Sizes that sox knows and some it does not, so that `RawPCMFormat` is asked about both.
    private static let bitChoices = [8, 16, 24, 32, 64, 0, 12, 128]

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return nil }
        sampleRate = Int(Int8(bitPattern: bytes[0])) * 1000
        channels = Int(bytes[1] % 16)
        encoding = RawPCMFormat.Encoding.allCases[Int(bytes[2]) % RawPCMFormat.Encoding.allCases.count]
        bits = Self.bitChoices[Int(bytes[3]) % Self.bitChoices.count]
        endianness = bytes[4] & 1 == 0 ? .little : .big
        maxFrames = 1 + Int(bytes[5])
        pieceSize = 1 + Int(bytes[6]) * 8 + Int(bytes[7] % 8)
        stream = Array(bytes[8...])
    }
}

/// Sample values decoded without the code under test: sign extension and a power-of-two scale for integers,
/// the IEEE bit pattern for floats.
private func referenceSamples(_ bytes: ArraySlice<UInt8>, _ format: RawPCMFormat) -> [Double] {
    let size = format.bytesPerSample
    return stride(from: bytes.startIndex, to: bytes.endIndex - size + 1, by: size).map { start in
        let sample = bytes[start..<start + size]
        let mostSignificantFirst = format.endianness == .big || size == 1 ? Array(sample) : sample.reversed()
        let code = mostSignificantFirst.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let fullScale = Double(sign: .plus, exponent: format.bits - 1, significand: 1)
        switch format.encoding {
        case .float:
            return format.bits == 32 ? Double(Float(bitPattern: UInt32(code))) : Double(bitPattern: code)
        case .signed:
            let unused = UInt64(64 - format.bits)
            return Double(Int64(bitPattern: code << unused) >> Int64(unused)) / fullScale
        case .unsigned:
            return (Double(code) - fullScale) / fullScale
        }
    }
}

/// Stops the run with `message` when `condition` fails, in every build configuration.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

private func sameSamples(_ a: [Double], _ b: [Double]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }
}

/// Feeds `bytes` into a pipe in pieces from another thread while `RawPCMReader` reads the other end, so reads
/// return short and split frames as a live pipe does. Returns the samples read and the error, if any.
private func readThroughPipe(_ bytes: [UInt8], pieceSize: Int, format: RawPCMFormat, maxFrames: Int) -> ([Double], IOError?) {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { fatalError("pipe: \(String(cString: strerror(errno)))") }
    let (readEnd, writeEnd) = (ends[0], ends[1])
    let written = DispatchSemaphore(value: 0)
    Thread {
        var done = 0
        while done < bytes.count {
            let count = min(pieceSize, bytes.count - done)
            let wrote = bytes.withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress! + done, count) }
            guard wrote > 0 else { fatalError("feeding the pipe failed: \(String(cString: strerror(errno)))") }
            done += wrote
        }
        close(writeEnd)
        written.signal()
    }.start()
    let reader = RawPCMReader(format: format, descriptor: readEnd, name: "fuzz")
    var samples: [Double] = []
    var failure: IOError?
    do {
        while let chunk = try reader.read(maxFrames: maxFrames) {
            require(chunk.count % format.channels == 0 && !chunk.isEmpty, "a read returned a partial or empty frame")
            require(chunk.count <= maxFrames * format.channels, "a read returned more frames than asked for")
            samples += chunk
        }
        require(try reader.read(maxFrames: maxFrames) == nil, "reading past the end returned audio")
    } catch let error as IOError {
        failure = error
    } catch {
        fatalError("unexpected error type: \(error)")
    }
    require(reader.framesRead * format.channels == samples.count, "framesRead disagrees with the samples returned")
    written.wait()
    close(readEnd)
    return (samples, failure)
}

/// Writes `samples` with `RawPCMWriter` into a temporary file and returns the bytes it holds.
private func writtenBytes(_ samples: [Double], format: RawPCMFormat) -> (bytes: [UInt8], clipped: Int) {
    guard let file = tmpfile() else { fatalError("tmpfile: \(String(cString: strerror(errno)))") }
    defer { fclose(file) }
    let writer = RawPCMWriter(format: format, descriptor: fileno(file), name: "fuzz")
    do {
        try writer.write(interleaved: samples)
    } catch {
        fatalError("writing to a file failed: \(error)")
    }
    let size = Int(lseek(fileno(file), 0, SEEK_END))
    var bytes = [UInt8](repeating: 0, count: size)
    let got = bytes.withUnsafeMutableBytes { pread(fileno(file), $0.baseAddress, size, 0) }
    require(got == size, "reading back the written file failed")
    return (bytes, writer.clippedSamples)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRawPCM(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let input = RawCase(Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    let format: RawPCMFormat
    do {
        format = try RawPCMFormat(
            sampleRate: input.sampleRate, channels: input.channels, encoding: input.encoding, bits: input.bits,
            endianness: input.endianness)
    } catch let error as IOError {
        guard case .invalidRawFormat(let problem) = error, case let reason = problem.description, !reason.isEmpty,
              !reason.contains("\n") else {
            fatalError("a refused format must give a one-line reason: \(error)")
        }
        return 0
    } catch {
        fatalError("unexpected error type: \(error)")
    }

    let (samples, failure) = readThroughPipe(input.stream, pieceSize: input.pieceSize, format: format, maxFrames: input.maxFrames)
    let wholeBytes = input.stream.count - input.stream.count % format.bytesPerFrame
    let stray = input.stream.count - wholeBytes
    if stray == 0 {
        require(failure == nil, "a stream of whole frames failed: \(failure!)")
    } else {
        require(failure == .strayBytes(path: "fuzz", count: stray, bytesPerFrame: format.bytesPerFrame),
                     "\(stray) stray bytes reported as \(String(describing: failure))")
    }
    let expected = referenceSamples(input.stream[..<wholeBytes], format)
    require(sameSamples(samples, expected), "decoded samples differ from the reference decoding")

    let (bytes, clipped) = writtenBytes(samples, format: format)
    require(clipped == 0, "samples read from a stream were clipped when written back")
    if format.encoding == .float {
        require(sameSamples(referenceSamples(bytes[...], format), expected), "floats changed on a round trip")
    } else {
        require(bytes[...] == input.stream[..<wholeBytes], "integer samples changed on a round trip")
    }
    return 0
}
