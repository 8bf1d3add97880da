import KoeWorld

/// meta.json: how an analysis folder was made. Synthesis needs only `sample_rate` and `frame_period`;
/// the other fields, when present, are checked against the arrays.
package struct AnalysisMeta: Codable, Equatable, Sendable {
    package var sampleRate: Int
    /// Milliseconds between frames.
    package var framePeriod: Double
    package var fftSize: Int?
    /// dio, harvest, live (DIO as live analysis decides it) or file (F0 given with --f0-file).
    package var f0Method: String?
    var f0Floor: Double?
    package var f0Ceil: Double?
    /// The channel analyzed, counted from 0, and how many the input has.
    package var channel: Int?
    package var channels: Int?
    /// Analysis frames: the length of f0.npy and time.npy, the rows of sp.npy and ap.npy.
    package var frames: Int?
    /// Samples (per channel) in the input.
    package var samples: Int?
    package var input: String?
    package var koeVersion: String?
    package var options: AlgorithmOptions?

    /// What synthesis needs; the rest stays unknown.
    init(sampleRate: Int, framePeriod: Double) {
        self.sampleRate = sampleRate
        self.framePeriod = framePeriod
    }

    /// How `WorldParameters(analyzing:…)` analysed a signal: every option each algorithm ran with.
    init(
        analysis: AnalysisOptions, given: Bool, sampleRate: Int, samples: Int, frames: Int,
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
            options.dio = analysis.dio
        case (false, .harvest):
            options.harvest = analysis.harvest
        }
        self.options = options
    }

    /// Every option each algorithm ran with, defaults included: the algorithms' own options, CheapTrick's with
    /// the FFT size it chose.
    package struct AlgorithmOptions: Codable, Equatable, Sendable {
        package var dio: Dio.Options?
        package var harvest: Harvest.Options?
        var cheaptrick: CheapTrick.Options?
        var d4c: D4CRun?
        package var f0File: String?
    }

    /// D4C's options and the FFT size it ran with, which it derives from the sample rate.
    struct D4CRun: Codable, Equatable, Sendable {
        var threshold: Double
        package var fftSize: Int
    }
}
