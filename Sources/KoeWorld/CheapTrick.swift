import Glibc
import KoeDSP

/// CheapTrick: the spectral envelope frame by frame, from an F0-adaptive window three periods long,
/// smoothed along frequency over 2/3 F0 and then in the cepstrum with spectral recovery (Morise 2015).
public struct CheapTrick: Sendable {
    public struct Options: Sendable, Equatable, Codable {
        /// Spectral recovery coefficient; WORLD's tuned value is −0.15.
        public var q1: Double
        /// Lowest F0 in Hz the window must hold; sets the FFT size when `fftSize` is nil. WORLD: 71 Hz.
        public var f0Floor: Double
        /// FFT size; nil (WORLD's default) derives it from the sample rate and `f0Floor`.
        public var fftSize: Int?

        public init(q1: Double = -0.15, f0Floor: Double = 71.0, fftSize: Int? = nil) {
            self.q1 = q1
            self.f0Floor = f0Floor
            self.fftSize = fftSize
        }
    }

    public let sampleRate: Int
    public let options: Options
    public let fftSize: Int
    private let noise: SafeguardNoise
    /// FFT plans and buffers kept from call to call, so that short repeated calls (streaming) cost no setup.
    private let workspaces: WorkspacePool<EnvelopeEstimator>

    /// Throws if the rate is not supported or an option is out of range.
    public init(sampleRate: Int, options: Options = Options()) throws(WorldError) {
        try self.init(sampleRate: sampleRate, options: options, shared: true)
    }

    /// `shared`: whether several threads may estimate at once (or one call on several threads); an instance that
    /// is not shared takes no lock. `noise`: where each frame's safeguard noise starts.
    package init(sampleRate: Int, options: Options, shared: Bool, noise: SafeguardNoise = .throughCall) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try SignalRequirements.validateF0Floor(options.f0Floor)
        guard options.q1.isFinite else { throw .invalidOption("CheapTrick's q1 must be a finite number (got \(options.q1))") }
        let fftSize = options.fftSize ?? CheapTrick.fftSize(sampleRate: sampleRate, f0Floor: options.f0Floor)
        try CheapTrick.validate(fftSize: fftSize, sampleRate: sampleRate)
        self.sampleRate = sampleRate
        self.options = options
        self.fftSize = fftSize
        self.noise = noise
        let q1 = options.q1
        workspaces = WorkspacePool(shared: shared) { EnvelopeEstimator(sampleRate: sampleRate, fftSize: fftSize, q1: q1) }
    }

    /// The largest FFT size accepted: WORLD's own rule gives 65536 at most (192 kHz, the lowest F0 floor).
    public static let largestFFTSize = 1 << 16

    /// FFT sizes accepted at `sampleRate` (even ones only): from the smallest that holds the window of a
    /// `defaultF0` frame, the shortest window an analysis uses (so `f0Floor(sampleRate:fftSize:)` lies below
    /// it), to `largestFFTSize`. CheapTrick's and D4C's FFT sizes, and synthesis's, follow this one rule.
    static func fftSizes(sampleRate: Int) -> ClosedRange<Int> {
        (3 * sampleRate / Int(defaultF0) + 4)...largestFFTSize
    }

    static func validate(fftSize: Int, sampleRate: Int) throws(WorldError) {
        let sizes = fftSizes(sampleRate: sampleRate)
        guard fftSize % 2 == 0, sizes.contains(fftSize) else {
            throw .invalidOption(
                "FFT size \(fftSize) does not suit \(sampleRate) Hz: it must be even, from \(sizes.lowerBound) to \(sizes.upperBound)")
        }
    }

    /// WORLD's FFT size (pyworld's `get_cheaptrick_fft_size`): the power of two above three periods of `f0Floor` plus one sample.
    package static func fftSize(sampleRate: Int, f0Floor: Double) -> Int {
        fftSizeHolding(periods: 3, of: f0Floor, sampleRate: sampleRate)
    }

    /// WORLD's `GetF0FloorForCheapTrick` (pyworld's `get_cheaptrick_f0_floor`): the lowest F0 whose window fits
    /// the FFT; frames at or below it are analysed at `defaultF0`.
    public static func f0Floor(sampleRate: Int, fftSize: Int) -> Double {
        3.0 * Double(sampleRate) / (Double(fftSize) - 3.0)
    }

    /// The F0 WORLD analyses unvoiced frames (and frames below the floor) with.
    static let defaultF0 = 500.0

    /// One power spectrum of `fftSize / 2 + 1` bins a frame. Frames are shared among up to `threads`
    /// threads; the result is the same for any number. Throws if `signal` is empty or not finite throughout,
    /// a frame's time is not finite or lies beyond `F0Contour.farthestTime`, or the spectrogram would not fit in
    /// memory.
    public func estimate(_ signal: [Double], contour: F0Contour, threads: Int = 1) throws(WorldError) -> Matrix {
        try SignalRequirements.validate(signal, contour: contour)
        try SignalRequirements.requireRoom(rows: contour.frameCount, columns: fftSize / 2 + 1, for: "a spectrogram")
        var spectrogram = Matrix()
        signal.withUnsafeBufferPointer { estimate($0, contour: contour, threads: threads, into: &spectrogram) }
        return spectrogram
    }

    /// `estimate`, written into `spectrogram` (reshaped to one row a frame), which keeps its storage from
    /// call to call: with the same or fewer frames, a call allocates nothing. `signal` must not be empty.
    package func estimate(
        _ signal: UnsafeBufferPointer<Double>, contour: F0Contour, threads: Int = 1, into spectrogram: inout Matrix
    ) {
        spectrogram.reshape(rows: contour.frameCount, columns: fftSize / 2 + 1)
        let columns = spectrogram.columns
        spectrogram.storage.withUnsafeMutableBufferPointer { output in
            Parallel.forEachRange(contour.frameCount, threads: threads, minimumLength: 16) { frames in
                workspaces.withWorkspace { estimator in
                    estimator.startNoise(skipping: noiseDrawn(before: frames.lowerBound, contour: contour))
                    for frame in frames {
                        if noise == .eachFrame {
                            estimator.startNoise()
                        }
                        let row = UnsafeMutableBufferPointer(rebasing: output[(frame * columns)..<((frame + 1) * columns)])
                        estimator.envelope(of: signal, f0: analysedF0(contour.f0[frame]), time: contour.time[frame], into: row)
                    }
                }
            }
        }
    }

    /// The F0 a frame is analysed with: WORLD's default below the floor (and for unvoiced frames), capped above.
    private func analysedF0(_ f0: Double) -> Double {
        let f0Floor = CheapTrick.f0Floor(sampleRate: sampleRate, fftSize: fftSize)
        let highestF0 = SpectralSmoothing.highestF0(fftSize: fftSize, sampleRate: sampleRate)
        return f0 > f0Floor ? min(f0, highestF0) : CheapTrick.defaultF0
    }

    /// How many noise values are drawn before `frame`, so any run of frames can start its noise where a single
    /// pass over all frames would have it (none when each frame restarts the sequence).
    private func noiseDrawn(before frame: Int, contour: F0Contour) -> Int {
        guard noise == .throughCall else { return 0 }
        var drawn = 0
        for earlier in 0..<frame {
            drawn += EnvelopeEstimator.noiseCount(sampleRate: sampleRate, fftSize: fftSize, f0: analysedF0(contour.f0[earlier]))
        }
        return drawn
    }
}

/// WORLD's FFT size rule, shared with D4C: the power of two above `periods` periods of `f0` plus one sample.
func fftSizeHolding(periods: Double, of f0: Double, sampleRate: Int) -> Int {
    let log2 = 0.69314718055994529
    return 1 << (1 + Int(log(periods * Double(sampleRate) / f0 + 1) / log2))
}

/// FFTs, scratch buffers and the safeguard noise for one thread's frames, reused by every frame and call.
private final class EnvelopeEstimator {
    private let sampleRate: Int
    private let fftSize: Int
    private let q1: Double
    /// Transforms the windowed waveform; its input beyond the window stays zero.
    private let forward: ForwardRealFFT
    /// Transforms the log spectrum into the cepstrum.
    private let toCepstrum: ForwardRealFFT
    private let inverse: InverseRealFFT
    private let smoothing: SpectralSmoothing
    private let window: UnsafeMutableBufferPointer<Double>
    /// The power spectrum of the current frame.
    private let power: UnsafeMutableBufferPointer<Double>
    /// The sines of the cepstral lifter, then the lifter.
    private let lifter: UnsafeMutableBufferPointer<Double>
    private let noise: NoiseStream
    /// Samples of `forward.waveform` the last window wrote.
    private var writtenLength = 0
    /// The F0 `window` was designed for: consecutive frames of one F0 (unvoiced stretches) share it.
    private var windowF0: Double?

    init(sampleRate: Int, fftSize: Int, q1: Double) {
        self.sampleRate = sampleRate
        self.fftSize = fftSize
        self.q1 = q1
        forward = ForwardRealFFT(size: fftSize)
        toCepstrum = ForwardRealFFT(size: fftSize)
        inverse = InverseRealFFT(size: fftSize)
        smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        window = .allocate(capacity: fftSize)
        power = .allocate(capacity: fftSize / 2 + 1)
        lifter = .allocate(capacity: fftSize / 2 + 1)
        noise = NoiseStream(maximumTake: fftSize + 1)
    }

    deinit {
        window.deallocate()
        power.deallocate()
        lifter.deallocate()
    }

    /// Samples in the window of a frame analysed at `f0`.
    static func windowLength(sampleRate: Int, f0: Double) -> Int {
        2 * Matlab.round(1.5 * Double(sampleRate) / f0) + 1
    }

    /// Noise values one frame draws: one per windowed sample, then one per bin.
    static func noiseCount(sampleRate: Int, fftSize: Int, f0: Double) -> Int {
        windowLength(sampleRate: sampleRate, f0: f0) + fftSize / 2 + 1
    }

    /// Restarts the noise sequence at WORLD's seed, `count` draws in.
    func startNoise(skipping count: Int = 0) {
        noise.restart(skipping: count)
    }

    func envelope(of x: UnsafeBufferPointer<Double>, f0: Double, time: Double, into envelope: UnsafeMutableBufferPointer<Double>) {
        windowWaveform(x, f0: f0, time: time)
        powerSpectrum()
        smoothing.correctDC(power, f0: f0)
        smoothing.smooth(power, width: f0 * 2.0 / 3.0)
        addInfinitesimalNoise(power)
        smoothInCepstrumWithRecovery(f0: f0, into: envelope)
    }

    /// Three periods of signal around `time` under a Hann window normalised to unit energy, with the
    /// window-shaped DC removed; samples outside the signal repeat its end points.
    private func windowWaveform(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double) {
        let halfLength = Matlab.round(1.5 * Double(sampleRate) / f0)
        let length = 2 * halfLength + 1
        if windowF0 != f0 {
            designWindow(halfLength: halfLength, f0: f0)
            windowF0 = f0
        }
        let safeguard = noise.take(length)
        let origin = Matlab.round(time * Double(sampleRate) + 0.001)
        let waveform = forward.waveform
        UnsafeMutableBufferPointer(rebasing: waveform[0..<length]).copyClamped(from: x, first: origin - halfLength)
        for i in 0..<length {
            waveform[i] = waveform[i] * window[i] + safeguard[i] * 1e-12
        }
        let dcLevel = VectorMath.sum(UnsafeBufferPointer(rebasing: waveform[0..<length]))
            / VectorMath.sum(UnsafeBufferPointer(rebasing: window[0..<length]))
        for i in 0..<length {
            waveform[i] -= window[i] * dcLevel
        }
        for i in length..<max(length, writtenLength) {
            waveform[i] = 0
        }
        writtenLength = length
    }

    /// Hann window of `2 * halfLength + 1` samples, scaled to unit energy. It is symmetric, so each
    /// cosine is computed once for both halves.
    private func designWindow(halfLength: Int, f0: Double) {
        let rightHalf = UnsafeMutableBufferPointer(rebasing: window[halfLength...(2 * halfLength)])
        Trigonometry.cosines(step: Double.pi * f0 / 1.5 / Double(sampleRate), into: rightHalf)
        for offset in 0...halfLength {
            rightHalf[offset] = 0.5 * rightHalf[offset] + 0.5
        }
        let energy = 2 * VectorMath.sumOfSquares(UnsafeBufferPointer(rightHalf)) - rightHalf[0] * rightHalf[0]
        let scale = 1 / energy.squareRoot()
        for offset in 0...halfLength {
            let value = rightHalf[offset] * scale
            rightHalf[offset] = value
            window[halfLength - offset] = value
        }
    }

    private func powerSpectrum() {
        forward.execute()
        let (spectrum, power) = (forward.spectrum, power)
        for bin in 0...(fftSize / 2) {
            power[bin] = spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
        }
    }

    /// Keeps every bin strictly positive so its logarithm exists.
    private func addInfinitesimalNoise(_ power: UnsafeMutableBufferPointer<Double>) {
        let safeguard = noise.take(power.count)
        for bin in power.indices {
            power[bin] += abs(safeguard[bin]) * Double.ulpOfOne
        }
    }

    /// Log spectrum → cepstrum, lifted by a sinc (smoothing over F0) times the recovery lifter,
    /// then back to a power spectrum.
    private func smoothInCepstrumWithRecovery(f0: Double, into envelope: UnsafeMutableBufferPointer<Double>) {
        let half = fftSize / 2
        let (logSpectrum, power) = (toCepstrum.waveform, power)
        for bin in 0...half {
            logSpectrum[bin] = power[bin]
        }
        VectorMath.logarithms(UnsafeMutableBufferPointer(rebasing: logSpectrum[0...half]), scale: 1)
        for bin in 1..<half {
            logSpectrum[fftSize - bin] = logSpectrum[bin]
        }
        toCepstrum.execute()

        // Lifters at quefrency q = k / fs: sin(π f0 q) / (π f0 q), and 1 − 2 q1 + 2 q1 cos(2π f0 q),
        // whose cosine is 1 − 2 sin²(π f0 q); both with the inverse FFT's 1 / fftSize.
        let step = Double.pi * f0 / Double(sampleRate)
        let lifter = lifter
        Trigonometry.sines(step: step, into: lifter)
        let scale = 1.0 / Double(fftSize)
        let q1 = q1
        lifter[0] = scale
        for quefrencyBin in 1...half {
            let sine = lifter[quefrencyBin]
            lifter[quefrencyBin] = sine / (step * Double(quefrencyBin)) * (1.0 - 4.0 * q1 * sine * sine) * scale
        }
        let (cepstrum, lifted) = (toCepstrum.spectrum, inverse.spectrum)
        for quefrencyBin in 0...half {
            lifted[quefrencyBin] = Complex(cepstrum[quefrencyBin].real * lifter[quefrencyBin], 0)
        }
        inverse.execute()

        let logEnvelope = UnsafeMutableBufferPointer(rebasing: envelope[0...half])
        _ = logEnvelope.update(fromContentsOf: UnsafeBufferPointer(rebasing: inverse.waveform[0...half]))
        VectorMath.exponentials(logEnvelope, scale: 1)
    }
}
