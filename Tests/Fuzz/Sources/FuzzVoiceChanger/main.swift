import Koe

// `VoiceChanger` driven through `import Koe` alone, as a caller drives it: the fuzzer's bytes choose a sample rate
// and channel count (impossible ones too), analysis options, then a run of operations in any order: blocks of
// any size and content (NaN and infinity included) through every `process` form, settings changes to any value
// (snap, vibrato, pitch curve and limiter included), presets by any name, `finish` and `reset`. Anything may throw; nothing may trap. What the changer promises
// is checked too: as many frames out as in, `latency` frames from `finish`, refusals after it, and finite output
// while the stream's input stays within full scale.

/// Stops the run with `message` when `condition` fails, in every build configuration.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// The fuzzer's bytes, read front to back; past the end every read gives 0.
private struct Bytes {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isEmpty: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func uint32() -> UInt32 {
        (0..<4).reduce(UInt32(0)) { value, _ in value << 8 | UInt32(byte()) }
    }

    mutating func uint64() -> UInt64 {
        UInt64(uint32()) << 32 | UInt64(uint32())
    }

    mutating func pick<Value>(_ values: [Value]) -> Value {
        values[Int(byte()) % values.count]
    }

    /// Mostly values a slider or a host might send, odd ones included; now and then any bit pattern.
    mutating func setting(around usual: [Double]) -> Double {
        let odd: [Double] = [
            .nan, .infinity, -.infinity, 0, -0.0, -1, 1e-300, .leastNonzeroMagnitude, 1e9, -1e9, .greatestFiniteMagnitude,
        ]
        switch byte() % 8 {
        case 0: return Double(bitPattern: uint64())
        case 1, 2: return pick(odd)
        default: return pick(usual)
        }
    }

    /// A count for a block: mostly short, sometimes long, 0 too.
    mutating func frameCount() -> Int {
        switch byte() % 8 {
        case 0: return 0
        case 1: return Int(uint32() % 8192)
        default: return Int(byte()) * 8 + Int(byte() % 8)
        }
    }
}

private let sampleRates = [8000, 16000, 22050, 44100, 48000, 96000, 192_000, 0, -48000, 100, 7999, 192_001, Int.max, Int.min]
private let channelCounts = [1, 1, 1, 2, 2, 3, 0, -1, 1025, Int.max, Int.min]
private let presetNames = Preset.all.map(\.name) + ["", "nobody", "GIANT", "kawaii ", "\u{0}", "deep\ndeep"]

/// Input frames a run may give, so that a run stays short.
private let framesPerRun = 96_000

/// A changer and what the caller has seen of it.
private final class Session {
    let changer: VoiceChanger
    var isFinished = false
    /// Whether every sample of this stream so far was within full scale: then the output must be finite.
    var inputWithinFullScale = true
    var framesGiven = 0
    /// Where the next block's samples come from: a sawtooth, so the vocoder finds voiced frames; counted in
    /// periods.
    private var phase = 0.0

    init(_ changer: VoiceChanger) {
        self.changer = changer
    }

    /// `frames` samples of one channel: a sawtooth of about 150 Hz at 48 kHz (a period of 320 samples, shorter in
    /// later channels), and the odd sample the bytes choose.
    func samples(_ frames: Int, channel: Int, bytes: inout Bytes) -> [Double] {
        let step = Double(channel + 1) / 320
        var samples = (0..<frames).map { index -> Double in
            let position = phase * Double(channel + 1) + Double(index) * step
            return 0.5 * (2 * (position - position.rounded(.down)) - 1)
        }
        phase += Double(frames) / 320
        let odd: [Double] = [.nan, .infinity, -.infinity, 1e30, -3e38, 2, .leastNonzeroMagnitude, 0]
        while frames > 0, !bytes.isEmpty, bytes.byte() % 4 == 0 {
            let value = bytes.pick(odd)
            samples[Int(bytes.uint32()) % frames] = value
        }
        return samples
    }

    /// Counts an accepted block's frames, and whether it stayed within full scale.
    func note(_ input: [[Double]]) {
        framesGiven += input.first?.count ?? 0
        if input.contains(where: { $0.contains { !(abs($0) <= 1) } }) { inputWithinFullScale = false }
    }

    func check<Sample: BinaryFloatingPoint>(_ output: [[Sample]], frames: Int, what: String) {
        require(output.count == changer.channels, "\(what) gave \(output.count) channels of \(changer.channels)")
        for channel in output {
            require(channel.count == frames, "\(what) gave \(channel.count) frames for \(frames)")
            if inputWithinFullScale {
                require(channel.allSatisfy(\.isFinite), "\(what) made a non-finite sample of input within full scale")
            }
        }
    }

    func refusedAfterFinish(_ what: String) {
        require(isFinished, "\(what) was refused while the stream was open")
    }
}

private func makeChanger(_ bytes: inout Bytes) -> VoiceChanger? {
    let sampleRate = bytes.pick(sampleRates)
    let channels = bytes.pick(channelCounts)
    var options = VoiceChanger.Options()
    if bytes.byte() % 4 == 0 {
        options.threads = bytes.pick([1, 2, 3, 0, -1])
        options.analysis.f0Method = bytes.byte() % 8 == 0 ? .harvest : .dio
        options.analysis.framePeriod = bytes.setting(around: [5, 1, 10, 2.5, 100, 0.5])
        options.analysis.f0Floor = bytes.setting(around: [71, 40, 10, 150, 9])
        options.analysis.f0Ceil = bytes.setting(around: [800, 400, 1000, 4000, 70])
        if bytes.byte() % 2 == 0 { options.analysis.lookAhead = bytes.setting(around: [0, 80, 300, 10_000, 20_000]) }
    }
    do {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: channels, options: options)
        require(changer.channels == channels && changer.sampleRate == sampleRate, "the changer took other numbers")
        require(changer.latency >= 0, "a negative latency")
        return changer
    } catch {
        require(!error.description.isEmpty && !error.description.contains("\n"), "a refusal must be one line: \(error)")
        return nil
    }
}

private func change(_ session: Session, _ bytes: inout Bytes) {
    let changer = session.changer
    switch bytes.byte() % 14 {
    case 0: changer.voice.pitch = bytes.setting(around: [1, 1.2, 0.8, 2, 0.5, 16, 1.0 / 16, 20])
    case 1: changer.voice.formant = bytes.setting(around: [1, 1.1, 0.9, 1.8, 16, 0.01])
    case 2: changer.voice.semitones = bytes.setting(around: [0, 12, -12, 48, -48, 100, 0.5])
    case 3: changer.gainDB = bytes.setting(around: [0, -3, 6, 60, -60, 120])
    case 4: changer.voice.pitchRange = bytes.setting(around: [1, 0, 0.5, 2, 10, 11])
    case 5: changer.voice.pitchMedian = bytes.byte() % 3 == 0 ? nil : bytes.setting(around: [220, 110, 10, 5000, 9, 6000])
    case 6: changer.voice.whisper = bytes.byte() % 2 == 0
    case 7, 8:
        let count = Int(bytes.byte() % 5)
        changer.equalizer = (0..<count).map { _ in
            EqualizerBand(
                kind: bytes.pick(EqualizerBand.Kind.allCases),
                frequency: bytes.setting(around: [1000, 80, 8000, 20_000, 23_999, 24_000, 96_000, 1]),
                gainDB: bytes.setting(around: [0, 6, -6, 60, -60, 61]),
                q: bytes.byte() % 3 == 0 ? nil : bytes.setting(around: [0.707, 1.4, 0.1, 10, 0]),
                name: bytes.byte() % 4 == 0 ? "band" : nil)
        }
        require(changer.equalizer.allSatisfy { !$0.isFlat }, "the changer kept a flat band")
    case 9:
        changer.voice.snap = bytes.byte() % 3 == 0 ? nil : PitchSnap.Options(
            scale: MusicalScale(key: Int(Int8(bitPattern: bytes.byte())), mode: bytes.pick(MusicalScale.Mode.allCases)),
            strength: bytes.setting(around: [1, 0.5, 0, 1.5]), speed: bytes.setting(around: [0, 50, 10_000, 20_000]),
            a4: bytes.setting(around: [440, 400, 480, 300]))
    case 10:
        changer.voice.vibrato = bytes.byte() % 3 == 0 ? nil : Vibrato.Options(
            rate: bytes.setting(around: [5.5, 0.1, 20, 100]), depth: bytes.setting(around: [50, 0, 1200, 5000]))
    case 11:
        let points = (0..<Int(bytes.byte() % 4)).map { _ in
            PitchCurve.Point(time: bytes.setting(around: [0, 0.5, 1, 2, -1]), ratio: bytes.setting(around: [1, 2, 0.5, 16, 17]))
        }
        let curve = try? PitchCurve(points: points)
        require(curve != nil || PitchCurve.firstProblem(in: points) != nil, "a pitch curve was refused without a problem")
        if curve != nil || bytes.byte() % 2 == 0 { changer.voice.pitchCurve = curve }
    case 12:
        changer.limitsOutput = bytes.byte() % 2 == 0
    default:
        let name = bytes.pick(presetNames)
        do {
            try changer.apply(preset: name)
            require(Preset.named(name) != nil, "preset '\(name)' was taken on")
        } catch {
            require(Preset.named(name) == nil, "preset '\(name)' was refused: \(error)")
        }
    }
}

private func process(_ session: Session, _ bytes: inout Bytes) {
    let changer = session.changer
    let frames = min(bytes.frameCount(), max(0, framesPerRun - session.framesGiven))
    var input = (0..<changer.channels).map { session.samples(frames, channel: $0, bytes: &bytes) }
    let misshapen = bytes.byte() % 16 == 0
    if misshapen {
        switch bytes.byte() % 3 {
        case 0: input.removeLast()
        case 1 where input.count > 1: input[input.count - 1].append(0)
        default: input.append(input[0])
        }
    }
    switch bytes.byte() % 3 {
    case 0:
        do {
            let output = try changer.process(input.map { $0.map(Float.init) })
            require(!misshapen && !session.isFinished, "a block was taken that should have been refused")
            session.note(input)
            session.check(output, frames: frames, what: "process([[Float]])")
        } catch {
            if !misshapen && input.allSatisfy({ $0.allSatisfy(\.isFinite) }) { session.refusedAfterFinish("a block") }
        }
    case 1:
        do {
            let output = try changer.process(input)
            require(!misshapen && !session.isFinished, "a block was taken that should have been refused")
            session.note(input)
            session.check(output, frames: frames, what: "process([[Double]])")
        } catch {
            if !misshapen && input.allSatisfy({ $0.allSatisfy(\.isFinite) }) { session.refusedAfterFinish("a block") }
        }
    default:
        guard !misshapen else { return }
        // The pointer form, in place, as a plugin's run() calls it; now and then with a negative count.
        let count = bytes.byte() % 32 == 0 ? -Int(bytes.byte()) - 1 : frames
        let buffers = input.map { channel in
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, channel.count))
            _ = buffer.initialize(from: channel.map(Float.init))
            return buffer
        }
        defer { buffers.forEach { $0.deallocate() } }
        let output = buffers.map { $0.baseAddress! }
        let readable = output.map { UnsafePointer($0) }
        do {
            try readable.withUnsafeBufferPointer { input in
                try output.withUnsafeBufferPointer { output in
                    try changer.process(input.baseAddress!, into: output.baseAddress!, frames: count)
                }
            }
            require(count >= 0 && !session.isFinished, "a pointer block was taken that should have been refused")
            session.note(input)
            session.check(buffers.map { Array($0.prefix(frames)) }, frames: frames, what: "process(_:into:frames:)")
        } catch {
            if count >= 0 && input.allSatisfy({ $0.allSatisfy(\.isFinite) }) { session.refusedAfterFinish("a pointer block") }
        }
    }
}

private func finish(_ session: Session, _ bytes: inout Bytes) {
    let changer = session.changer
    do {
        switch bytes.byte() % 3 {
        case 0:
            session.check(try changer.finish(), frames: changer.latency, what: "finish()")
        case 1:
            session.check(try changer.finish(as: Double.self), frames: changer.latency, what: "finish(as:)")
        default:
            let tails = (0..<changer.channels).map { _ in
                let tail = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, changer.latency))
                tail.initialize(repeating: .nan)
                return tail
            }
            defer { tails.forEach { $0.deallocate() } }
            try tails.map { $0.baseAddress! }.withUnsafeBufferPointer { try changer.finish(into: $0.baseAddress!) }
            session.check(tails.map { Array($0.prefix(changer.latency)) }, frames: changer.latency, what: "finish(into:)")
        }
        require(!session.isFinished, "a second finish was taken")
        session.isFinished = true
    } catch {
        session.refusedAfterFinish("finish")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVoiceChanger(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = Bytes(Array(UnsafeBufferPointer(start: data, count: size)))
    guard let changer = makeChanger(&bytes) else { return 0 }
    let session = Session(changer)
    var operations = 0
    while !bytes.isEmpty, operations < 64 {
        operations += 1
        switch bytes.byte() % 8 {
        case 0, 1, 2: process(session, &bytes)
        case 3, 4: change(session, &bytes)
        case 5: finish(session, &bytes)
        case 6:
            changer.reset()
            session.isFinished = false
            session.inputWithinFullScale = true
        default:
            _ = changer.latency
        }
    }
    return 0
}
