import KoeDSP

// Where a streaming analysis gets its F0: DIO (with StoneMask) or Harvest, each turning input into groups of
// frames whose F0 is settled, for `StreamingAnalyzer` to analyse spectrally.

/// Frame centres in samples and seconds.
struct FrameGrid {
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

/// Consecutive frames whose F0 is settled, analysed spectrally together, and how their final F0 is found.
struct F0Group: Sendable {
    enum Estimate: Sendable {
        /// DIO's F0, for StoneMask to refine from the samples around each frame: `reading` these.
        case refine([Double], reading: Range<Int>)
        /// The final F0, found as the group was settled.
        case settled([Double])
    }

    var firstFrame: Int
    var frameCount: Int
    var estimate: Estimate

    /// The samples the final F0 is found from: none once it is settled.
    var samplesRead: Range<Int>? {
        if case .refine(_, let samples) = estimate { samples } else { nil }
    }
}

enum F0Source {
    case dio(DioSource)
    case harvest(HarvestSource)

    /// Appends the groups settled once the samples `held` (the stream's from `heldStart` on) are held;
    /// `samples` are the latest of them.
    func push(_ samples: [Double], held: [Double], heldStart: Int, into groups: inout [F0Group]) {
        switch self {
        case .dio(let source): source.push(samples, into: &groups)
        case .harvest(let source): source.push(held: held, heldStart: heldStart, into: &groups)
        }
    }

    func finish(frameCount: Int, held: [Double], heldStart: Int) -> [F0Group] {
        switch self {
        case .dio(let source): source.finish(signalLength: heldStart + held.count)
        case .harvest(let source): source.finish(frameCount: frameCount, held: held, heldStart: heldStart)
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

/// F0 from `StreamingDio`, for StoneMask to refine frame by frame; one group per DIO block that settles frames.
final class DioSource {
    let latency: Int
    private let frames: FrameGrid
    private let dio: StreamingDio
    let stoneMaskReach: Int
    /// Lends the arrays that hold each group's DIO F0.
    private let recycler: StreamingAnalyzer.Recycler
    /// The samples of the DIO block being fed, kept from call to call.
    private var blockSamples: [Double] = []
    private var fed = 0
    private var nextFrame = 0

    init(
        sampleRate: Int, options: AnalysisOptions, frames: FrameGrid, spectralReach: Int,
        recycler: StreamingAnalyzer.Recycler
    ) {
        self.frames = frames
        self.recycler = recycler
        var dioOptions = StreamingDio.Options()
        dioOptions.dio = options.dio
        dioOptions.live = options.live
        stoneMaskReach = StoneMask.reach(sampleRate: sampleRate, lowestF0: options.f0Floor)
        // Settling a frame must wait for every sample its StoneMask and spectral windows read.
        let reach = Double(max(spectralReach, stoneMaskReach) + 1) * 1000 / Double(sampleRate)
        dioOptions.lookAhead = max(options.lookAhead ?? dioOptions.lookAhead, reach)
        dio = StreamingDio(sampleRate: sampleRate, options: dioOptions)
        latency = dio.latency
        // DIO is fed at most a block at a time (`push` cuts at block boundaries and at the opening's end).
        dio.reserve(forPushesOf: dio.blockLength)
        blockSamples.reserveCapacity(dio.blockLength)
    }

    /// Feeds DIO one block at a time, and the opening apart from what follows it, so each group holds exactly
    /// the frames one block (or the opening) settled, however the samples arrive.
    func push(_ samples: [Double], into groups: inout [F0Group]) {
        var offset = 0
        while offset < samples.count {
            var toBoundary = dio.blockLength - fed % dio.blockLength
            if fed < dio.openingLength {
                toBoundary = min(toBoundary, dio.openingLength - fed)
            }
            let end = min(samples.count, offset + toBoundary)
            blockSamples.removeAll(keepingCapacity: true)
            blockSamples.append(contentsOf: samples[offset..<end])
            let settled = dio.push(blockSamples)
            fed += end - offset
            offset = end
            if !settled.isEmpty {
                groups.append(group(settled, signalLength: Int.max))
            }
        }
    }

    func finish(signalLength: Int) -> [F0Group] {
        let settled = dio.finish()
        return settled.isEmpty ? [] : [group(settled, signalLength: signalLength)]
    }

    /// The frames with the samples StoneMask reads around them; past the end of a stream of `signalLength`
    /// samples, it repeats the last sample instead of reading on.
    private func group(_ settled: [Double], signalLength: Int) -> F0Group {
        let first = nextFrame
        let last = first + settled.count - 1
        nextFrame += settled.count
        let samples = max(0, frames.centre(of: first) - stoneMaskReach)
            ..< min(signalLength, frames.centre(of: last) + stoneMaskReach + 1)
        var initial = recycler.takeFrameValues()
        initial.append(contentsOf: settled)
        return F0Group(firstFrame: first, frameCount: settled.count, estimate: .refine(initial, reading: samples))
    }

    var firstSampleNeeded: Int { frames.centre(of: nextFrame) - stoneMaskReach }

    /// The most groups a push of `samples` samples completes, one per DIO block and one for the opening, and
    /// the most frames in one: those a block, or the opening, settles.
    func groups(forPushesOf samples: Int) -> (groups: Int, frames: Int) {
        let settling = max(dio.blockLength, dio.openingLength)
        return (samples / dio.blockLength + 2, Int((Double(settling) / frames.samplesPerFrame).rounded(.up)) + 2)
    }
}

/// Harvest in blocks of frames, each from the candidates of a window reaching `lookBehind` before it and
/// `lookAhead` past it, which `StreamingHarvest` computes once a frame. Block boundaries are fixed on the frame
/// grid, so chunking does not change them.
final class HarvestSource {
    let latency: Int
    private let frames: FrameGrid
    private let blockFrames: Int
    private let lookAheadFrames: Int
    private let lookBehindFrames: Int
    private var nextFrame = 0
    private let harvest: StreamingHarvest

    /// `threads`: those Harvest shares each block's channels and frames among.
    init(harvest: Harvest, options: AnalysisOptions, frames: FrameGrid, spectralReach: Int, threads: Int) {
        self.harvest = StreamingHarvest(harvest: harvest, threads: threads)
        self.frames = frames
        let period = options.framePeriod
        blockFrames = max(1, Int((options.harvestBlock ?? 1500) / period))
        let spectralFrames = Int((Double(spectralReach) / frames.samplesPerFrame).rounded(.up)) + 1
        lookAheadFrames = max(spectralFrames, Int(((options.lookAhead ?? 150) / period).rounded(.up)))
        lookBehindFrames = max(lookAheadFrames, Int(((options.lookBehind ?? 300) / period).rounded(.up)))
        // The first block's window reaches past its last frame by the look-behind too (`sampleEnd`): its frame 0
        // waits the longest of any.
        latency = Int((Double(blockFrames - 1 + lookAheadFrames + lookBehindFrames) * frames.samplesPerFrame).rounded(.up)) + 1
    }

    func push(held: [Double], heldStart: Int, into groups: inout [F0Group]) {
        while sampleEnd(ofBlockEndingAt: nextFrame + blockFrames) <= heldStart + held.count {
            groups.append(group(frames: nextFrame..<(nextFrame + blockFrames), held: held, heldStart: heldStart, signalLength: nil))
        }
    }

    func finish(frameCount: Int, held: [Double], heldStart: Int) -> [F0Group] {
        let signalLength = heldStart + held.count
        var groups: [F0Group] = []
        while nextFrame < frameCount {
            let end = min(frameCount, nextFrame + blockFrames)
            let reachesEnd = sampleEnd(ofBlockEndingAt: end) >= signalLength
            groups.append(group(frames: nextFrame..<end, held: held, heldStart: heldStart, signalLength: reachesEnd ? signalLength : nil))
        }
        return groups
    }

    /// The sample after the last one a block's window needs: its last frame plus the look-ahead. At the
    /// start of the stream, where nothing lies behind, the window reaches as far ahead as it would have
    /// reached behind, so Harvest never sees a shorter window than elsewhere.
    private func sampleEnd(ofBlockEndingAt end: Int) -> Int {
        let start = windowStartFrame(forBlockAt: end - blockFrames)
        let last = max(end - 1 + lookAheadFrames, start + blockFrames - 1 + lookAheadFrames + lookBehindFrames)
        return Int((Double(last) * frames.samplesPerFrame).rounded(.up)) + 1
    }

    /// The first frame of a block's window. The last block looks further behind, as far as the first block
    /// looks ahead, for the same reason.
    private func windowStartFrame(forBlockAt first: Int, isLast: Bool = false) -> Int {
        max(0, first - lookBehindFrames - (isLast ? lookAheadFrames : 0))
    }

    var firstSampleNeeded: Int { harvest.firstSampleNeeded }

    /// One block, its F0 chosen over its window; a block whose window reaches the end of the stream (of
    /// `signalLength` samples) takes the stream's last sample as its end and looks further behind.
    private func group(frames block: Range<Int>, held: [Double], heldStart: Int, signalLength: Int?) -> F0Group {
        let end = signalLength ?? sampleEnd(ofBlockEndingAt: block.upperBound)
        let window = harvest.basicFrame(of: windowStartFrame(forBlockAt: block.lowerBound, isLast: signalLength != nil))
            ..< F0Contour.frameCount(samples: end, sampleRate: frames.sampleRate, framePeriod: Harvest.Tuning.basicFramePeriod)
        held.withUnsafeBufferPointer { held in
            harvest.computeCandidates(
                through: window.upperBound, samples: held, samplesStart: heldStart, sampleEnd: end, isEnd: signalLength != nil)
        }
        let contour = harvest.contour(window)
        var f0: [Double] = []
        f0.reserveCapacity(block.count)
        for frame in block {
            f0.append(contour[min(harvest.basicFrame(of: frame), window.upperBound - 1) - window.lowerBound])
        }
        nextFrame = block.upperBound
        harvest.discard(before: harvest.basicFrame(of: windowStartFrame(forBlockAt: nextFrame, isLast: true)))
        return F0Group(firstFrame: block.lowerBound, frameCount: block.count, estimate: .settled(f0))
    }
}
