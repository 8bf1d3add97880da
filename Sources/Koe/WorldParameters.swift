import KoeWorld

/// WORLD's parameters of one signal: F0 on its frame axis, the power spectral envelope and the aperiodicity, and
/// how they were made. Analyse a signal into them, change them, synthesise them back; `AnalysisFolder` keeps them
/// as the folder `koe analyze` writes and `koe synth` reads.
public struct WorldParameters: Sendable {
    public var contour: F0Contour
    /// frames × (fftSize / 2 + 1)
    public var spectrogram: Matrix
    /// frames × (fftSize / 2 + 1)
    public var aperiodicity: Matrix
    /// How they were made. Synthesis reads its `sampleRate` and `framePeriod`.
    public var meta: AnalysisMeta

    public var sampleRate: Int { meta.sampleRate }
    /// Milliseconds between frames.
    public var framePeriod: Double { meta.framePeriod }
    public var fftSize: Int { (spectrogram.columns - 1) * 2 }
    public var frameCount: Int { contour.frameCount }

    /// The frame periods whole-signal analysis accepts, in milliseconds: wider than streaming's, as nothing is
    /// held back for a frame, but bounded so a slip of the decimal point fails at once.
    public static let framePeriods = 0.001...10_000.0
    /// Values one output matrix may hold (2 GiB of float64), so absurd settings fail instead of exhausting memory.
    public static let largestMatrix = 1 << 28
    /// Samples synthesis may produce (over 12 hours at 48 kHz), so a wild frame period fails instead of
    /// exhausting memory.
    public static let longestOutput = Int(Int32.max)

    public init(contour: F0Contour, spectrogram: Matrix, aperiodicity: Matrix, meta: AnalysisMeta) {
        self.contour = contour
        self.spectrogram = spectrogram
        self.aperiodicity = aperiodicity
        self.meta = meta
    }

    /// Analyses `signal` as WORLD does: F0 by `options.f0Method` (or `f0`, one value in Hz a frame, 0 unvoiced,
    /// when given), then CheapTrick and D4C on that contour. `options` supplies the method, frame period and F0
    /// range; its streaming settings (look-ahead, blocks) do not apply to a whole signal.
    public init(
        analyzing signal: [Double], sampleRate: Int, options: StreamingAnalyzer.Options = .init(), f0: [Double]? = nil
    ) throws(KoeError) {
        if let problem = Self.problem(with: options, sampleRate: sampleRate, samples: signal.count) {
            throw .invalidArgument(problem)
        }
        try KoeError.wrapping { try SignalRequirements.validate(signal, sampleRate: sampleRate, f0Floor: options.f0Floor) }
        let contour: F0Contour
        if let f0 {
            contour = try Self.givenContour(f0, samples: signal.count, sampleRate: sampleRate, framePeriod: options.framePeriod)
        } else {
            switch options.f0Method {
            case .dio:
                let raw = Dio(sampleRate: sampleRate, options: options.dio).estimate(signal)
                contour = StoneMask(sampleRate: sampleRate).refine(signal, contour: raw)
            case .harvest:
                contour = Harvest(sampleRate: sampleRate, options: options.harvest).estimate(signal)
            }
        }
        let cheapTrick = CheapTrick(sampleRate: sampleRate, options: options.cheapTrick)
        let d4c = D4C(sampleRate: sampleRate, fftSize: cheapTrick.fftSize)
        self.init(
            contour: contour,
            spectrogram: cheapTrick.estimate(signal, contour: contour, threads: options.threads),
            aperiodicity: d4c.estimate(signal, contour: contour, threads: options.threads),
            meta: AnalysisMeta(analysis: options, given: f0 != nil, sampleRate: sampleRate, samples: signal.count,
                               frames: contour.frameCount, cheapTrick: cheapTrick, d4c: d4c))
    }

    /// The waveform WORLD's synthesis makes of these parameters, at `sampleRate`.
    public func synthesize() throws(KoeError) -> [Double] {
        if let problem = problem() { throw .badInput(source: nil, reason: problem) }
        return Synthesis(sampleRate: sampleRate, framePeriod: framePeriod)
            .synthesize(f0: contour.f0, spectrogram: spectrogram, aperiodicity: aperiodicity)
    }

    /// The first thing wrong with analysing `samples` samples at `sampleRate` with `options`, naming each
    /// setting with `name` (a flag on the command line, a property in Swift); nil when it can run.
    package static func problem(
        with options: StreamingAnalyzer.Options, sampleRate: Int, samples: Int,
        name: (AnalysisLimits.Setting) -> String = \.rawValue
    ) -> String? {
        if let problem = AnalysisLimits.problem(with: options, sampleRate: sampleRate, framePeriods: framePeriods, name: name) {
            return problem
        }
        let frames = F0Contour.frameCount(samples: samples, sampleRate: sampleRate, framePeriod: options.framePeriod)
        let bins = CheapTrick.fftSize(sampleRate: sampleRate, f0Floor: options.f0Floor) / 2 + 1
        guard frames.multipliedReportingOverflow(by: bins).partialValue <= largestMatrix, frames <= largestMatrix else {
            return "\(frames) frames of \(bins) bins are too many to hold; raise the \(name(.framePeriod)) or the \(name(.f0Floor))"
        }
        return nil
    }

    /// The first thing that keeps these parameters from being synthesised; nil when they fit together.
    package func problem() -> String? {
        guard SignalRequirements.sampleRates.contains(sampleRate) else {
            return "sample rate \(sampleRate) Hz is outside 8000 to 192000 Hz"
        }
        guard framePeriod.isFinite && framePeriod > 0 else {
            return "frame period \(framePeriod) is not a positive number of milliseconds"
        }
        let frames = contour.frameCount
        guard frames > 0 else { return "there are no frames" }
        guard spectrogram.rows == frames, aperiodicity.rows == frames else {
            return "\(frames) F0 values, but \(spectrogram.rows) spectral envelope and \(aperiodicity.rows) aperiodicity frames"
        }
        guard spectrogram.columns >= 2, fftSize & (fftSize - 1) == 0, aperiodicity.columns == spectrogram.columns else {
            return "\(spectrogram.columns) envelope and \(aperiodicity.columns) aperiodicity bins a frame; both must be fft_size / 2 + 1 for a power-of-two fft_size"
        }
        let outputSamples = Double(frames) * framePeriod * Double(sampleRate) / 1000
        guard outputSamples <= Double(Self.longestOutput) else {
            return "a frame period of \(framePeriod) ms over \(frames) frames makes a waveform too long to hold"
        }
        return nil
    }

    /// What is wrong with `f0` as the F0 of a signal of `samples` samples: one finite, non-negative value a frame
    /// is needed. Nil when it fits.
    package static func problem(withF0 f0: [Double], samples: Int, sampleRate: Int, framePeriod: Double) -> String? {
        let frames = F0Contour.frameCount(samples: samples, sampleRate: sampleRate, framePeriod: framePeriod)
        guard f0.count == frames else {
            return "has \(f0.count) values but the signal at \(framePeriod) ms frames has \(frames) frames"
        }
        if let index = f0.firstIndex(where: { !$0.isFinite || $0 < 0 }) {
            return "value \(f0[index]) at frame \(index) is not an F0 in Hz (0 or more)"
        }
        return nil
    }

    /// `f0` on WORLD's time axis for a signal of `samples` samples.
    private static func givenContour(
        _ f0: [Double], samples: Int, sampleRate: Int, framePeriod: Double
    ) throws(KoeError) -> F0Contour {
        if let problem = problem(withF0: f0, samples: samples, sampleRate: sampleRate, framePeriod: framePeriod) {
            throw .badInput(source: "the given F0", reason: problem)
        }
        return F0Contour(f0: f0, framePeriod: framePeriod)
    }
}
