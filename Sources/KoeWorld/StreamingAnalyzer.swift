import KoeDSP

/// WORLD analysis of a signal that arrives in pieces.
///
/// With DIO, F0 comes from `StreamingDio`, each frame's once, a fixed look-ahead after its centre; StoneMask
/// refines it from the samples around the frame, and CheapTrick and D4C analyse the frames each DIO block settles,
/// from the samples their windows reach. Every sample is filtered and every frame analysed once, and the latency
/// is DIO's look-ahead plus one DIO block.
///
/// Harvest's contour has no streaming form, so with Harvest each block (`AnalysisOptions.harvestBlock`) takes its
/// contour from the frames reaching `lookBehind` before it and `lookAhead` past it; each frame's candidates, which
/// depend only on the signal near it, are computed once (`StreamingHarvest`). The first block, with nothing behind
/// it, reaches as much further ahead instead, so the latency is a block, the look-ahead and the look-behind.
///
/// Either way the frames depend only on the signal, never on how it was chunked, and memory holds only the
/// samples that pending frames still reach. CheapTrick's and D4C's safeguard noise starts at WORLD's seed at every
/// frame (`SafeguardNoise.eachFrame`), so a frame's spectra do not depend on the block it falls in either.
///
/// A stream of any length is analysed, as WORLD analyses a signal of any length: WORLD's frame count for its length,
/// DIO's and Harvest's filters reading zeros past its end, CheapTrick's and D4C's windows its last sample. An empty
/// stream has no frames.
///
/// `push` and `finish` throw `WorldError` on samples that are not finite and once the stream has finished; the
/// analyzer never traps on its input.
///
/// Inside the package, `pushPending` settles the frames' F0 (Harvest's final, DIO's for StoneMask) and copies the
/// samples their analysis reads, leaving the analysis itself (StoneMask, CheapTrick, D4C) to
/// `PendingBlock.analyzed()`, which any thread may run; `push` does both, the blocks side by side on `threads`
/// threads. Blocks handed back to the `recycler` once used lend their arrays to later blocks, those their analysis
/// worked in (sample copy included) with them, so that with DIO the analysis allocates nothing per block in steady
/// state, and nothing from the first push on once `reserve(forPushesOf:)` has made room.
public final class StreamingAnalyzer {
    /// Consecutive analysed frames, starting at frame `firstFrame` of the stream.
    public struct Block: Sendable {
        public var firstFrame: Int
        public var f0: [Double]
        public var spectrogram: Matrix
        public var aperiodicity: Matrix
        /// Arrays the analysis is done with, which go back to the recycler with the block. Given back at once,
        /// while the pending block that shares them may still be alive, the next take would find them shared
        /// and copy them. A block kept rather than recycled keeps them too, its copy of the samples its
        /// analysis read among them.
        fileprivate var spent = SpentArrays()
    }

    /// A block's working arrays: its frames' times, the DIO F0 StoneMask refined (none with Harvest), and its
    /// copy of the samples.
    fileprivate struct SpentArrays: Sendable {
        var time: [Double] = []
        var initialF0: [Double] = []
        var samples: [Double] = []
    }

    /// Consecutive frames whose F0 the samples so far settle, with a copy of every sample their analysis reads.
    package struct PendingBlock: Sendable {
        let firstFrame: Int
        package let frameCount: Int
        fileprivate let group: F0Group
        fileprivate let samples: SignalCopy
        /// The samples CheapTrick and D4C read.
        fileprivate let spectralRange: Range<Int>
        fileprivate let tools: AnalysisTools

        /// The block's final F0 alone, as `analyzed()` finds it, without the spectral analysis.
        func f0() -> [Double] {
            var f0: [Double] = []
            tools.finalF0(group, samples: samples, into: &f0)
            return f0
        }

        /// The block `push` would have returned; safe to run for several blocks at once, on any threads.
        /// `threads` share the block's CheapTrick and D4C frames. The block's arrays are recycled ones when
        /// there are any; the copies this pending block holds travel with the block, back to the recycler.
        package func analyzed(threads: Int = 1) -> Block {
            let recycler = tools.recycler
            var f0 = recycler.takeFrameValues()
            tools.finalF0(group, samples: samples, into: &f0)
            var time = recycler.takeFrameValues()
            for frame in firstFrame..<(firstFrame + frameCount) {
                time.append(tools.frames.time(of: frame, from: spectralRange.lowerBound))
            }
            var spectrogram = recycler.takeMatrix()
            var aperiodicity = recycler.takeMatrix()
            let contour = F0Contour(sameLengthTime: time, f0: f0)
            samples.withSlice(spectralRange) { segment in
                tools.cheapTrick.estimate(segment, contour: contour, threads: threads, into: &spectrogram)
                tools.d4c.estimate(segment, contour: contour, threads: threads, into: &aperiodicity)
            }
            var spent = SpentArrays(time: time, samples: samples.samples)
            if case .refine(let initial, _) = group.estimate {
                spent.initialF0 = initial
            }
            return Block(firstFrame: firstFrame, f0: f0, spectrogram: spectrogram, aperiodicity: aperiodicity, spent: spent)
        }
    }

    /// Takes back blocks their consumer is done with, for their arrays to hold later blocks. A shared recycler
    /// takes and gives back on any thread; one that is not takes no lock, as its analyzer and the blocks' consumer
    /// work on one thread at a time.
    package final class Recycler: @unchecked Sendable {
        /// Nil when the recycler is not shared.
        private let lock: Lock?
        private var samples: [[Double]] = []
        private var frameValues: [[Double]] = []
        private var matrices: [Matrix] = []

        init(shared: Bool) {
            lock = shared ? Lock() : nil
        }

        /// The block's arrays will hold a later block's; a copy the caller keeps stays as it is.
        package func recycle(_ block: Block) {
            locked {
                frameValues.append(block.f0)
                frameValues.append(block.spent.time)
                if block.spent.initialF0.capacity > 0 {
                    frameValues.append(block.spent.initialF0)
                }
                samples.append(block.spent.samples)
                matrices.append(block.spectrogram)
                matrices.append(block.aperiodicity)
            }
        }

        /// An empty array, with the capacity of one given back when there is one. (Each take empties the array
        /// it popped itself: handing it to a shared helper first shares its buffer, and emptying then copies it,
        /// four allocations a block in `make bench-micro`.)
        fileprivate func takeSamples() -> [Double] {
            var values = locked { samples.popLast() } ?? []
            values.removeAll(keepingCapacity: true)
            return values
        }

        func takeFrameValues() -> [Double] {
            var values = locked { frameValues.popLast() } ?? []
            values.removeAll(keepingCapacity: true)
            return values
        }

        fileprivate func takeMatrix() -> Matrix {
            locked { matrices.popLast() } ?? Matrix()
        }

        /// Holds `blocks` blocks' arrays up front, with room for `frames` frames of `bins` bins and for `samples`
        /// samples: blocks no larger then take arrays that never grow.
        func stock(blocks: Int, frames: Int, samples sampleCount: Int, bins: Int) {
            locked {
                for _ in 0..<blocks {
                    for _ in 0..<3 {
                        frameValues.append([])
                        frameValues[frameValues.count - 1].reserveCapacity(frames)
                    }
                    samples.append([])
                    samples[samples.count - 1].reserveCapacity(sampleCount)
                    for _ in 0..<2 {
                        var matrix = Matrix()
                        matrix.storage.reserveCapacity(frames * bins)
                        matrices.append(matrix)
                    }
                }
            }
        }

        private func locked<Result>(_ body: () -> Result) -> Result {
            lock?.lock()
            defer { lock?.unlock() }
            return body()
        }
    }

    public let sampleRate: Int
    public let options: AnalysisOptions
    public let fftSize: Int
    /// Once `latency` samples past a frame's centre have arrived, `push` has returned that frame.
    public let latency: Int

    /// Where consumers hand finished blocks back, for their arrays to hold later blocks.
    package var recycler: Recycler { tools.recycler }

    private let tools: AnalysisTools
    /// Samples a spectral window can reach past its frame's centre.
    private let spectralReach: Int
    private var f0Source: F0Source
    /// The groups the latest samples settled, and the blocks `push` analyses; emptied, capacity kept, each time.
    private var groups: [F0Group] = []
    private var pendingBlocks: [PendingBlock] = []
    private var retained: [Double] = []
    private var retainedStart = 0
    private var received = 0
    private var nextFrame = 0
    private var isFinished = false


    /// Throws if the rate is not supported or an option is out of range.
    public convenience init(sampleRate: Int, options: AnalysisOptions = AnalysisOptions()) throws(WorldError) {
        try self.init(sampleRate: sampleRate, options: options, blocksCrossThreads: false)
    }

    /// `blocksCrossThreads`: whether pending blocks are analyzed, or blocks recycled, on threads other than the
    /// one that pushes (as `VoiceShift`'s vocoder threads do). Only then, or with `options.threads` above 1, do the
    /// analyzer's recycler and workspaces take locks.
    package init(sampleRate: Int, options: AnalysisOptions, blocksCrossThreads: Bool) throws(WorldError) {
        try Self.validate(options, sampleRate: sampleRate)
        let shared = blocksCrossThreads || options.threads > 1
        self.sampleRate = sampleRate
        self.options = options
        let frames = FrameGrid(sampleRate: sampleRate, framePeriod: options.framePeriod)
        let cheapTrick = try CheapTrick(sampleRate: sampleRate, options: options.cheapTrick, shared: shared, noise: .eachFrame)
        fftSize = cheapTrick.fftSize
        spectralReach = StreamingAnalyzer.spectralReach(
            sampleRate: sampleRate, fftSize: fftSize, lowestF0: options.live ? options.f0Floor : D4C.f0Floor)
        let recycler = Recycler(shared: shared)
        tools = AnalysisTools(
            frames: frames, lowestVoicedF0: options.live ? options.f0Floor : 0,
            cheapTrick: cheapTrick, d4c: try D4C(sampleRate: sampleRate, fftSize: fftSize, shared: shared, noise: .eachFrame),
            refiners: WorkspacePool(shared: shared) { StoneMask.Refiner(sampleRate: sampleRate) }, recycler: recycler)
        switch options.f0Method {
        case .dio:
            let source = DioSource(
                sampleRate: sampleRate, options: options, frames: frames, spectralReach: spectralReach, recycler: recycler)
            latency = source.latency
            f0Source = .dio(source)
        case .harvest:
            let source = HarvestSource(
                harvest: try Harvest(sampleRate: sampleRate, options: options.harvest), options: options, frames: frames,
                spectralReach: spectralReach, threads: options.threads)
            latency = source.latency
            f0Source = .harvest(source)
        }
    }

    private static func validate(_ options: AnalysisOptions, sampleRate: Int) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try SignalRequirements.validateF0Range(floor: options.f0Floor, ceil: options.f0Ceil, sampleRate: sampleRate)
        if let problem = options.problem(sampleRate: sampleRate, framePeriods: SignalRequirements.framePeriods) {
            throw .invalidOption(problem)
        }
    }

    /// Samples past a frame's centre that CheapTrick or D4C may read: D4C's 4-period windows at `lowestF0`,
    /// shifted by a quarter period, or CheapTrick's 3-period window at the lowest F0 its FFT holds.
    private static func spectralReach(sampleRate: Int, fftSize: Int, lowestF0: Double) -> Int {
        let d4cReach = Int((Double(sampleRate) * 2.25 / max(lowestF0, D4C.f0Floor)).rounded(.up))
        return max(d4cReach, fftSize / 2) + 2
    }

    /// Makes room for pushes of up to `samples` samples, DIO's blocks included: such a push then allocates
    /// nothing once the stream has begun. (Harvest's blocks, made for files, are not provided for.)
    package func reserve(forPushesOf samples: Int) {
        guard case .dio(let source) = f0Source else { return }
        let bound = source.groups(forPushesOf: samples)
        let framesSpan = Int(((Double(bound.frames) + 1) * tools.frames.samplesPerFrame).rounded(.up))
        let copied = framesSpan + 2 * (max(spectralReach, source.stoneMaskReach) + 1)
        tools.recycler.stock(blocks: bound.groups + 1, frames: bound.frames, samples: copied, bins: fftSize / 2 + 1)
        tools.d4c.reserve(frames: bound.frames)
        groups.reserveCapacity(bound.groups)
        pendingBlocks.reserveCapacity(bound.groups)
        // Held from the first sample a frame still to come reads; dropped once half can go.
        retained.reserveCapacity(2 * (latency + copied + samples))
    }

    /// The most blocks a push of `samples` samples completes with DIO (nil with Harvest).
    package func mostBlocks(perPushOf samples: Int) -> Int? {
        guard case .dio(let source) = f0Source else { return nil }
        return source.groups(forPushesOf: samples).groups
    }

    /// Samples held for frames still to come; bounded by their windows' reach and the latest chunk.
    var retainedSampleCount: Int { retained.count }

    /// Takes the next samples; returns the blocks that became complete. Throws if a sample is not finite (the
    /// stream is then left as it was) or the stream has finished.
    public func push(_ samples: [Double]) throws(WorldError) -> [Block] {
        var blocks: [Block] = []
        try push(samples, into: &blocks)
        return blocks
    }

    /// Takes the next samples; appends the blocks that became complete to `blocks`.
    package func push(_ samples: [Double], into blocks: inout [Block]) throws(WorldError) {
        defer { pendingBlocks.removeAll(keepingCapacity: true) }
        try pushPending(samples, into: &pendingBlocks)
        analyze(pendingBlocks, into: &blocks)
    }

    /// No more samples: analyses every remaining frame of WORLD's frame count for the whole stream, however
    /// short (none for an empty stream). Throws if the stream has finished already.
    public func finish() throws(WorldError) -> [Block] {
        var blocks: [Block] = []
        analyze(try finishPending(), into: &blocks)
        return blocks
    }

    /// Takes the next samples; returns the blocks that became complete, their analysis still to run.
    func pushPending(_ samples: [Double]) throws(WorldError) -> [PendingBlock] {
        var blocks: [PendingBlock] = []
        try pushPending(samples, into: &blocks)
        return blocks
    }

    /// Takes the next samples; appends the blocks that became complete, their analysis still to run, to `blocks`.
    package func pushPending(_ samples: [Double], into blocks: inout [PendingBlock]) throws(WorldError) {
        guard !isFinished else { throw .streamFinished }
        try SignalRequirements.requireFinite(samples, offset: received)
        retained.append(contentsOf: samples)
        received += samples.count
        groups.removeAll(keepingCapacity: true)
        f0Source.push(samples, held: retained, heldStart: retainedStart, into: &groups)
        for group in groups {
            blocks.append(pending(group, signalEnd: nil))
        }
        discardSamplesNoLongerNeeded()
    }

    /// No more samples: every remaining frame of WORLD's frame count for the whole stream, its analysis still
    /// to run; none for an empty stream.
    package func finishPending() throws(WorldError) -> [PendingBlock] {
        guard !isFinished else { throw .streamFinished }
        isFinished = true
        // Without a sample, no window has anything to read.
        guard received > 0 else { return [] }
        let frameCount = F0Contour.frameCount(samples: received, sampleRate: sampleRate, framePeriod: options.framePeriod)
        return f0Source.finish(frameCount: frameCount, held: retained, heldStart: retainedStart).map { pending($0, signalEnd: received) }
    }

    /// Several blocks side by side on the threads; a lone block's frames shared among them.
    private func analyze(_ pending: [PendingBlock], into blocks: inout [Block]) {
        guard pending.count > 1, options.threads > 1 else {
            for block in pending {
                blocks.append(block.analyzed(threads: options.threads))
            }
            return
        }
        var analysed = [Block?](repeating: nil, count: pending.count)
        analysed.withUnsafeMutableBufferPointer { analysed in
            Parallel.forEach(pending.count, threads: options.threads) { index in
                analysed[index] = pending[index].analyzed()
            }
        }
        blocks.append(contentsOf: analysed.map { $0! })
    }

    /// The group with a copy of the samples its F0 source reads and its spectral windows reach: up to the
    /// frames' reach past the last frame (which has always arrived once its F0 is settled), or to the end of a
    /// finished stream.
    private func pending(_ group: F0Group, signalEnd: Int?) -> PendingBlock {
        let frames = tools.frames
        let lastFrame = group.firstFrame + group.frameCount - 1
        let spectral = max(0, frames.centre(of: group.firstFrame) - spectralReach)
            ..< (signalEnd ?? (frames.centre(of: lastFrame) + spectralReach + 1))
        let read = group.samplesRead ?? spectral
        let copied = min(spectral.lowerBound, read.lowerBound)..<max(spectral.upperBound, read.upperBound)
        assert(copied.lowerBound >= retainedStart && copied.upperBound <= received, "a block's windows reach samples not held")
        var copy = tools.recycler.takeSamples()
        copy.append(contentsOf: retained[(copied.lowerBound - retainedStart)..<(copied.upperBound - retainedStart)])
        let samples = SignalCopy(samples: copy, start: copied.lowerBound, signalLength: signalEnd ?? Int.max)
        nextFrame = lastFrame + 1
        return PendingBlock(
            firstFrame: group.firstFrame, frameCount: group.frameCount, group: group, samples: samples,
            spectralRange: spectral, tools: tools)
    }

    private func discardSamplesNoLongerNeeded() {
        let keepFrom = min(
            tools.frames.centre(of: nextFrame) - spectralReach, f0Source.firstSampleNeeded)
        let drop = min(keepFrom - retainedStart, retained.count)
        guard drop > 0, drop >= retained.count / 2 else { return }
        retained.removeFirst(drop)
        retainedStart += drop
    }
}

/// What analyses pending blocks, shared by all of them; safe to use on several threads at once when the analyzer
/// was made for blocks that cross threads.
private struct AnalysisTools: Sendable {
    let frames: FrameGrid
    /// Voiced F0 below this is raised to it (0: never), so that no window reaches past the analyzer's bound.
    let lowestVoicedF0: Double
    let cheapTrick: CheapTrick
    let d4c: D4C
    /// One StoneMask refiner for each thread refining at once.
    let refiners: WorkspacePool<StoneMask.Refiner>
    let recycler: StreamingAnalyzer.Recycler

    /// The group's final F0, appended to `f0`: DIO's refined by StoneMask frame by frame, or Harvest's as settled.
    func finalF0(_ group: F0Group, samples: SignalCopy, into f0: inout [Double]) {
        switch group.estimate {
        case .refine(let initial, _):
            samples.withView { signal in
                refiners.withWorkspace { refiner in
                    for index in initial.indices {
                        let refined = refiner.refined(initial[index], at: frames.time(of: group.firstFrame + index, from: 0), in: signal)
                        f0.append(refined > 0 ? max(refined, lowestVoicedF0) : refined)
                    }
                }
            }
        case .settled(let settled):
            f0.append(contentsOf: settled)
        }
    }
}

/// A copy of samples `start ..< start + samples.count` of a signal `signalLength` samples long (`Int.max`
/// while it goes on).
private struct SignalCopy: Sendable {
    let samples: [Double]
    let start: Int
    let signalLength: Int

    /// The samples of `range`, in place.
    func withSlice<Result>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<Double>) -> Result) -> Result {
        samples.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[(range.lowerBound - start)..<(range.upperBound - start)])) }
    }

    func withView<Result>(_ body: (SignalView) -> Result) -> Result {
        samples.withUnsafeBufferPointer { body(SignalView(samples: $0, start: start, length: signalLength)) }
    }
}
