import Foundation

/// WORLD analysis of a signal that arrives in pieces.
///
/// With DIO, F0 comes from `StreamingDio`, each frame's once, a fixed look-ahead after its centre; StoneMask
/// refines it from the samples around the frame, and CheapTrick and D4C analyse the frames each DIO block settles,
/// from the samples their windows reach. Every sample is filtered and every frame analysed once, and the latency
/// is DIO's look-ahead plus one DIO block.
///
/// The frames one `push` settles are refined and analysed together, so with `threads` above 1 they share the
/// threads frame by frame; each DIO block's frames are still analysed from a segment of their own, exactly as
/// they would be alone.
///
/// Harvest's tracking has no streaming form, so with Harvest each block of `blockFrames` frames is estimated from
/// a segment reaching `lookBehindFrames` before it and `lookAheadFrames` past it.
///
/// Either way the frames depend only on the signal, never on how it was chunked, and memory holds only the
/// samples that pending frames still reach.
public final class StreamingAnalyzer {
    public enum F0Method: String, Sendable, CaseIterable {
        case dio, harvest
    }

    public struct Options: Sendable, Equatable {
        /// F0 estimator: DIO refined by StoneMask (WORLD's fast path), or Harvest.
        public var f0Method = F0Method.dio
        /// Milliseconds between frames (WORLD: 5 ms).
        public var framePeriod = 5.0
        /// Lowest F0 searched, in Hz (WORLD: 71 Hz); also sets CheapTrick's FFT size.
        public var f0Floor = 71.0
        /// Highest F0 searched, in Hz (WORLD: 800 Hz).
        public var f0Ceil = 800.0
        /// DIO: milliseconds of input past a frame's centre before its F0 is settled (nil: `StreamingDio`'s
        /// default, and never less than the widest spectral window). Longer agrees with whole-signal DIO on more
        /// frames; the latency grows by as much.
        public var lookAhead: Double?
        /// Harvest: frames estimated together (nil: 1 s). Smaller blocks lower the latency and raise the cost, as
        /// each block analyses its context again: at 1 s the context adds 45 % to Harvest's work, at 250 ms 180 %.
        public var blockFrames: Int?
        /// Harvest: frames of context after a block (nil: 150 ms, and never less than the widest spectral window).
        /// Adds to the latency.
        public var lookAheadFrames: Int?
        /// Harvest: frames of context before a block (nil: 300 ms, and never less than the look-ahead). Adds to
        /// the work, not the latency.
        public var lookBehindFrames: Int?
        /// Threads the frames' StoneMask, CheapTrick and D4C analyses are shared among (default 1: the caller's
        /// alone). The frames are the same for any number.
        public var threads = 1

        public init() {}
    }

    /// Consecutive analysed frames, starting at frame `firstFrame` of the stream.
    public struct Block: Sendable {
        public var firstFrame: Int
        public var f0: [Double]
        public var spectrogram: Matrix
        public var aperiodicity: Matrix
    }

    public let sampleRate: Int
    public let options: Options
    public let fftSize: Int
    /// Once `latency` samples past a frame's centre have arrived, `push` has returned that frame.
    public let latency: Int

    private let frames: FrameGrid
    private let cheapTrick: CheapTrick
    private let d4c: D4C
    /// Samples a spectral window can reach past its frame's centre.
    private let spectralReach: Int
    private var f0Source: F0Source
    private var retained: [Double] = []
    private var retainedStart = 0
    private var received = 0
    private var nextFrame = 0

    public init(sampleRate: Int, options: Options = Options()) {
        self.sampleRate = sampleRate
        self.options = options
        frames = FrameGrid(sampleRate: sampleRate, framePeriod: options.framePeriod)
        cheapTrick = CheapTrick(sampleRate: sampleRate, options: CheapTrick.Options(f0Floor: options.f0Floor))
        fftSize = cheapTrick.fftSize
        d4c = D4C(sampleRate: sampleRate, fftSize: fftSize)
        spectralReach = StreamingAnalyzer.spectralReach(sampleRate: sampleRate, fftSize: fftSize)
        switch options.f0Method {
        case .dio:
            let source = DioSource(sampleRate: sampleRate, options: options, frames: frames, spectralReach: spectralReach)
            latency = source.latency
            f0Source = .dio(source)
        case .harvest:
            let source = HarvestSource(sampleRate: sampleRate, options: options, frames: frames, spectralReach: spectralReach)
            latency = source.latency
            f0Source = .harvest(source)
        }
    }

    /// Samples past a frame's centre that CheapTrick or D4C may read: D4C's 4-period windows at its 47 Hz floor,
    /// shifted by a quarter period, or CheapTrick's 3-period window at the lowest F0 its FFT holds.
    private static func spectralReach(sampleRate: Int, fftSize: Int) -> Int {
        let d4cReach = Int((Double(sampleRate) * 2.25 / 47.0).rounded(.up))
        return max(d4cReach, fftSize / 2) + 2
    }

    /// Samples held for frames still to come; bounded by their windows' reach and the latest chunk.
    var retainedSampleCount: Int { retained.count }

    /// Takes the next samples; returns the frames that became complete, in one block (none if no frame did).
    public func push(_ samples: [Double]) throws -> [Block] {
        if let index = samples.firstIndex(where: { !$0.isFinite }) {
            throw WorldError.nonFiniteSample(index: received + index)
        }
        retained.append(contentsOf: samples)
        received += samples.count
        let groups = retained.withUnsafeBufferPointer { buffer in
            f0Source.push(samples, signal: signalView(buffer, ended: false))
        }
        let blocks = analyze(groups, signalEnd: nil)
        discardSamplesNoLongerNeeded()
        return blocks
    }

    /// No more samples: analyses every remaining frame of WORLD's frame count for the whole stream.
    public func finish() throws -> [Block] {
        let minimum = SignalRequirements.minimumLength(sampleRate: sampleRate, f0Floor: options.f0Floor)
        guard received >= minimum else { throw WorldError.signalTooShort(samples: received, minimum: minimum) }
        let frameCount = F0Contour.frameCount(samples: received, sampleRate: sampleRate, framePeriod: options.framePeriod)
        let groups = retained.withUnsafeBufferPointer { buffer in
            f0Source.finish(frameCount: frameCount, signal: signalView(buffer, ended: true))
        }
        return analyze(groups, signalEnd: received)
    }

    private func signalView(_ buffer: UnsafeBufferPointer<Double>, ended: Bool) -> SignalView {
        SignalView(samples: buffer, start: retainedStart, length: ended ? received : Int.max)
    }

    /// CheapTrick and D4C over consecutive groups at once, in one block.
    private func analyze(_ groups: [F0Group], signalEnd: Int?) -> [Block] {
        guard let first = groups.first, let last = groups.last else { return [] }
        let segments = groups.map { segment(of: $0, signalEnd: signalEnd) }
        nextFrame = last.firstFrame + last.f0.count
        return [Block(
            firstFrame: first.firstFrame, f0: groups.flatMap(\.f0),
            spectrogram: cheapTrick.estimate(segments, threads: options.threads),
            aperiodicity: d4c.estimate(segments, threads: options.threads))]
    }

    /// The samples the group's windows reach: up to the frames' reach past the last frame (which has always
    /// arrived once its F0 is settled), or to the end of a finished stream.
    private func segment(of group: F0Group, signalEnd: Int?) -> SignalSegment {
        let lastFrame = group.firstFrame + group.f0.count - 1
        let start = max(0, frames.centre(of: group.firstFrame) - spectralReach)
        let end = signalEnd ?? (frames.centre(of: lastFrame) + spectralReach + 1)
        precondition(start >= retainedStart && end <= received, "a block's windows reach samples not held")
        let time = (group.firstFrame...lastFrame).map { frames.time(of: $0, from: start) }
        return SignalSegment(
            signal: Array(retained[(start - retainedStart)..<(end - retainedStart)]),
            contour: F0Contour(time: time, f0: group.f0))
    }

    private func discardSamplesNoLongerNeeded() {
        let keepFrom = min(
            frames.centre(of: nextFrame) - spectralReach, f0Source.firstSampleNeeded)
        let drop = min(keepFrom - retainedStart, retained.count)
        guard drop > 0, drop >= retained.count / 2 else { return }
        retained.removeFirst(drop)
        retainedStart += drop
    }
}

/// Frame centres in samples and seconds.
private struct FrameGrid {
    let sampleRate: Int
    let samplesPerFrame: Double

    init(sampleRate: Int, framePeriod: Double) {
        self.sampleRate = sampleRate
        samplesPerFrame = framePeriod * Double(sampleRate) / 1000
    }

    /// The sample nearest the frame's centre.
    func centre(of frame: Int) -> Int {
        Int((Double(frame) * samplesPerFrame).rounded())
    }

    /// The frame's centre in seconds after sample `origin`.
    func time(of frame: Int, from origin: Int) -> Double {
        (Double(frame) * samplesPerFrame - Double(origin)) / Double(sampleRate)
    }
}

/// Final F0 for consecutive frames, analysed spectrally together.
private struct F0Group {
    var firstFrame: Int
    var f0: [Double]
}

private enum F0Source {
    case dio(DioSource)
    case harvest(HarvestSource)

    func push(_ samples: [Double], signal: SignalView) -> [F0Group] {
        switch self {
        case .dio(let source): source.push(samples, signal: signal)
        case .harvest(let source): source.push(signal: signal)
        }
    }

    func finish(frameCount: Int, signal: SignalView) -> [F0Group] {
        switch self {
        case .dio(let source): source.finish(signal: signal)
        case .harvest(let source): source.finish(frameCount: frameCount, signal: signal)
        }
    }

    /// The first sample the source may still read.
    var firstSampleNeeded: Int {
        switch self {
        case .dio(let source): source.firstSampleNeeded
        case .harvest(let source): source.firstSampleNeeded
        }
    }
}

/// F0 from `StreamingDio`, refined frame by frame by StoneMask; one group per DIO block that settles frames.
private final class DioSource {
    let latency: Int
    private let frames: FrameGrid
    private let dio: StreamingDio
    /// One refiner for each thread refining at once.
    private let refiners: WorkspacePool<StoneMask.Refiner>
    private let threads: Int
    private let stoneMaskReach: Int
    private var fed = 0
    private var nextFrame = 0

    init(sampleRate: Int, options: StreamingAnalyzer.Options, frames: FrameGrid, spectralReach: Int) {
        self.frames = frames
        var dioOptions = StreamingDio.Options()
        dioOptions.dio.framePeriod = options.framePeriod
        dioOptions.dio.f0Floor = options.f0Floor
        dioOptions.dio.f0Ceil = options.f0Ceil
        stoneMaskReach = StoneMask.reach(sampleRate: sampleRate, lowestF0: options.f0Floor)
        // Settling a frame must wait for every sample its StoneMask and spectral windows read.
        let reach = Double(max(spectralReach, stoneMaskReach) + 1) * 1000 / Double(sampleRate)
        dioOptions.lookAhead = max(options.lookAhead ?? dioOptions.lookAhead, reach)
        dio = StreamingDio(sampleRate: sampleRate, options: dioOptions)
        refiners = WorkspacePool { StoneMask.Refiner(sampleRate: sampleRate) }
        threads = options.threads
        latency = dio.latency
    }

    /// Feeds DIO one block at a time, so each group holds exactly the frames one block settled.
    func push(_ samples: [Double], signal: SignalView) -> [F0Group] {
        var settled: [[Double]] = []
        var offset = 0
        while offset < samples.count {
            let toBoundary = dio.blockLength - fed % dio.blockLength
            let end = min(samples.count, offset + toBoundary)
            let block = dio.push(Array(samples[offset..<end]))
            fed += end - offset
            offset = end
            if !block.isEmpty {
                settled.append(block)
            }
        }
        return refined(settled, signal: signal)
    }

    func finish(signal: SignalView) -> [F0Group] {
        let settled = dio.finish()
        return refined(settled.isEmpty ? [] : [settled], signal: signal)
    }

    /// StoneMask on every frame of the groups DIO settled, the frames shared among the threads.
    private func refined(_ raw: [[Double]], signal: SignalView) -> [F0Group] {
        let first = nextFrame
        let initial = raw.flatMap { $0 }
        var f0 = [Double](repeating: 0, count: initial.count)
        f0.withUnsafeMutableBufferPointer { f0 in
            // A frame costs tens of microseconds, so even a few make a share worth a thread.
            Parallel.forEachRange(initial.count, threads: threads, minimumLength: 4) { range in
                refiners.withWorkspace { refiner in
                    for index in range {
                        f0[index] = refiner.refined(initial[index], at: frames.time(of: first + index, from: 0), in: signal)
                    }
                }
            }
        }
        nextFrame += initial.count
        var groups: [F0Group] = []
        var groupStart = 0
        for block in raw {
            groups.append(F0Group(firstFrame: first + groupStart, f0: Array(f0[groupStart..<(groupStart + block.count)])))
            groupStart += block.count
        }
        return groups
    }

    var firstSampleNeeded: Int { frames.centre(of: nextFrame) - stoneMaskReach }
}

/// Harvest on overlapping segments: each block of frames from a segment with context on both sides. Block
/// boundaries are fixed on the frame grid, so chunking does not change them.
private final class HarvestSource {
    let latency: Int
    private let sampleRate: Int
    private let frames: FrameGrid
    private let harvest: Harvest
    private let blockFrames: Int
    private let lookAheadFrames: Int
    private let lookBehindFrames: Int
    private var nextFrame = 0

    init(sampleRate: Int, options: StreamingAnalyzer.Options, frames: FrameGrid, spectralReach: Int) {
        self.sampleRate = sampleRate
        self.frames = frames
        var harvestOptions = Harvest.Options()
        harvestOptions.framePeriod = options.framePeriod
        harvestOptions.f0Floor = options.f0Floor
        harvestOptions.f0Ceil = options.f0Ceil
        harvest = Harvest(sampleRate: sampleRate, options: harvestOptions)
        let period = options.framePeriod
        blockFrames = max(1, options.blockFrames ?? Int(1000 / period))
        let spectralFrames = Int((Double(spectralReach) / frames.samplesPerFrame).rounded(.up)) + 1
        lookAheadFrames = max(spectralFrames, options.lookAheadFrames ?? Int((150 / period).rounded(.up)))
        lookBehindFrames = max(lookAheadFrames, options.lookBehindFrames ?? Int((300 / period).rounded(.up)))
        latency = Int((Double(blockFrames - 1 + lookAheadFrames) * frames.samplesPerFrame).rounded(.up)) + 1
    }

    func push(signal: SignalView) -> [F0Group] {
        var groups: [F0Group] = []
        while sampleEnd(ofBlockEndingAt: nextFrame + blockFrames) <= signal.start + signal.samples.count {
            groups.append(estimate(frames: nextFrame..<(nextFrame + blockFrames), signal: signal, reachesEnd: false))
        }
        return groups
    }

    func finish(frameCount: Int, signal: SignalView) -> [F0Group] {
        var groups: [F0Group] = []
        while nextFrame < frameCount {
            let end = min(frameCount, nextFrame + blockFrames)
            let reachesEnd = sampleEnd(ofBlockEndingAt: end) >= signal.length
            groups.append(estimate(frames: nextFrame..<end, signal: signal, reachesEnd: reachesEnd))
        }
        return groups
    }

    /// The sample after the last one a block's segment needs: its last frame plus the look-ahead. At the
    /// start of the stream, where nothing lies behind, the segment reaches as far ahead as it would have
    /// reached behind, so Harvest never sees a shorter segment than elsewhere.
    private func sampleEnd(ofBlockEndingAt end: Int) -> Int {
        let start = segmentStartFrame(forBlockAt: end - blockFrames)
        let last = max(end - 1 + lookAheadFrames, start + blockFrames - 1 + lookAheadFrames + lookBehindFrames)
        return Int((Double(last) * frames.samplesPerFrame).rounded(.up)) + 1
    }

    /// The first frame of a block's segment. The last block looks further behind, as far as the first block
    /// looks ahead, for the same reason.
    private func segmentStartFrame(forBlockAt first: Int, isLast: Bool = false) -> Int {
        max(0, first - lookBehindFrames - (isLast ? lookAheadFrames : 0))
    }

    var firstSampleNeeded: Int {
        frames.centre(of: segmentStartFrame(forBlockAt: nextFrame, isLast: true))
    }

    /// Harvest over one block's segment; a block whose segment reaches the end of the stream takes the
    /// stream's last sample as its end and looks further behind.
    private func estimate(frames block: Range<Int>, signal: SignalView, reachesEnd: Bool) -> F0Group {
        let firstSegmentFrame = segmentStartFrame(forBlockAt: block.lowerBound, isLast: reachesEnd)
        let start = frames.centre(of: firstSegmentFrame)
        let end = reachesEnd ? signal.length : sampleEnd(ofBlockEndingAt: block.upperBound)
        let segment = Array(signal.samples[(start - signal.start)..<(end - signal.start)])
        let contour = harvest.estimate(segment)
        let offset = block.lowerBound - firstSegmentFrame
        nextFrame = block.upperBound
        return F0Group(
            firstFrame: block.lowerBound,
            f0: (0..<block.count).map { contour.f0[min(offset + $0, contour.frameCount - 1)] })
    }
}
