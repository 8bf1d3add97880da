import Glibc
import KoeDSP

/// WORLD's Harvest F0 estimator (M. Morise, "Harvest: A high-performance fundamental frequency estimator
/// from speech signals", Interspeech 2017).
///
/// The signal is brought down to about 8 kHz and split by many band-pass filters; zero-crossing intervals
/// in each band give raw F0 candidates, which are refined by instantaneous frequency, scored, joined into
/// voiced sections and smoothed. All of this runs on a 1 ms grid; the requested frame period picks the
/// nearest 1 ms frame, exactly as WORLD does.
public struct Harvest: F0Estimator {
    public struct Options: Sendable, Equatable, Codable {
        /// Hop between output frames, in milliseconds. WORLD's default: 5 ms.
        public var framePeriod: Double
        /// Lowest F0 searched, in Hz. WORLD's default: 71 Hz.
        public var f0Floor: Double
        /// Highest F0 searched, in Hz. WORLD's default: 800 Hz.
        public var f0Ceil: Double

        public init(framePeriod: Double = 5.0, f0Floor: Double = 71.0, f0Ceil: Double = 800.0) {
            self.framePeriod = framePeriod
            self.f0Floor = f0Floor
            self.f0Ceil = f0Ceil
        }
    }

    public let sampleRate: Int
    public let options: Options
    /// The band-pass channels, made once: every estimate uses the same.
    private let filterBank: HarvestFilterBank

    /// Throws if the rate is not supported or an option is out of range.
    public init(sampleRate: Int, options: Options = Options()) throws(WorldError) {
        try Self.validate(
            sampleRate: sampleRate, framePeriod: options.framePeriod, f0Floor: options.f0Floor, f0Ceil: options.f0Ceil)
        self.sampleRate = sampleRate
        self.options = options
        let rate = DecimatedSignal.rate(from: sampleRate)
        filterBank = HarvestFilterBank(centres: Self.bandCentres(options), sampleRate: rate)
    }

    public var framePeriod: Double { options.framePeriod }
    public var f0Floor: Double { options.f0Floor }

    public func estimate(_ signal: [Double]) throws(WorldError) -> F0Contour {
        try validate(signal)
        return estimate(unchecked: signal)
    }

    /// `estimate` of a signal segment of any length from 1 sample, finite throughout: the streaming analysis
    /// estimates segments of a longer signal.
    func estimate(unchecked signal: [Double]) -> F0Contour {
        let basic = basicContour(signal)
        let frameCount = F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: options.framePeriod)
        let f0 = (0..<frameCount).map { frame in basic[min(basic.count - 1, basicFrame(of: frame))] }
        return F0Contour(f0: f0, framePeriod: options.framePeriod)
    }

    /// The frame of Harvest's own 1 ms grid that gives frame `frame`: the nearest, as WORLD rounds its time.
    func basicFrame(of frame: Int) -> Int {
        let time = Double(frame) * options.framePeriod / 1000.0
        return Matlab.round(time * 1000.0)
    }

    /// The whole estimation on Harvest's own 1 ms grid.
    private func basicContour(_ signal: [Double]) -> [Double] {
        let frameCount = F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: Tuning.basicFramePeriod)
        let found = candidates(signal, frameTimes: (0..<frameCount).map { Double($0) / 1000.0 })
        return contour(found)
    }

    /// Refined F0 candidates and their scores, a row a frame, at `frameTimes` (seconds after the first sample
    /// of `signal`). Each frame's depend only on the signal within `candidateReach` of it. Channels, then frames,
    /// are shared among up to `threads` threads; the result is the same for any number.
    func candidates(_ signal: [Double], frameTimes: [Double], threads: Int = 1) -> CandidateSet {
        let decimated = DecimatedSignal(signal, sampleRate: sampleRate)
        let raw = ZeroCrossingSearch.rawCandidates(
            decimated, filterBank: filterBank, frameTimes: frameTimes, f0Floor: options.f0Floor, f0Ceil: options.f0Ceil,
            threads: threads)
        var candidates = Self.spreadToNeighbours(Self.officialCandidates(raw, limit: candidatesPerFrame))
        var scores = InstantaneousFrequencyRefiner.refine(
            &candidates, signal: decimated, frameTimes: frameTimes, f0Floor: options.f0Floor, f0Ceil: options.f0Ceil,
            threads: threads)
        Self.removeUnreliableCandidates(&candidates, scores: &scores)
        return CandidateSet(f0: candidates, scores: scores)
    }

    /// The contour the best candidates make, cleaned and smoothed, one value a row of `candidates`.
    func contour(_ candidates: CandidateSet) -> [Double] {
        Self.smoothed(ContourFixer(candidates: candidates.f0, scores: candidates.scores).bestContour())
    }

    /// The most candidates a frame finds in its own channels; with its neighbours' it has seven times as many.
    var candidatesPerFrame: Int { Matlab.round(Double(filterBank.filters.count) / 10.0) }

    /// Milliseconds of signal on each side of a frame its candidates depend on: the longest channel's filter
    /// reaches two periods of its centre and its events are a period apart, the refinement window reaches 1.5
    /// periods of the floor, candidates spread three frames and are checked against one more, and the
    /// decimation filter's start-up lasts `Tuning.decimationEdge`.
    var candidateReach: Int {
        let seconds = 3.0 / filterBank.filters[0].centre + 1.5 / options.f0Floor
        return Int((seconds * 1000).rounded(.up)) + Tuning.spreadFrames + 1 + Tuning.decimationEdge
    }

    /// Per frame, F0 candidates (0 for none) and their scores, in rows of equal width.
    struct CandidateSet {
        var f0: Matrix
        var scores: Matrix
    }

    /// Centre frequencies of the band-pass channels: 40 a octave, from just under the floor to just over the ceil.
    private static func bandCentres(_ options: Options) -> [Double] {
        let lowest = options.f0Floor * 0.9
        let highest = options.f0Ceil * 1.1
        let count = 1 + Int(log(highest / lowest) / Tuning.log2 * Tuning.channelsInOctave)
        return (0..<count).map { lowest * pow(2.0, Double($0 + 1) / Tuning.channelsInOctave) }
    }
}

extension Harvest {
    /// Constants WORLD fixed for Harvest, tuned on speech databases.
    enum Tuning {
        /// WORLD's spelling of ln 2; the exact digits matter for channel counts and FFT sizes.
        static let log2 = 0.69314718055994529
        static let channelsInOctave = 40.0
        /// Harvest analyses near this rate whatever the input rate.
        static let targetSampleRate = 8000.0
        /// Largest decimation factor WORLD designed a filter for.
        static let maximumDecimation = 12
        /// Samples of edge padding (at the input rate, rounded up to whole factors) so decimation transients fall
        /// outside.
        static let decimationPadding = 140.0
        /// Milliseconds the decimation filter takes to fall below 1e-16 of its start-up, at any rate it runs at
        /// (7.3 ms at 12 kHz, factor 2; 3.3 ms at 96 kHz, factor 12).
        static let decimationEdge = 8
        static let basicFramePeriod = 1.0
        /// Each frame also tries the candidates of this many frames on each side.
        static let spreadFrames = 3
        /// A run of voiced channels must be at least this long to yield a candidate.
        static let minimumChannelRun = 10
        static let minimumScore = 2.5
        static let maximumHarmonics = 6
        static let safeGuard = 0.000000000001
    }
}
