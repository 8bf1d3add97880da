import KoeDSP
import KoeStages
import KoeWorld

/// The one engine every front end drives: `convert`, `koe convert` and `koe batch` through `Conversion`;
/// `VoiceChanger`, and through it `koe live`, the C ABI and the plugins. It plans each channel's stages from the
/// settings (`Lane.init`, the one place they are planned), runs the channels, side by side on threads when it
/// has them, and keeps each channel's output until the caller takes it. Like its stages it speaks `process`,
/// `finish` and `reset`.
///
/// A **changeable** engine (a `VoiceChanger`'s) also holds the stream's settings and how a change reaches the
/// output while it plays: the glides, and the crossfade between the vocoder and the input itself while the voice
/// changes nothing (`change(voice:)`). The first one made in a process for a sample rate and analysis warms up
/// (`warmUp`, in WarmUp.swift), so that its blocks find the runtime ready.
///
/// **Threads** are one budget: the channels run side by side first, and each channel's vocoder has an equal share
/// of what is left (threads of the worker pool when the share is 2 or more). The output is the same for any count.
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
    private let delaysOutput: Bool
    private let forcesVocoder: Bool

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
        self.delaysOutput = delaysOutput
        forcesVocoder = settings.forceVocoder
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
        voice = settings.voice
        gainDB = settings.gainDB
        limitsOutput = settings.limitsOutput
        if delaysOutput {
            for lane in lanes { lane.ready.append(contentsOf: repeatElement(0, count: latency)) }
        }
    }

    /// A changeable engine for a stream of blocks in and as many out, delayed by its latency, of Float samples
    /// (full scale 1), with room made for a piece of a block; the first for its rate and analysis warms up.
    static func stream(sampleRate: Int, channels: Int, analysis: AnalysisOptions, threads: Int) throws -> Engine {
        let engine = try unwarmedStream(sampleRate: sampleRate, channels: channels, analysis: analysis, threads: threads)
        try warmUp(sampleRate: sampleRate, analysis: analysis, threads: threads)
        return engine
    }

    static func unwarmedStream(sampleRate: Int, channels: Int, analysis: AnalysisOptions, threads: Int) throws -> Engine {
        var settings = ConversionSettings()
        settings.analysis = analysis
        settings.threads = threads
        let engine = try Engine(
            sampleRate: sampleRate, channels: channels, settings: settings, isChangeable: true, delaysOutput: true,
            fullScale: 1)
        for lane in engine.lanes { lane.reserve(forBlocksOf: pieceFrames) }
        return engine
    }

    /// The vocoder stage of the first channel, for a conversion's statistics; nil when the voice is left out.
    var firstVoiceStage: VoiceShift? { lanes[0].voiceShift }

    /// The first channel's F0 of the frame last synthesised, analysed and changed (`VoiceShift.latestF0`).
    var latestF0: (input: Double, output: Double)? { lanes[0].voiceShift?.latestF0 }

    // MARK: Interleaved chunks (Conversion)

    /// Takes interleaved samples (a whole number of frames) and returns the interleaved output now ready in
    /// every channel.
    func process(interleaved input: [Double]) throws -> [Double] {
        guard input.count % channels == 0 else {
            throw KoeError.misuse("\(input.count) interleaved samples do not make whole frames of \(channels) channels")
        }
        let channels = channels
        try eachLane { lane in
            lane.deinterleave(input, channels: channels)
            try lane.chain.process(lane.input, into: &lane.ready)
        }
        return drainWholeFrames()
    }

    /// Waits for the stages still working in the background and returns the interleaved output now ready.
    /// Call it before waiting for more input, so a live stream is not held back.
    func drain() throws -> [Double] {
        try eachLane { try $0.chain.drain(into: &$0.ready) }
        return drainWholeFrames()
    }

    /// Ends the stream and returns the rest of the interleaved output.
    func finishInterleaved() throws -> [Double] {
        try finishLanes()
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

    /// Frames each channel has ready.
    private var readyFrames: Int { lanes.map(\.ready.count).min() ?? 0 }

    /// Every chain drains into its ready frames.
    private func finishLanes() throws {
        try eachLane { try $0.chain.finish(into: &$0.ready) }
    }

    // MARK: Planar blocks of a stream (VoiceChanger)

    /// Frames of a block converted at a time: the stages' buffers then have room for a piece, and a host's block
    /// of any size, once seen, allocates nothing more.
    static let pieceFrames = 1024

    /// True once the stream has ended, until `reset`.
    private var isFinished = false
    /// True once a block has been processed: settings changed from then on glide.
    private var hasStarted = false
    /// Frames a channel has received since the stream began.
    private var received = 0

    /// Converts the next `frames` frames of planar audio from `input` into `output`, one pointer per channel
    /// each way; `output` may be `input` (in place). Allocates nothing on one thread once room is made. A sample
    /// that is not finite throws before anything changes.
    func process(
        _ input: UnsafePointer<UnsafePointer<Float>>, into output: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int
    ) throws(KoeError) {
        guard frames >= 0 else { throw .invalidArgument("a block cannot have \(frames) frames") }
        try requireStreaming()
        for channel in 0..<channels {
            try Self.requireFinite(UnsafeBufferPointer(start: input[channel], count: frames), channel: channel)
        }
        try run(frames: frames) { channel, piece in
            lanes[channel].push(UnsafeBufferPointer(start: input[channel] + piece.lowerBound, count: piece.count))
        } drain: { channel, piece in
            lanes[channel].drain(
                piece.count, into: UnsafeMutableBufferPointer(start: output[channel] + piece.lowerBound, count: piece.count))
        }
    }

    /// Converts the next block: one array per channel, all of one length; returns as many frames per channel.
    func process<Sample: BinaryFloatingPoint>(planar input: [[Sample]]) throws(KoeError) -> [[Sample]] {
        guard input.count == channels else {
            throw .badInput(source: nil, reason: "\(input.count) channel arrays given to a \(channels)-channel changer")
        }
        let frames = input[0].count
        if let ragged = input.firstIndex(where: { $0.count != frames }) {
            throw .badInput(source: nil, reason: "channel \(ragged) has \(input[ragged].count) frames, channel 0 has \(frames)")
        }
        try requireStreaming()
        for (channel, samples) in input.enumerated() {
            try samples.withUnsafeBufferPointer { buffer throws(KoeError) in try Self.requireFinite(buffer, channel: channel) }
        }
        var output = (0..<channels).map { _ in [Sample](repeating: 0, count: frames) }
        try run(frames: frames) { channel, piece in
            input[channel].withUnsafeBufferPointer { lanes[channel].push(UnsafeBufferPointer(rebasing: $0[piece])) }
        } drain: { channel, piece in
            output[channel].withUnsafeMutableBufferPointer {
                lanes[channel].drain(piece.count, into: UnsafeMutableBufferPointer(rebasing: $0[piece]))
            }
        }
        return output
    }

    /// Ends the stream: returns the `latency` frames per channel still held. `reset` starts a new one.
    func finish<Sample: BinaryFloatingPoint>(as sample: Sample.Type) throws(KoeError) -> [[Sample]] {
        try requireStreaming()
        isFinished = true
        try KoeError.wrapping { try finishLanes() }
        let frames = readyFrames
        return lanes.map { lane in
            var tail = [Sample](repeating: 0, count: frames)
            tail.withUnsafeMutableBufferPointer { lane.drain(frames, into: $0) }
            return tail
        }
    }

    /// Forgets the stream: the next block starts a new one, with the settings as they are now and no glide, as in
    /// an engine just made with them. **Real time:** no: the vocoder makes its analysis anew.
    func reset() {
        deferredVoice = nil
        let wet = forcesVocoder || !voice.isIdentity
        for lane in lanes {
            lane.reset(voice: voice, wet: wet, delay: delaysOutput ? latency : 0)
        }
        isFinished = false
        hasStarted = false
        received = 0
    }

    /// Converts `frames` frames a piece at a time: `push` gives each channel's input of a piece (a range of the
    /// block's frames) to its lane, whose chain runs until it has as many frames ready, and `drain` takes them.
    private func run(
        frames: Int, push: (_ channel: Int, _ piece: Range<Int>) -> Void, drain: (_ channel: Int, _ piece: Range<Int>) -> Void
    ) throws(KoeError) {
        hasStarted = true
        var start = 0
        repeat {
            let piece = start..<min(frames, start + Self.pieceFrames)
            if let deferred = deferredVoice, received >= deferred.from {
                deferredVoice = nil
                update(deferred.voice)
            }
            received += piece.count
            for channel in 0..<channels {
                push(channel, piece)
            }
            try KoeError.wrapping { try run(readying: piece.count) }
            for channel in 0..<channels {
                drain(channel, piece)
            }
            start = piece.upperBound
        } while start < frames
    }

    /// Runs every channel's pushed input through its chain until at least `frames` frames are ready in each;
    /// throws when the stages fell behind that (a changer's latency bound).
    private func run(readying frames: Int) throws {
        try eachLane { lane in
            try lane.chain.process(lane.input, into: &lane.ready)
            if lane.ready.count < frames { try lane.chain.drain(into: &lane.ready) }
        }
        if let short = lanes.first(where: { $0.ready.count < frames }) {
            throw KoeError.misuse("the vocoder fell behind its latency bound: \(short.ready.count) of \(frames) frames ready")
        }
    }

    private func requireStreaming() throws(KoeError) {
        guard !isFinished else { throw .misuse("the stream has finished: call reset() before processing a new one") }
    }

    private static func requireFinite<Sample: BinaryFloatingPoint>(
        _ samples: UnsafeBufferPointer<Sample>, channel: Int
    ) throws(KoeError) {
        if let frame = SignalRequirements.firstNonFinite(samples) {
            throw .nonFiniteSample(frame: frame, channel: channel, source: nil)
        }
    }

    // MARK: Changes while the stream plays (a changeable engine)

    /// The settings the stream plays with now (those a conversion's engine was made with, for one).
    private(set) var voice: VoiceSettings
    /// The EQ bands that act.
    var bands: [EqualizerBand] { lanes[0].equalizer?.bands ?? [] }
    private(set) var gainDB: Double
    private(set) var limitsOutput: Bool
    /// A change out of the input's pass-through, for the vocoder once the crossfade to it is over and the frames
    /// it completes from input frame `from` on play after it.
    private var deferredVoice: (voice: VoiceSettings, from: Int)?

    /// Takes a new voice. While the voice changes nothing the input itself plays in the vocoder's place. A change
    /// to such a voice crossfades to the input while the vocoder glides back to the voice unchanged; a change away
    /// from it crossfades to the vocoder first, and the vocoder glides to the new voice once that is heard
    /// (`latency` plus the glide later than other changes). Before the first block, every change is at once.
    func change(voice newVoice: VoiceSettings) {
        let wasPassingInput = voice.isIdentity
        voice = newVoice
        if deferredVoice != nil {
            // The vocoder still resynthesises the voice unchanged: only the change it will glide to is new.
            if newVoice.isIdentity {
                deferredVoice = nil
                setWet(false, gliding: true)
            } else {
                deferredVoice?.voice = newVoice
            }
            return
        }
        if hasStarted && wasPassingInput && !newVoice.isIdentity {
            // Out of the input's pass-through, crossfade to the vocoder while it resynthesises the voice unchanged,
            // and only then let it glide to the change, so that this change too glides instead of jumping.
            setWet(true, gliding: true)
            deferredVoice = (newVoice, received + Glide.samples(sampleRate: sampleRate) + latency)
            return
        }
        update(newVoice)
        setWet(!newVoice.isIdentity, gliding: hasStarted)
    }

    /// Takes the bands this sample rate can build and that change something, gliding once the stream has started.
    func set(bands newBands: [EqualizerBand]) {
        let sampleRate = sampleRate
        let bands = newBands.filter { !$0.isFlat && (try? $0.filter(sampleRate: sampleRate)) != nil }
        for lane in lanes { try? lane.equalizer?.set(bands: bands, gliding: hasStarted) }
    }

    /// Takes a change made ready on another thread: the voice as `change(voice:)` takes it, each channel's EQ
    /// design (`Equalizer.take`), the gain and the limiter. Allocates and frees nothing: the voice and the bands
    /// it replaces go back into `newVoice` and `designs`, to be freed on the thread that made them.
    func take(
        voice newVoice: inout VoiceSettings, designs: inout [Equalizer.Design], gainDB newGain: Double, limitsOutput isLimiting: Bool
    ) {
        let previous = voice
        change(voice: newVoice)
        newVoice = previous
        for index in lanes.indices { lanes[index].equalizer?.take(&designs[index], gliding: hasStarted) }
        if newGain != gainDB { set(gainDB: newGain) }
        if isLimiting != limitsOutput { set(limitsOutput: isLimiting) }
    }

    /// Takes a finite gain, gliding once the stream has started.
    func set(gainDB newGain: Double) {
        gainDB = newGain
        for lane in lanes { try? lane.gain?.set(decibels: newGain, gliding: hasStarted) }
    }

    func set(limitsOutput isEnabled: Bool) {
        limitsOutput = isEnabled
        for lane in lanes { lane.setLimiting(isEnabled) }
    }

    /// The voice from the blocks the next run settles on, gliding once the stream has started.
    private func update(_ voice: VoiceSettings) {
        for lane in lanes { lane.voiceShift?.update(voice) }
    }

    /// The vocoder's output (wet) or the input itself (dry), from the next input frame on.
    private func setWet(_ wet: Bool, gliding: Bool) {
        for lane in lanes { lane.mix?.set(wet: wet, gliding: gliding) }
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
        equalizer?.reserveRealTimeBands()
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

    /// Forgets the stream: the stages as `init` would make them with `voice` and a vocoder `wet` or not, no
    /// failure, no input, and `delay` frames of silence ready; the room made for blocks stays.
    func reset(voice: VoiceSettings, wet: Bool, delay: Int) {
        voiceShift?.update(voice)
        mix?.set(wet: wet, gliding: false)
        chain.reset()
        input.removeAll(keepingCapacity: true)
        ready.removeAll(keepingCapacity: true)
        ready.append(contentsOf: repeatElement(0, count: delay))
        failure = nil
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
