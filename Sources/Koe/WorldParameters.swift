import KoeStages
import KoeWorld

/// WORLD's parameters of one signal: F0 on its frame axis, the power spectral envelope and the aperiodicity, and
/// how they were made. Analyse a signal into them, change them, synthesise them back; `koe analyze` writes them as
/// a folder that `koe synth` reads.
public struct WorldParameters: Sendable {
    public var contour: F0Contour
    /// frames × (fftSize / 2 + 1)
    public var spectrogram: Matrix
    /// frames × (fftSize / 2 + 1)
    public var aperiodicity: Matrix
    /// How they were made, as meta.json records it. Synthesis reads its `sampleRate` and `framePeriod`.
    package var meta: AnalysisMeta

    public var sampleRate: Int { meta.sampleRate }
    /// Milliseconds between frames.
    public var framePeriod: Double { meta.framePeriod }
    public var fftSize: Int { (spectrogram.columns - 1) * 2 }
    var frameCount: Int { contour.frameCount }

    /// The frame periods whole-signal analysis accepts, in milliseconds: WORLD's own bounds, wider than
    /// streaming's, as nothing is held back for a frame.
    package static let framePeriods = SignalRequirements.framePeriods
    /// Values one output matrix may hold (2 GiB of float64), so absurd settings fail instead of exhausting memory.
    static let largestMatrix = 1 << 28

    /// Parameters made elsewhere, for synthesis at `sampleRate` with frames `framePeriod` ms apart.
    public init(contour: F0Contour, spectrogram: Matrix, aperiodicity: Matrix, sampleRate: Int, framePeriod: Double) {
        self.init(
            contour: contour, spectrogram: spectrogram, aperiodicity: aperiodicity,
            meta: AnalysisMeta(sampleRate: sampleRate, framePeriod: framePeriod))
    }

    package init(contour: F0Contour, spectrogram: Matrix, aperiodicity: Matrix, meta: AnalysisMeta) {
        self.contour = contour
        self.spectrogram = spectrogram
        self.aperiodicity = aperiodicity
        self.meta = meta
    }

    /// Analyses `signal` as WORLD does: F0 by `options.f0Method`, or from the `f0` track (one value an analysis
    /// frame) when given, then CheapTrick and D4C on that contour. `options` supplies the method, frame period and F0
    /// range; its streaming settings (look-ahead, blocks) do not apply to a whole signal.
    public init(
        analyzing signal: [Double], sampleRate: Int, options: AnalysisOptions = .init(), f0: F0Track? = nil
    ) throws(KoeError) {
        if let problem = Self.problem(with: options, sampleRate: sampleRate, samples: signal.count) {
            throw .invalidArgument(problem)
        }
        try KoeError.wrapping { try SignalRequirements.validate(signal, sampleRate: sampleRate, f0Floor: options.f0Floor) }
        do {
            let contour: F0Contour
            if let f0 {
                contour = try Self.givenContour(
                    f0, samples: signal.count, sampleRate: sampleRate, framePeriod: options.framePeriod)
            } else {
                contour = try F0Contour(estimating: signal, sampleRate: sampleRate, options: options)
            }
            let cheapTrick = try CheapTrick(sampleRate: sampleRate, options: options.cheapTrick)
            let d4c = try D4C(sampleRate: sampleRate, fftSize: cheapTrick.fftSize)
            self.init(
                contour: contour,
                spectrogram: try cheapTrick.estimate(signal, contour: contour, threads: options.threads),
                aperiodicity: try d4c.estimate(signal, contour: contour, threads: options.threads),
                meta: AnalysisMeta(analysis: options, given: f0 != nil, sampleRate: sampleRate, samples: signal.count,
                                   frames: contour.frameCount, cheapTrick: cheapTrick, d4c: d4c))
        } catch {
            throw KoeError(error)
        }
    }

    /// The waveform WORLD's synthesis makes of these parameters, at `sampleRate`; throws when they do not fit
    /// together (shapes, FFT size, a waveform too long to hold, a value that is not finite).
    public func synthesize() throws(KoeError) -> [Double] {
        try KoeError.wrapping {
            try Synthesis(sampleRate: sampleRate, framePeriod: framePeriod)
                .synthesize(f0: contour.f0, spectrogram: spectrogram, aperiodicity: aperiodicity)
        }
    }

    /// The first thing wrong with analysing `samples` samples at `sampleRate` with `options`, naming each
    /// setting with `name` (a flag on the command line, a property in Swift); nil when it can run.
    package static func problem(
        with options: AnalysisOptions, sampleRate: Int, samples: Int,
        name: (AnalysisOptions.Setting) -> String = \.rawValue
    ) -> String? {
        if let problem = options.problem(sampleRate: sampleRate, framePeriods: framePeriods, name: name) {
            return problem
        }
        let frames = F0Contour.frameCount(samples: samples, sampleRate: sampleRate, framePeriod: options.framePeriod)
        let bins = CheapTrick.fftSize(sampleRate: sampleRate, f0Floor: options.f0Floor) / 2 + 1
        guard frames.multipliedReportingOverflow(by: bins).partialValue <= largestMatrix, frames <= largestMatrix else {
            return "\(frames) frames of \(bins) bins are too many to hold; raise the \(name(.framePeriod)) or the \(name(.f0Floor))"
        }
        return nil
    }

    /// What is wrong with `track` as the F0 of a signal of `samples` samples: it needs one value an analysis
    /// frame. Nil when it fits.
    package static func problem(with track: F0Track, samples: Int, sampleRate: Int, framePeriod: Double) -> String? {
        let frames = F0Contour.frameCount(samples: samples, sampleRate: sampleRate, framePeriod: framePeriod)
        guard track.values.count != frames else { return nil }
        return "has \(track.values.count) values but the signal at \(framePeriod) ms frames has \(frames) frames"
    }

    /// `track` on WORLD's time axis for a signal of `samples` samples.
    private static func givenContour(
        _ track: F0Track, samples: Int, sampleRate: Int, framePeriod: Double
    ) throws(KoeError) -> F0Contour {
        if let problem = problem(with: track, samples: samples, sampleRate: sampleRate, framePeriod: framePeriod) {
            throw .badInput(source: track.name, reason: problem)
        }
        return F0Contour(f0: track.values, framePeriod: framePeriod)
    }
}
