import KoeWorld

/// The vocoder stage: WORLD analysis of the stream, the voice changes frame by frame, and WORLD synthesis.
///
/// Output is aligned with the input and exactly `round(input / tempo)` samples long: the stage holds back
/// what the analyser and synthesiser still need, and drains it when the stream ends. A stream of any length is
/// analysed and resynthesised, one shorter than an analysis window too (`StreamingAnalyzer`).
///
/// With two threads or more, `process` only settles F0 (DIO's, or Harvest's whole, its channels shared among as
/// many threads) and hands the blocks to threads of the worker pool, which analyse them side by side and
/// synthesise them in order while the caller reads on: `process` returns the output synthesised so far, `drain`
/// waits for the rest, and `finish` for the end. The output is the same for any number of threads.
///
/// The voice can change while the stream plays (`update`): the new settings apply from the first frame of the
/// blocks the next `process` settles, on any number of threads alike.
package final class VoiceShift: BackgroundStage {
    package let sampleRate: Int
    private(set) var voice: VoiceSettings
    /// Threads the stage uses (at least 1).
    package let threads: Int
    package let latency: Int

    private let analysis: AnalysisOptions
    private var analyzer: StreamingAnalyzer
    private var work: VocoderWork
    /// The block size `reserve` made room for, made again by `reset`.
    private var reservedSamples: Int?
    private var received = 0
    private var emitted = 0
    private var pending: [Double] = []
    /// Set by `update`, handed to the synthesis with the next blocks.
    private var changedVoice: VoiceSettings?
    /// Set by `aim`, handed to the synthesis with the next blocks: the speaker's profiles, each with the frame it
    /// holds from.
    private var scheduledProfiles: [ScheduledProfile] = []
    /// The blocks of the latest input, analysed or still to analyse; emptied, capacity kept, each time.
    private var analysedBlocks: [StreamingAnalyzer.Block] = []
    private var pendingBlocks: [StreamingAnalyzer.PendingBlock] = []

    /// `threads` sets how the stage works (in place of `analysis.threads`): 1 on the caller's thread alone,
    /// more on that many threads of the worker pool. Throws if the analysis cannot run at this rate with these options.
    package init(
        sampleRate: Int, voice: VoiceSettings, analysis: AnalysisOptions = .init(), threads: Int = 1
    ) throws(WorldError) {
        self.sampleRate = sampleRate
        self.voice = voice
        self.threads = max(1, threads)
        var analysis = analysis
        analysis.threads = self.threads
        self.analysis = analysis
        let synthesisLatency: Int
        (analyzer, work, synthesisLatency) = try Self.makeWork(sampleRate: sampleRate, voice: voice, analysis: analysis)
        latency = analyzer.latency + synthesisLatency
    }

    deinit {
        work.stop()
    }

    /// The analyser and the synthesis of a new stream, on the caller's thread or on the pool's.
    private static func makeWork(
        sampleRate: Int, voice: VoiceSettings, analysis: AnalysisOptions
    ) throws(WorldError) -> (StreamingAnalyzer, VocoderWork, synthesisLatency: Int) {
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate, options: analysis, blocksCrossThreads: analysis.threads > 1)
        let resynthesis = Resynthesis(
            voice: voice, sampleRate: sampleRate, framePeriod: analysis.framePeriod, fftSize: analyzer.fftSize,
            glideFrames: Glide.frames(framePeriod: analysis.framePeriod), isCausal: analysis.live)
        let work: VocoderWork = analysis.threads > 1
            ? .onThreads(VocoderThreads(resynthesis, recycler: analyzer.recycler, threads: analysis.threads))
            : .onCaller(resynthesis)
        return (analyzer, work, resynthesis.latency)
    }

    /// Makes room for calls of up to `samples` samples on the caller's thread: such a call then allocates nothing
    /// once the stream has begun.
    package func reserve(forBlocksOf samples: Int) {
        reservedSamples = samples
        guard case .onCaller(let resynthesis) = work else { return }
        analyzer.reserve(forPushesOf: samples)
        resynthesis.reserve(forOutputsOf: samples + analyzer.latency)
        analysedBlocks.reserveCapacity(analyzer.mostBlocks(perPushOf: samples) ?? 0)
        pending.reserveCapacity(latency + 2 * samples)
        scheduledProfiles.reserveCapacity(Self.scheduledProfilesRoom)
        resynthesis.reserve(scheduledProfiles: Self.scheduledProfilesRoom)
    }

    /// Profiles a stream may schedule ahead of the frames it has synthesised: one each 100 ms of a voice
    /// (`RunningSpeakerProfile`), far fewer than this within a block and the latency.
    private static let scheduledProfilesRoom = 64

    /// Median F0 of the voiced input frames synthesised so far, in Hz; nil before any.
    package var medianInputF0: Double? { work.medians.input }

    /// Median F0 of the voiced frames sent to synthesis so far, in Hz; nil before any.
    package var medianOutputF0: Double? { work.medians.output }

    /// The F0 of the frame last sent to synthesis, as analysed and as changed, in Hz (0: unvoiced); nil when the
    /// stage works on threads of the pool, which synthesise on a thread of their own.
    package var latestF0: (input: Double, output: Double)? {
        guard case .onCaller(let resynthesis) = work else { return nil }
        return resynthesis.latestF0
    }

    package var lengthRatio: Double { 1 / voice.tempo }

    /// The ratios the latest frame synthesised was given, and the aim they came from (nil where neither aimed).
    package var aimState: AimState { work.aimState }

    /// The speaker's profile (nil: none known) from input sample `position` on, for a voice that aims at a
    /// preset's target (`VoiceSettings.aiming`): the frames from the first at or after it take their ratios from it.
    /// Handed to the synthesis with the blocks the next `process` settles, which always precede that frame's.
    package func aim(from profile: SpeakerProfile?, atSample position: Int) {
        let framePeriodSamples = analysis.framePeriod * Double(sampleRate) / 1000
        let frame = Int((Double(position) / framePeriodSamples).rounded(.up))
        scheduledProfiles.append(ScheduledProfile(frame: frame, profile: profile))
    }

    /// Changes the voice from the blocks the next `process` settles on, gliding there once the stream has
    /// started; the tempo stays the stream's own.
    package func update(_ newVoice: VoiceSettings) {
        var newVoice = newVoice
        newVoice.tempo = voice.tempo
        guard newVoice != voice else { return }
        voice = newVoice
        changedVoice = newVoice
    }

    package func process(_ input: [Double], into output: inout [Double]) throws {
        received += input.count
        try run(isFinal: false, gliding: received > input.count) { analyzer, blocks in
            try analyzer.push(input, into: &blocks)
        } handOver: { analyzer, blocks in
            try analyzer.pushPending(input, into: &blocks)
        }
        drain(isFinal: false, into: &output)
    }

    package func finish(into output: inout [Double]) throws {
        try run(isFinal: true, gliding: received > 0) { analyzer, blocks in
            blocks += try analyzer.finish()
        } handOver: { analyzer, blocks in
            blocks += try analyzer.finishPending()
        }
        drain(isFinal: true, into: &output)
    }

    /// A new analyser and synthesis, as `init` made them, with the voice as it is now (a glide under way is over);
    /// threads of the pool taken anew; the room `reserve` made, made again.
    package func reset() {
        work.stop()
        // The analysis ran at this rate with these options once, so it runs again.
        guard let (analyzer, work, _) = try? Self.makeWork(sampleRate: sampleRate, voice: voice, analysis: analysis) else {
            preconditionFailure("the vocoder could not be made again with the options it was made with")
        }
        self.analyzer = analyzer
        self.work = work
        received = 0
        emitted = 0
        pending.removeAll(keepingCapacity: true)
        changedVoice = nil
        scheduledProfiles.removeAll(keepingCapacity: true)
        analysedBlocks.removeAll(keepingCapacity: true)
        pendingBlocks.removeAll(keepingCapacity: true)
        if let reservedSamples { reserve(forBlocksOf: reservedSamples) }
    }

    /// Runs the blocks `analyse` completes (on the caller's thread) or hands those `handOver` settles to the
    /// threads, with the voice changed since the last call; at the end, up to the output length.
    private func run(
        isFinal: Bool, gliding: Bool,
        analyse: (StreamingAnalyzer, inout [StreamingAnalyzer.Block]) throws -> Void,
        handOver: (StreamingAnalyzer, inout [StreamingAnalyzer.PendingBlock]) throws -> Void
    ) throws {
        let voiceChange = changedVoice
        changedVoice = nil
        defer { scheduledProfiles.removeAll(keepingCapacity: true) }
        switch work {
        case .onCaller(let resynthesis):
            defer { analysedBlocks.removeAll(keepingCapacity: true) }
            try analyse(analyzer, &analysedBlocks)
            if let voiceChange { resynthesis.update(voiceChange, gliding: gliding) }
            for scheduled in scheduledProfiles { resynthesis.schedule(scheduled) }
            resynthesis.run(SynthesisJob(blocks: analysedBlocks, finalLength: isFinal ? outputLength : nil), into: &pending)
            analysedBlocks.forEach(analyzer.recycler.recycle)
        case .onThreads(let threads):
            defer { pendingBlocks.removeAll(keepingCapacity: true) }
            try handOver(analyzer, &pendingBlocks)
            threads.submit(
                pendingBlocks, finalLength: isFinal ? outputLength : nil,
                voiceChange: voiceChange.map { ($0, gliding: gliding) }, profiles: scheduledProfiles)
            if isFinal { threads.waitUntilIdle() }
            threads.drain(into: &pending)
        }
    }

    package func drain(into output: inout [Double]) throws {
        if case .onThreads(let threads) = work {
            threads.waitUntilIdle()
            threads.drain(into: &pending)
        }
        drain(isFinal: false, into: &output)
    }

    private var outputLength: Int {
        Int((Double(received) / voice.tempo).rounded())
    }

    /// Hands out what is ready, never past the output length; the final call pads a short synthesis with silence.
    private func drain(isFinal: Bool, into output: inout [Double]) {
        let limit = isFinal ? outputLength : min(outputLength, emitted + pending.count)
        var count = min(pending.count, max(0, limit - emitted))
        output.append(contentsOf: pending[..<count])
        pending.removeFirst(count)
        if isFinal, emitted + count < limit {
            output.append(contentsOf: repeatElement(0, count: limit - emitted - count))
            count = limit - emitted
        }
        emitted += count
        if isFinal { pending.removeAll() }
    }
}

/// A speaker's profile and the first frame it holds for (see `VoiceShift.aim`).
struct ScheduledProfile: Sendable {
    var frame: Int
    var profile: SpeakerProfile?
}

/// The ratios a voice's latest frame was given, and the aim they came from (nil where neither aimed).
package struct AimState: Sendable {
    package var pitch: Double
    package var formant: Double
    package var aim: Preset.Aim?
}

/// Analysed frames for synthesis; on the last job, the output length the stream ends at.
struct SynthesisJob: Sendable {
    var blocks: [StreamingAnalyzer.Block]
    var finalLength: Int?
}

/// The stage's second half, frames in and samples out: the voice changes, the tempo, and WORLD synthesis.
final class Resynthesis {
    private let sampleRate: Int
    private let framePeriod: Double
    private let synthesizer: StreamingSynthesizer
    private var modifier: FrameModifier
    private var timeline: TempoTimeline
    private var scratch: ParameterFrame
    private var inputMedian = MedianTracker()
    private var outputMedian = MedianTracker()
    /// The last frame's F0, analysed and changed, in Hz (0: unvoiced).
    private(set) var latestF0 = (input: 0.0, output: 0.0)

    /// `isCausal`: synthesize for live use (`StreamingSynthesizer.isCausal`).
    init(voice: VoiceSettings, sampleRate: Int, framePeriod: Double, fftSize: Int, glideFrames: Int, isCausal: Bool) {
        self.sampleRate = sampleRate
        self.framePeriod = framePeriod
        synthesizer = StreamingSynthesizer(unchecked: sampleRate, framePeriod: framePeriod, fftSize: fftSize, isCausal: isCausal)
        modifier = FrameModifier(voice: voice, bins: fftSize / 2 + 1, framePeriod: framePeriod, glideFrames: glideFrames)
        timeline = TempoTimeline(tempo: voice.tempo, bins: fftSize / 2 + 1)
        scratch = ParameterFrame(bins: fftSize / 2 + 1)
    }

    /// Makes room for synthesising `samples` samples between drains.
    func reserve(forOutputsOf samples: Int) {
        synthesizer.reserve(forOutputsOf: samples)
    }

    var latency: Int { synthesizer.latency }

    /// The voice the frames from the next on are changed with, reached at once or gliding.
    func update(_ voice: VoiceSettings, gliding: Bool) {
        modifier.update(voice, gliding: gliding)
    }

    var medians: (input: Double?, output: Double?) {
        (inputMedian.value > 0 ? inputMedian.value : nil, outputMedian.value > 0 ? outputMedian.value : nil)
    }

    var aimState: AimState {
        AimState(pitch: modifier.applied.pitch, formant: modifier.applied.formant, aim: modifier.latestAim)
    }

    /// The speaker's profile from a frame on, for a voice that aims.
    func schedule(_ scheduled: ScheduledProfile) {
        modifier.schedule(scheduled.profile, fromFrame: scheduled.frame)
    }

    func reserve(scheduledProfiles count: Int) {
        modifier.reserve(scheduledProfiles: count)
    }

    /// Synthesises the job's frames and appends the samples that became final.
    func run(_ job: SynthesisJob, into output: inout [Double]) {
        for block in job.blocks {
            feed(block)
        }
        if let finalLength = job.finalLength {
            finish(outputLength: finalLength, into: &output)
        } else {
            _ = synthesizer.drain(into: &output)
        }
    }

    /// Synthesises one block's frames and appends the samples that became final.
    func run(_ block: StreamingAnalyzer.Block, into output: inout [Double]) {
        feed(block)
        _ = synthesizer.drain(into: &output)
    }

    /// Synthesises up to the end of the stream, `outputLength` samples long, and appends the rest of the samples.
    func finish(outputLength: Int, into output: inout [Double]) {
        feedRemainingFrames(outputLength: outputLength)
        _ = synthesizer.finish(into: &output)
    }

    private func feed(_ block: StreamingAnalyzer.Block) {
        for row in 0..<block.f0.count {
            modifier.modify(
                frame: block.firstFrame + row, f0: block.f0[row], spectrogram: block.spectrogram,
                aperiodicity: block.aperiodicity, row: row, into: &scratch)
            if block.f0[row] > 0 { inputMedian.add(block.f0[row]) }
            if scratch.f0 > 0 { outputMedian.add(scratch.f0) }
            latestF0 = (block.f0[row], scratch.f0)
            timeline.add(&scratch)
            while let output = timeline.nextOutputFrame() {
                append(output)
            }
        }
    }

    /// At the end, output frames past the last input frame hold the last frame, until WORLD's frame count
    /// for the output length is reached.
    private func feedRemainingFrames(outputLength: Int) {
        let total = F0Contour.frameCount(samples: outputLength, sampleRate: sampleRate, framePeriod: framePeriod)
        while timeline.emittedFrames < total, let output = timeline.holdingLastFrame() {
            append(output)
        }
    }

    private func append(_ frame: ParameterFrame) {
        frame.spectrum.withUnsafeBufferPointer { spectrum in
            frame.aperiodicity.withUnsafeBufferPointer { aperiodicity in
                synthesizer.push(f0: frame.f0, spectrum: spectrum, aperiodicity: aperiodicity)
            }
        }
    }
}

/// Where the vocoder works: on the caller's thread, or on threads of the pool.
private enum VocoderWork {
    case onCaller(Resynthesis)
    case onThreads(VocoderThreads)

    /// Gives the threads back to the pool.
    func stop() {
        if case .onThreads(let threads) = self {
            threads.stop()
        }
    }

    var medians: (input: Double?, output: Double?) {
        switch self {
        case .onCaller(let resynthesis): resynthesis.medians
        case .onThreads(let threads): threads.medians
        }
    }

    var aimState: AimState {
        switch self {
        case .onCaller(let resynthesis): resynthesis.aimState
        case .onThreads(let threads): threads.aimState
        }
    }
}
