/// Fundamental frequency frame by frame, with each frame's centre time.
/// Unvoiced frames carry an F0 of 0, as in WORLD.
public struct F0Contour: Equatable, Sendable {
    /// Centre of each frame, in seconds from the first sample.
    public private(set) var time: [Double]
    /// F0 in Hz for each frame; 0 where the frame is unvoiced.
    public private(set) var f0: [Double]

    /// A contour of one time and one F0 a frame.
    public init(time: [Double], f0: [Double]) throws(WorldError) {
        guard time.count == f0.count else {
            throw .invalidParameters("a contour needs one time a frame: \(time.count) times for \(f0.count) F0 values")
        }
        self.init(sameLengthTime: time, f0: f0)
    }

    /// A contour whose arrays the vocoder made the same length.
    init(sameLengthTime time: [Double], f0: [Double]) {
        self.time = time
        self.f0 = f0
    }

    /// A contour on WORLD's uniform time axis (`frame * framePeriod`), from per-frame F0 values.
    public init(f0: [Double], framePeriod: Double) {
        self.init(sameLengthTime: F0Contour.timeAxis(frameCount: f0.count, framePeriod: framePeriod), f0: f0)
    }

    public var frameCount: Int { f0.count }

    /// Gives every frame a new F0 (Hz; 0 unvoiced), their times kept: one value a frame.
    public mutating func setF0(_ values: [Double]) throws(WorldError) {
        guard values.count == f0.count else {
            throw .invalidParameters("a contour of \(f0.count) frames needs \(f0.count) F0 values, not \(values.count)")
        }
        f0 = values
    }

    /// WORLD's number of frames for a signal: one at time 0, then one every `framePeriod` ms up to its end.
    /// The rate and frame period must be validated ones.
    package static func frameCount(samples: Int, sampleRate: Int, framePeriod: Double) -> Int {
        Int(1000.0 * Double(samples) / Double(sampleRate) / framePeriod) + 1
    }

    /// Frame times in seconds for `frameCount` frames every `framePeriod` ms.
    static func timeAxis(frameCount: Int, framePeriod: Double) -> [Double] {
        (0..<frameCount).map { Double($0) * framePeriod / 1000.0 }
    }

    /// The farthest a frame's time may lie from the signal's start, in seconds (about 11 days). A frame beyond
    /// either end reads the edge samples, as in WORLD; the bound keeps its sample positions far inside `Int`.
    public static let farthestTime = 1e6

    /// Throws unless every frame's time is a finite number within `farthestTime` of the signal's start.
    func validateTimes() throws(WorldError) {
        if let frame = time.firstIndex(where: { !(abs($0) <= Self.farthestTime) }) {
            throw .invalidParameters(
                "frame \(frame)'s time (\(time[frame]) s) is not a number of seconds within \(Self.farthestTime) of the start")
        }
    }
}

extension F0Contour {
    /// WORLD's F0 of a whole signal by `options.f0Method`, frame period and F0 range: DIO refined by StoneMask, or
    /// Harvest. With `options.live`, the F0 live analysis gives, each frame decided as the signal streams past.
    public init(estimating signal: [Double], sampleRate: Int, options: AnalysisOptions) throws(WorldError) {
        if options.live {
            let analyzer = try StreamingAnalyzer(sampleRate: sampleRate, options: options)
            let blocks = try analyzer.pushPending(signal) + analyzer.finishPending()
            self.init(f0: blocks.flatMap { $0.f0() }, framePeriod: options.framePeriod)
            return
        }
        switch options.f0Method {
        case .dio:
            let raw = try Dio(sampleRate: sampleRate, options: options.dio).estimate(signal)
            self = try StoneMask(sampleRate: sampleRate).refine(signal, contour: raw)
        case .harvest:
            self = try Harvest(sampleRate: sampleRate, options: options.harvest).estimate(signal)
        }
    }
}
