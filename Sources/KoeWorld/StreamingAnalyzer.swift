import Foundation

/// WORLD analysis of a signal that arrives in pieces.
///
/// Frames are analysed in fixed blocks of `blockFrames`, each from a segment that reaches `lookBehindFrames`
/// before the block and `lookAheadFrames` past it, so F0 tracking and the spectral windows see the
/// neighbourhood they would in the whole signal. Looking behind costs no latency, only work; DIO's contour
/// repair needs about 100 ms of it to agree with whole-signal analysis. Block boundaries are fixed on the frame grid, never by how the input was
/// chunked: any chunking of the same signal gives identical frames. Memory holds one segment of samples.
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
        /// Frames estimated together (nil: 50 ms for DIO, 250 ms for Harvest). Smaller blocks lower the
        /// latency and raise the cost: each block analyses its context again.
        public var blockFrames: Int?
        /// Frames of context after a block (nil: 50 ms for DIO, 150 ms for Harvest, and never less than the
        /// widest spectral window, D4C's 2 / 47 Hz plus a quarter period). Adds to the latency.
        public var lookAheadFrames: Int?
        /// Frames of context before a block (nil: 100 ms for DIO, 300 ms for Harvest, and never less than
        /// the look-ahead). Adds to the work, not the latency.
        public var lookBehindFrames: Int?

        public init() {}
    }

    /// Consecutive analysed frames, starting at frame `firstFrame` of the stream.
    public struct Block {
        public var firstFrame: Int
        public var f0: [Double]
        public var spectrogram: Matrix
        public var aperiodicity: Matrix
    }

    public let sampleRate: Int
    public let options: Options
    public let fftSize: Int
    public let blockFrames: Int
    public let lookAheadFrames: Int
    public let lookBehindFrames: Int

    private let samplesPerFrame: Double
    private let cheapTrick: CheapTrick
    private let d4c: D4C
    private var retained: [Double] = []
    private var retainedStart = 0
    private var received = 0
    private var nextFrame = 0

    /// Seconds of signal a spectral window can reach from its frame (D4C: 2 periods of 47 Hz, shifted by
    /// a quarter period).
    private static let spectralReach = 2.0 / 47.0 + 0.25 / 47.0

    public init(sampleRate: Int, options: Options = Options()) {
        self.sampleRate = sampleRate
        self.options = options
        samplesPerFrame = options.framePeriod * Double(sampleRate) / 1000
        let isDio = options.f0Method == .dio
        let defaultBlock = Int((isDio ? 50 : 250) / options.framePeriod)
        blockFrames = max(1, options.blockFrames ?? defaultBlock)
        let spectralFrames = Int((StreamingAnalyzer.spectralReach * 1000 / options.framePeriod).rounded(.up)) + 1
        let defaultAhead = Int(((isDio ? 50 : 150) / options.framePeriod).rounded(.up))
        lookAheadFrames = max(spectralFrames, options.lookAheadFrames ?? defaultAhead)
        let defaultBehind = Int(((isDio ? 100 : 300) / options.framePeriod).rounded(.up))
        lookBehindFrames = max(lookAheadFrames, options.lookBehindFrames ?? defaultBehind)
        cheapTrick = CheapTrick(sampleRate: sampleRate, options: CheapTrick.Options(f0Floor: options.f0Floor))
        fftSize = cheapTrick.fftSize
        d4c = D4C(sampleRate: sampleRate, fftSize: fftSize)
    }

    /// Input samples that must arrive after a sample before its frame is analysed.
    public var latency: Int {
        Int((Double(blockFrames - 1 + lookAheadFrames) * samplesPerFrame).rounded(.up)) + 1
    }

    /// Samples held for segments still to come; bounded by one segment plus the latest chunk.
    var retainedSampleCount: Int { retained.count }

    /// Takes the next samples; returns the blocks that became complete.
    public func push(_ samples: [Double]) throws -> [Block] {
        if let index = samples.firstIndex(where: { !$0.isFinite }) {
            throw WorldError.nonFiniteSample(index: received + index)
        }
        retained.append(contentsOf: samples)
        received += samples.count
        var blocks: [Block] = []
        while sampleEnd(ofBlockEndingAt: nextFrame + blockFrames) <= received {
            blocks.append(analyzeBlock(frames: nextFrame..<(nextFrame + blockFrames), reachesEnd: false))
        }
        discardSamplesNoLongerNeeded()
        return blocks
    }

    /// No more samples: analyses every remaining frame of WORLD's frame count for the whole stream.
    public func finish() throws -> [Block] {
        let minimum = SignalRequirements.minimumLength(sampleRate: sampleRate, f0Floor: options.f0Floor)
        guard received >= minimum else { throw WorldError.signalTooShort(samples: received, minimum: minimum) }
        let total = F0Contour.frameCount(samples: received, sampleRate: sampleRate, framePeriod: options.framePeriod)
        var blocks: [Block] = []
        while nextFrame < total {
            let end = min(total, nextFrame + blockFrames)
            let reachesEnd = sampleEnd(ofBlockEndingAt: end) >= received
            blocks.append(analyzeBlock(frames: nextFrame..<end, reachesEnd: reachesEnd))
        }
        return blocks
    }

    // MARK: Segments

    private func sampleIndex(ofFrame frame: Int) -> Int {
        Int((Double(frame) * samplesPerFrame).rounded())
    }

    /// The sample after the last one a block's segment needs: its last frame plus the look-ahead. At the
    /// start of the stream, where nothing lies behind, the segment reaches as far ahead as it would have
    /// reached behind, so DIO never sees a shorter segment than elsewhere.
    private func sampleEnd(ofBlockEndingAt end: Int) -> Int {
        let start = segmentStartFrame(forBlockAt: end - blockFrames)
        let last = max(end - 1 + lookAheadFrames, start + blockFrames - 1 + lookAheadFrames + lookBehindFrames)
        return Int((Double(last) * samplesPerFrame).rounded(.up)) + 1
    }

    /// The first frame of a block's segment. The last block looks further behind, as far as the first block
    /// looks ahead, for the same reason.
    private func segmentStartFrame(forBlockAt first: Int, isLast: Bool = false) -> Int {
        max(0, first - lookBehindFrames - (isLast ? lookAheadFrames : 0))
    }

    private func discardSamplesNoLongerNeeded() {
        let keepFrom = sampleIndex(ofFrame: segmentStartFrame(forBlockAt: nextFrame, isLast: true))
        let drop = keepFrom - retainedStart
        guard drop > 0 else { return }
        retained.removeFirst(drop)
        retainedStart = keepFrom
    }

    // MARK: Analysis

    /// Analyses one block from its segment; a block whose segment reaches the end of the stream takes the
    /// stream's last sample as its end and looks further behind.
    private func analyzeBlock(frames: Range<Int>, reachesEnd: Bool) -> Block {
        let firstSegmentFrame = segmentStartFrame(forBlockAt: frames.lowerBound, isLast: reachesEnd)
        let start = sampleIndex(ofFrame: firstSegmentFrame)
        let end = reachesEnd ? received : sampleEnd(ofBlockEndingAt: frames.upperBound)
        let segment = Array(retained[(start - retainedStart)..<(end - retainedStart)])

        let segmentF0 = estimateF0(segment)
        let offset = frames.lowerBound - firstSegmentFrame
        let f0 = (0..<frames.count).map { segmentF0.f0[min(offset + $0, segmentF0.frameCount - 1)] }
        let time = frames.map { (Double($0) * samplesPerFrame - Double(start)) / Double(sampleRate) }
        let contour = F0Contour(time: time, f0: f0)
        nextFrame = frames.upperBound
        return Block(
            firstFrame: frames.lowerBound, f0: f0,
            spectrogram: cheapTrick.estimate(segment, contour: contour),
            aperiodicity: d4c.estimate(segment, contour: contour))
    }

    private func estimateF0(_ segment: [Double]) -> F0Contour {
        switch options.f0Method {
        case .dio:
            var dioOptions = Dio.Options()
            dioOptions.framePeriod = options.framePeriod
            dioOptions.f0Floor = options.f0Floor
            dioOptions.f0Ceil = options.f0Ceil
            let raw = Dio(sampleRate: sampleRate, options: dioOptions).estimate(segment)
            return StoneMask(sampleRate: sampleRate).refine(segment, contour: raw)
        case .harvest:
            var harvestOptions = Harvest.Options()
            harvestOptions.framePeriod = options.framePeriod
            harvestOptions.f0Floor = options.f0Floor
            harvestOptions.f0Ceil = options.f0Ceil
            return Harvest(sampleRate: sampleRate, options: harvestOptions).estimate(segment)
        }
    }
}
