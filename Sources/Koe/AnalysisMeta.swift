import KoeWorld

/// meta.json: how an analysis folder was made. Synthesis needs only `sample_rate` and `frame_period`;
/// the other fields, when present, are checked against the arrays.
public struct AnalysisMeta: Codable, Equatable, Sendable {
    public var sampleRate: Int
    /// Milliseconds between frames.
    public var framePeriod: Double
    public var fftSize: Int?
    /// dio, harvest, live (DIO as live analysis decides it) or file (F0 given with --f0-file).
    public var f0Method: String?
    public var f0Floor: Double?
    public var f0Ceil: Double?
    /// The channel analyzed, counted from 0, and how many the input has.
    public var channel: Int?
    public var channels: Int?
    /// Analysis frames: the length of f0.npy and time.npy, the rows of sp.npy and ap.npy.
    public var frames: Int?
    /// Samples (per channel) in the input.
    public var samples: Int?
    public var input: String?
    public var koeVersion: String?
    public var options: AlgorithmOptions?

    /// What synthesis needs; the rest stays unknown.
    public init(sampleRate: Int, framePeriod: Double) {
        self.sampleRate = sampleRate
        self.framePeriod = framePeriod
    }

    /// How `WorldParameters(analyzing:…)` analysed a signal: every option each algorithm ran with.
    init(
        analysis: StreamingAnalyzer.Options, given: Bool, sampleRate: Int, samples: Int, frames: Int,
        cheapTrick: CheapTrick, d4c: D4C
    ) {
        self.init(sampleRate: sampleRate, framePeriod: analysis.framePeriod)
        fftSize = cheapTrick.fftSize
        f0Method = given ? "file" : analysis.live ? "live" : analysis.f0Method.rawValue
        f0Floor = analysis.f0Floor
        f0Ceil = analysis.f0Ceil
        self.frames = frames
        self.samples = samples
        var options = AlgorithmOptions(
            cheaptrick: .init(q1: cheapTrick.options.q1, f0Floor: cheapTrick.options.f0Floor, fftSize: cheapTrick.fftSize),
            d4c: .init(threshold: d4c.options.threshold, fftSize: d4c.fftSize))
        switch (given, analysis.f0Method) {
        case (true, _):
            break
        case (false, .dio):
            let dio = analysis.dio
            options.dio = .init(framePeriod: dio.framePeriod, f0Floor: dio.f0Floor, f0Ceil: dio.f0Ceil,
                                channelsInOctave: dio.channelsInOctave, speed: dio.speed, allowedRange: dio.allowedRange)
        case (false, .harvest):
            let harvest = analysis.harvest
            options.harvest = .init(framePeriod: harvest.framePeriod, f0Floor: harvest.f0Floor, f0Ceil: harvest.f0Ceil)
        }
        self.options = options
    }

    /// Every option each algorithm ran with, defaults included.
    public struct AlgorithmOptions: Codable, Equatable, Sendable {
        public var dio: DioOptions?
        public var harvest: HarvestOptions?
        public var cheaptrick: CheapTrickOptions?
        public var d4c: D4COptions?
        public var f0File: String?
    }

    public struct DioOptions: Codable, Equatable, Sendable {
        public var framePeriod: Double
        public var f0Floor: Double
        public var f0Ceil: Double
        public var channelsInOctave: Double
        public var speed: Int
        public var allowedRange: Double
    }

    public struct HarvestOptions: Codable, Equatable, Sendable {
        public var framePeriod: Double
        public var f0Floor: Double
        public var f0Ceil: Double
    }

    public struct CheapTrickOptions: Codable, Equatable, Sendable {
        public var q1: Double
        public var f0Floor: Double
        public var fftSize: Int
    }

    public struct D4COptions: Codable, Equatable, Sendable {
        public var threshold: Double
        public var fftSize: Int
    }
}
