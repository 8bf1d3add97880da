/// Headerless interleaved PCM, described the way sox describes it:
/// `-t raw -r RATE -c CHANNELS -e signed|unsigned|float -b BITS [-L|-B]`.
///
/// Integer samples convert to and from doubles exactly as sox converts them, bit for bit:
/// - reading, an integer x of `bits` bits means x / 2^(bits-1), unsigned ones offset by half their range
///   first, so both cover [-1, 1);
/// - writing, a double is rounded to sox's 32-bit sample (nearest, ties away from zero), then to `bits`
///   (nearest, ties up). Samples beyond full scale are clamped and counted as clipped; like sox, that
///   includes exactly +1.0 below 32 bits, whose top code is a step short of it. Not-a-number is written
///   as silence and counted as clipped.
///
/// Floats are read and written as they are, never clipped (sox would round them to its 32-bit samples).
package struct RawPCMFormat: Equatable, Sendable, CustomStringConvertible {
    package enum Encoding: String, CaseIterable, Sendable {
        case signed, unsigned, float
    }

    package enum Endianness: String, CaseIterable, Sendable {
        case little, big
    }

    package let sampleRate: Int
    package let channels: Int
    package let encoding: Encoding
    package let bits: Int
    package let endianness: Endianness

    /// libsndfile's limit, so that raw streams and audio files accept the same channel counts.
    package static let maxChannels = 1024

    /// What keeps a description from being a format; each says what the value is and what it must be.
    package enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case sampleRate(Int)
        case channels(Int)
        case bits(Int, encoding: Encoding)

        package var description: String {
            switch self {
            case .sampleRate(let rate):
                return "sample rate \(rate) is not positive"
            case .channels(let count):
                return "\(count) channels is not from 1 to \(RawPCMFormat.maxChannels)"
            case .bits(let bits, let encoding):
                let allowed = RawPCMFormat.allowedBits(for: encoding).map(String.init)
                let choices = allowed.dropLast().joined(separator: ", ") + " or " + allowed[allowed.count - 1]
                return "\(encoding) samples must be \(choices) bits (got \(bits))"
            }
        }
    }

    /// Fails with `IOError.invalidRawFormat`, naming the first thing wrong.
    package init(sampleRate: Int, channels: Int, encoding: Encoding, bits: Int, endianness: Endianness = .little) throws {
        guard sampleRate > 0 else { throw IOError.invalidRawFormat(.sampleRate(sampleRate)) }
        guard (1...Self.maxChannels).contains(channels) else { throw IOError.invalidRawFormat(.channels(channels)) }
        guard Self.allowedBits(for: encoding).contains(bits) else {
            throw IOError.invalidRawFormat(.bits(bits, encoding: encoding))
        }
        self.sampleRate = sampleRate
        self.channels = channels
        self.encoding = encoding
        self.bits = bits
        self.endianness = endianness
    }

    /// Sample sizes an encoding allows: sox's, less 64-bit integers, which a double cannot hold exactly.
    static func allowedBits(for encoding: Encoding) -> [Int] {
        encoding == .float ? [32, 64] : [8, 16, 24, 32]
    }

    /// The largest sample value written without clipping: the top integer code for integers, 1 for floats.
    package var fullScale: Double {
        encoding == .float ? 1 : Self.integerFullScale(bits: bits)
    }

    /// The top code of a `bits`-bit integer as a sample value: a step short of 1.
    static func integerFullScale(bits: Int) -> Double {
        let steps = Double(1 << (bits - 1))
        return (steps - 1) / steps
    }

    package var bytesPerSample: Int { bits / 8 }
    package var bytesPerFrame: Int { bytesPerSample * channels }

    /// Such as "signed 16-bit little-endian, 2 channels at 48000 Hz".
    package var description: String {
        let order = bits == 8 ? "" : " \(endianness)-endian"
        let channelCount = channels == 1 ? "1 channel" : "\(channels) channels"
        return "\(encoding) \(bits)-bit\(order), \(channelCount) at \(sampleRate) Hz"
    }
}

// MARK: Sample conversion

extension RawPCMFormat {
    /// Converts every whole sample in `bytes` into `samples`, which holds exactly that many.
    func decode(_ bytes: UnsafeRawBufferPointer, into samples: UnsafeMutableBufferPointer<Double>) {
        precondition(samples.count * bytesPerSample <= bytes.count, "too few bytes for the samples")
        let codec = SampleCodec(self)
        // Widths with an integer type of their own load a sample in one access instead of byte by byte.
        switch bytesPerSample {
        case 2: decode(bytes, into: samples, codec: codec, as: UInt16.self)
        case 4: decode(bytes, into: samples, codec: codec, as: UInt32.self)
        case 8: decode(bytes, into: samples, codec: codec, as: UInt64.self)
        default:
            for index in samples.indices {
                samples[index] = codec.value(of: codec.load(from: bytes, at: index * bytesPerSample))
            }
        }
    }

    private func decode<Code: FixedWidthInteger & UnsignedInteger>(
        _ bytes: UnsafeRawBufferPointer, into samples: UnsafeMutableBufferPointer<Double>, codec: SampleCodec,
        as _: Code.Type
    ) {
        let isBigEndian = codec.isBigEndian
        for index in samples.indices {
            let stored = bytes.loadUnaligned(fromByteOffset: index * MemoryLayout<Code>.size, as: Code.self)
            let code = isBigEndian ? Code(bigEndian: stored) : Code(littleEndian: stored)
            samples[index] = codec.value(of: UInt64(code))
        }
    }

    /// Converts `samples` into `bytes`, which holds exactly enough room, and returns how many samples
    /// had to be clipped to fit the encoding.
    func encode(_ samples: UnsafeBufferPointer<Double>, into bytes: UnsafeMutableRawBufferPointer) -> Int {
        precondition(samples.count * bytesPerSample <= bytes.count, "too little room for the samples")
        let codec = SampleCodec(self)
        switch bytesPerSample {
        case 2: return encode(samples, into: bytes, codec: codec, as: UInt16.self)
        case 4: return encode(samples, into: bytes, codec: codec, as: UInt32.self)
        case 8: return encode(samples, into: bytes, codec: codec, as: UInt64.self)
        default:
            var clipped = 0
            for (index, sample) in samples.enumerated() {
                codec.store(codec.code(of: sample, clipped: &clipped), into: bytes, at: index * bytesPerSample)
            }
            return clipped
        }
    }

    private func encode<Code: FixedWidthInteger & UnsignedInteger>(
        _ samples: UnsafeBufferPointer<Double>, into bytes: UnsafeMutableRawBufferPointer, codec: SampleCodec,
        as _: Code.Type
    ) -> Int {
        let isBigEndian = codec.isBigEndian
        var clipped = 0
        for index in samples.indices {
            let code = Code(truncatingIfNeeded: codec.code(of: samples[index], clipped: &clipped))
            bytes.storeBytes(
                of: isBigEndian ? code.bigEndian : code.littleEndian,
                toByteOffset: index * MemoryLayout<Code>.size, as: Code.self)
        }
        return clipped
    }
}

/// One sample's stored bits (its code) to and from a double, with what that takes worked out once per format.
struct SampleCodec {
    let encoding: RawPCMFormat.Encoding
    let bits: Int
    let bytesPerSample: Int
    let isBigEndian: Bool
    /// Multiplies an integer code into [-1, 1): 2^-(bits-1), an exact power of two.
    let integerScale: Double
    /// Bits that are not part of the code in a 64-bit word.
    let unusedBits: Int
    /// Toggling the top bit turns an unsigned code into the signed one for the same sample, as sox does.
    let unsignedOffset: UInt64

    /// sox's samples are 32-bit integers; doubles reach them scaled by 2^31.
    private static let soxFullScale = 2_147_483_648.0
    private static let soxMax = Int64(Int32.max)
    private static let soxMin = Int64(Int32.min)

    init(_ format: RawPCMFormat) {
        encoding = format.encoding
        bits = format.bits
        bytesPerSample = format.bytesPerSample
        isBigEndian = format.endianness == .big
        integerScale = 1 / Double(1 << (bits - 1))
        unusedBits = 64 - bits
        unsignedOffset = encoding == .unsigned ? 1 << (bits - 1) : 0
    }

    func load(from bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var code: UInt64 = 0
        for index in 0..<bytesPerSample {
            let byte = bytes[offset + (isBigEndian ? index : bytesPerSample - 1 - index)]
            code = code << 8 | UInt64(byte)
        }
        return code
    }

    func store(_ code: UInt64, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        for index in 0..<bytesPerSample {
            let shift = 8 * (isBigEndian ? bytesPerSample - 1 - index : index)
            bytes[offset + index] = UInt8(truncatingIfNeeded: code >> shift)
        }
    }

    func value(of code: UInt64) -> Double {
        switch encoding {
        case .float:
            return bits == 32 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: code))) : Double(bitPattern: code)
        case .signed, .unsigned:
            let signed = Int64(bitPattern: (code ^ unsignedOffset) << unusedBits) >> unusedBits
            return Double(signed) * integerScale
        }
    }

    /// Floats are stored as they are; integers are rounded and clipped as sox writes them.
    func code(of sample: Double, clipped: inout Int) -> UInt64 {
        switch encoding {
        case .float:
            return bits == 32 ? UInt64(Float(sample).bitPattern) : sample.bitPattern
        case .signed, .unsigned:
            var isClipped = false
            let integer = narrowed(soxSample(sample, isClipped: &isClipped), isClipped: &isClipped)
            if isClipped { clipped += 1 }
            return (UInt64(bitPattern: integer) & (UInt64.max >> unusedBits)) ^ unsignedOffset
        }
    }

    /// A signed integer sample rounded and clipped as sox writes it at `bits`, left-aligned in 32 bits:
    /// the form libsndfile's integer interface takes for every PCM width.
    func leftAlignedInteger(of sample: Double, clipped: inout Int) -> Int32 {
        var isClipped = false
        let integer = narrowed(soxSample(sample, isClipped: &isClipped), isClipped: &isClipped)
        if isClipped { clipped += 1 }
        return Int32(truncatingIfNeeded: integer << (32 - bits))
    }

    /// sox's first step: scale by 2^31 and round half away from zero into its 32-bit sample, clamping.
    /// sox takes exactly +1.0 as full scale, not as a clip. Not-a-number becomes silence, counted as clipped.
    private func soxSample(_ sample: Double, isClipped: inout Bool) -> Int64 {
        let scaled = sample * Self.soxFullScale
        if scaled.isNaN {
            isClipped = true
            return 0
        }
        if scaled < 0 {
            guard scaled > Double(Self.soxMin) - 0.5 else {
                isClipped = true
                return Self.soxMin
            }
            return Int64(scaled - 0.5)
        }
        guard scaled < Double(Self.soxMax) + 0.5 else {
            if scaled > Self.soxFullScale { isClipped = true }
            return Self.soxMax
        }
        return Int64(scaled + 0.5)
    }

    /// sox's second step down to `bits`: add half a step and drop the low bits, clamping at the top.
    private func narrowed(_ soxSample: Int64, isClipped: inout Bool) -> Int64 {
        guard bits < 32 else { return soxSample }
        let halfStep = Int64(1) << (31 - bits)
        guard soxSample <= Self.soxMax - halfStep else {
            isClipped = true
            return (Int64(1) << (bits - 1)) - 1
        }
        return (soxSample + halfStep) >> (32 - bits)
    }
}
