import KoeDSP
import KoeStages
import KoeWorld

/// The one engine every front end drives: `convertFile`, `koe convert` and `koe batch` through `Conversion`;
/// `VoiceChanger`, and through it `koe live`, the C ABI and the plugins. It plans each channel's stages from the
/// settings (`Lane.init`, the one place they are planned), runs the channels, side by side on threads when it
/// has them, and keeps each channel's output until the caller takes it.
///
/// **Threads** are one budget: the channels run side by side first, and each channel's vocoder has an equal share
/// of what is left (threads of its own when the share is 2 or more). The output is the same for any count.
final class Engine {
    let sampleRate: Int
    let channels: Int
    /// Input frames that must arrive before the output for a frame is available.
    let latency: Int
    /// Output length over input length (1 / tempo).
    let lengthRatio: Double
    private let lanes: [Lane]
    /// Channels run at the same time, at most.
    private let channelThreads: Int

    /// Plans and builds one lane a channel.
    ///
    /// - `isChangeable`: settings change while the stream plays (a `VoiceChanger`). Every stage then stays in
    ///   the chain, at identity where it changes nothing, so the delay never moves and each change can glide; a
    ///   voice at identity passes the input itself in the vocoder's place. Otherwise a stage that would change
    ///   nothing is left out.
    /// - `delaysOutput`: each channel's output starts with `latency` frames of silence, so output frame n is
    ///   the converted input frame n − latency (a `VoiceChanger`'s block in, block out). Otherwise stages trim
    ///   their own start and the output is aligned with the input.
    /// - `fullScale`: the largest sample the output holds, the limiter's ceiling.
    /// - `referenceMedians`: each channel's median F0 when known before the stream (a file read once first).
    init(
        sampleRate: Int, channels: Int, settings: ConversionSettings, isChangeable: Bool, delaysOutput: Bool,
        fullScale: Double, referenceMedians: [Double?] = []
    ) throws {
        self.sampleRate = sampleRate
        self.channels = channels
        channelThreads = max(1, min(settings.threads, channels))
        let vocoderThreads = max(1, settings.threads / channels)
        let bands = settings.bands(sampleRate: sampleRate)
        lanes = try (0..<channels).map { channel in
            var voice = settings.voice
            if channel < referenceMedians.count, let median = referenceMedians[channel] {
                voice.referenceMedian = median
            }
            return try Lane(
                channel: channel, sampleRate: sampleRate, voice: voice, settings: settings, bands: bands, vocoderThreads: vocoderThreads,
                isChangeable: isChangeable, fullScale: fullScale)
        }
        latency = lanes[0].chain.latency
        lengthRatio = lanes[0].chain.lengthRatio
        if delaysOutput {
            for lane in lanes { lane.ready.append(contentsOf: repeatElement(0, count: latency)) }
        }
    }

    /// The vocoder stage of the first channel, for a conversion's statistics; nil when the voice is left out.
    var firstVoiceStage: VoiceShift? { lanes[0].voiceShift }

    // MARK: Planar blocks (VoiceChanger)

    /// Makes room for blocks of up to `frames` frames: pushing, running and draining such a block then allocates
    /// nothing once the stream has begun (on one thread).
    func reserve(forBlocksOf frames: Int) {
        for lane in lanes { lane.reserve(forBlocksOf: frames) }
    }

    /// Takes a channel's next input.
    func push<Sample: BinaryFloatingPoint>(_ samples: UnsafeBufferPointer<Sample>, channel: Int) {
        lanes[channel].push(samples)
    }

    /// Runs every channel's pushed input through its chain until at least `frames` frames are ready in each;
    /// throws when the stages fell behind that (a changer's latency bound).
    func run(readying frames: Int) throws {
        try eachLane { lane in
            try lane.chain.process(lane.input, into: &lane.ready)
            if lane.ready.count < frames { try lane.chain.drain(into: &lane.ready) }
        }
        if let short = lanes.first(where: { $0.ready.count < frames }) {
            throw KoeError.misuse("the vocoder fell behind its latency bound: \(short.ready.count) of \(frames) frames ready")
        }
    }

    /// Moves a channel's first `count` ready frames to `output` (which may be where its input was read from).
    func drain<Sample: BinaryFloatingPoint>(_ count: Int, channel: Int, into output: UnsafeMutableBufferPointer<Sample>) {
        lanes[channel].drain(count, into: output)
    }

    /// Frames each channel has ready.
    var readyFrames: Int { lanes.map(\.ready.count).min() ?? 0 }

    /// Ends the stream: every chain drains into its ready frames.
    func finish() throws {
        try eachLane { try $0.finish() }
    }

    // MARK: Interleaved chunks (Conversion)

    /// Takes interleaved samples (a whole number of frames) and returns the interleaved output now ready in
    /// every channel. With `isFinal`, every stage drains and the rest of the output is returned.
    func process(interleaved input: [Double], isFinal: Bool) throws -> [Double] {
        guard input.count % channels == 0 else {
            throw KoeError.misuse("\(input.count) interleaved samples do not make whole frames of \(channels) channels")
        }
        let channels = channels
        try eachLane { lane in
            lane.deinterleave(input, channels: channels)
            try lane.chain.process(lane.input, into: &lane.ready)
            if isFinal { try lane.chain.finish(into: &lane.ready) }
        }
        return drainWholeFrames()
    }

    /// Waits for the stages still working in the background and returns the interleaved output now ready.
    /// Call it before waiting for more input, so a live stream is not held back.
    func drain() throws -> [Double] {
        try eachLane { try $0.chain.drain(into: &$0.ready) }
        return drainWholeFrames()
    }

    private func drainWholeFrames() -> [Double] {
        let frames = readyFrames
        guard frames > 0 else { return [] }
        var output = [Double](repeating: 0, count: frames * channels)
        output.withUnsafeMutableBufferPointer { output in
            for (channel, lane) in lanes.enumerated() {
                lane.ready.withUnsafeBufferPointer { ready in
                    for frame in 0..<frames {
                        output[frame * channels + channel] = ready[frame]
                    }
                }
                lane.ready.removeFirst(frames)
            }
        }
        return output
    }

    // MARK: Changes while the stream plays (a changeable engine)

    /// The voice from the blocks the next run settles on, gliding once the stream has started.
    func update(_ voice: VoiceSettings) {
        for lane in lanes { lane.voiceShift?.update(voice) }
    }

    /// The vocoder's output (wet) or the input itself (dry), from the next input frame on.
    func setWet(_ wet: Bool, gliding: Bool) {
        for lane in lanes { lane.mix?.set(wet: wet, gliding: gliding) }
    }

    /// Bands that can be built at this sample rate.
    func set(bands: [EqualizerBand], gliding: Bool) throws {
        for lane in lanes { try lane.equalizer?.set(bands: bands, gliding: gliding) }
    }

    func set(gainDB: Double, gliding: Bool) throws {
        for lane in lanes { try lane.gain?.set(decibels: gainDB, gliding: gliding) }
    }

    func setLimiting(_ isEnabled: Bool) {
        for lane in lanes { lane.setLimiting(isEnabled) }
    }

    /// Runs `body` on every lane, side by side when the engine has threads for that; rethrows the first
    /// channel's failure.
    private func eachLane(_ body: (Lane) throws -> Void) throws {
        // Group `group` holds the lanes of channels group, group + groups, ...; one thread at a time runs a group.
        let groups = channelThreads
        Parallel.forEach(groups, threads: groups) { group in
            for channel in stride(from: group, to: lanes.count, by: groups) {
                lanes[channel].run(body)
            }
        }
        if let failure = lanes.lazy.compactMap(\.failure).first { throw failure }
    }
}

/// One channel of an engine: its planned chain, the stages a change reaches, the input being pushed and the
/// output ready. Touched by one thread at a time.
private final class Lane {
    let channel: Int
    let chain: Chain
    let voiceShift: VoiceShift?
    let mix: DryWetMix?
    let equalizer: Equalizer?
    let gain: Gain?
    let limiter: Limiter?
    var ready: [Double] = []
    private(set) var input: [Double] = []
    private(set) var failure: Error?

    /// The plan: the vocoder when the voice changes something (or is forced, or may change), the input mixed in
    /// for it while a changeable voice is at identity, the EQ bands and the gain that change something, and the
    /// limiter last when anything comes before it. A changeable lane keeps every stage.
    init(
        channel: Int, sampleRate: Int, voice: VoiceSettings, settings: ConversionSettings, bands: [EqualizerBand],
        vocoderThreads: Int, isChangeable: Bool, fullScale: Double
    ) throws {
        self.channel = channel
        let glide = Glide.samples(sampleRate: sampleRate)
        var stages: [any Stage] = []
        if isChangeable || settings.usesVocoder {
            let vocoder = try VoiceShift(sampleRate: sampleRate, voice: voice, analysis: settings.analysis, threads: vocoderThreads)
            voiceShift = vocoder
            stages.append(vocoder)
        } else {
            voiceShift = nil
        }
        if isChangeable {
            let mix = DryWetMix(wet: settings.usesVocoder, glideSamples: glide)
            self.mix = mix
            stages.append(mix)
        } else {
            mix = nil
        }
        equalizer = isChangeable
            ? try Equalizer(bands: bands, sampleRate: sampleRate, glideSamples: glide)
            : try Equalizer.make(bands: bands, sampleRate: sampleRate)
        if let equalizer { stages.append(equalizer) }
        gain = isChangeable ? try Gain(decibels: settings.gainDB, glideSamples: glide) : try Gain.make(decibels: settings.gainDB)
        if let gain { stages.append(gain) }
        // A chain that changes nothing cannot raise a peak: a copy stays a copy. A changeable chain keeps its
        // limiter, switched on or off, so that switching never moves the output.
        if isChangeable || (settings.limitsOutput && !stages.isEmpty) {
            let limiter = try Limiter(sampleRate: sampleRate, ceiling: fullScale)
            limiter.isEnabled = settings.limitsOutput
            self.limiter = limiter
            stages.append(limiter)
        } else {
            limiter = nil
        }
        chain = Chain(stages: stages)
    }

    /// Room for blocks of `frames` frames on top of what the stages hold back.
    func reserve(forBlocksOf frames: Int) {
        ready.reserveCapacity(ready.count + chain.latency + frames)
        input.reserveCapacity(frames)
        if let voiceShift {
            mix?.reserveCapacity(heldSamples: voiceShift.latency + frames)
            voiceShift.reserve(forBlocksOf: frames)
        }
        chain.reserve(forChunksOf: frames)
    }

    func push<Sample: BinaryFloatingPoint>(_ samples: UnsafeBufferPointer<Sample>) {
        input.removeAll(keepingCapacity: true)
        for sample in samples {
            input.append(Double(sample))
        }
        feedDry()
    }

    func deinterleave(_ interleaved: [Double], channels: Int) {
        input.removeAll(keepingCapacity: true)
        for index in stride(from: channel, to: interleaved.count, by: channels) {
            input.append(interleaved[index])
        }
        feedDry()
    }

    private func feedDry() {
        guard let mix else { return }
        input.withUnsafeBufferPointer { mix.feedDry($0) }
    }

    func drain<Sample: BinaryFloatingPoint>(_ count: Int, into output: UnsafeMutableBufferPointer<Sample>) {
        ready.withUnsafeBufferPointer { ready in
            for index in 0..<count {
                output[index] = Sample(ready[index])
            }
        }
        ready.removeFirst(count)
    }

    /// Switches the limiter. Switched on, it clips the frames it let through unlimited that still wait in
    /// `ready` as it clips those in its look-ahead, so that every frame handed out from then on is within its
    /// ceiling.
    func setLimiting(_ isEnabled: Bool) {
        guard let limiter else { return }
        limiter.isEnabled = isEnabled
        guard isEnabled else { return }
        let ceiling = limiter.ceiling
        for index in ready.indices where abs(ready[index]) > ceiling {
            ready[index] = ready[index] < 0 ? -ceiling : ceiling
        }
    }

    /// Drains the chain into `ready`.
    func finish() throws {
        try chain.finish(into: &ready)
    }

    /// Runs `body` unless an earlier run failed, keeping its failure for the engine to throw.
    func run(_ body: (Lane) throws -> Void) {
        guard failure == nil else { return }
        do {
            try body(self)
        } catch {
            failure = error
        }
    }
}
