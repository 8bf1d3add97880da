import Foundation

/// CheapTrick: the spectral envelope frame by frame, from an F0-adaptive window three periods long,
/// smoothed along frequency over 2/3 F0 and then in the cepstrum with spectral recovery (Morise 2015).
public struct CheapTrick: Sendable {
    public struct Options: Sendable, Equatable {
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

    public init(sampleRate: Int, options: Options = Options()) {
        let fftSize = options.fftSize ?? CheapTrick.fftSize(sampleRate: sampleRate, f0Floor: options.f0Floor)
        precondition(
            fftSize % 2 == 0 && CheapTrick.f0Floor(sampleRate: sampleRate, fftSize: fftSize) < CheapTrick.defaultF0,
            "CheapTrick's FFT size must be even and hold the window of a \(CheapTrick.defaultF0) Hz frame")
        self.sampleRate = sampleRate
        self.options = options
        self.fftSize = fftSize
    }

    /// WORLD's FFT size (pyworld's `get_cheaptrick_fft_size`): the power of two above three periods of `f0Floor` plus one sample.
    public static func fftSize(sampleRate: Int, f0Floor: Double) -> Int {
        fftSizeHolding(periods: 3, of: f0Floor, sampleRate: sampleRate)
    }

    /// The lowest F0 whose window fits the FFT; frames at or below it are analysed at `defaultF0`.
    static func f0Floor(sampleRate: Int, fftSize: Int) -> Double {
        3.0 * Double(sampleRate) / (Double(fftSize) - 3.0)
    }

    /// The F0 WORLD analyses unvoiced frames (and frames below the floor) with.
    static let defaultF0 = 500.0

    /// One power spectrum of `fftSize / 2 + 1` bins a frame.
    public func estimate(_ signal: [Double], contour: F0Contour) -> Matrix {
        let estimator = EnvelopeEstimator(sampleRate: sampleRate, fftSize: fftSize, q1: options.q1)
        let f0Floor = CheapTrick.f0Floor(sampleRate: sampleRate, fftSize: fftSize)
        var spectrogram = Matrix(rows: contour.frameCount, columns: fftSize / 2 + 1)
        signal.withUnsafeBufferPointer { x in
            for frame in 0..<contour.frameCount {
                let f0 = contour.f0[frame]
                let analysedF0 = f0 > f0Floor ? min(f0, estimator.highestF0) : CheapTrick.defaultF0
                spectrogram.withMutableRow(frame) { row in
                    estimator.envelope(of: x, f0: analysedF0, time: contour.time[frame], into: row)
                }
            }
        }
        return spectrogram
    }
}

/// WORLD's FFT size rule, shared with D4C: the power of two above `periods` periods of `f0` plus one sample.
func fftSizeHolding(periods: Double, of f0: Double, sampleRate: Int) -> Int {
    let log2 = 0.69314718055994529
    return 1 << (1 + Int(log(periods * Double(sampleRate) / f0 + 1) / log2))
}

/// FFTs, scratch buffers and the safeguard noise for one `estimate` call, reused by every frame.
private final class EnvelopeEstimator {
    private let sampleRate: Int
    private let fftSize: Int
    private let q1: Double
    private let forward: ForwardRealFFT
    private let inverse: InverseRealFFT
    private let smoothing: SpectralSmoothing
    private let window: UnsafeMutableBufferPointer<Double>
    private var noise = Randn()

    init(sampleRate: Int, fftSize: Int, q1: Double) {
        self.sampleRate = sampleRate
        self.fftSize = fftSize
        self.q1 = q1
        forward = ForwardRealFFT(size: fftSize)
        inverse = InverseRealFFT(size: fftSize)
        smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        window = .allocate(capacity: fftSize)
    }

    deinit {
        window.deallocate()
    }

    var highestF0: Double { smoothing.highestF0 }

    func envelope(of x: UnsafeBufferPointer<Double>, f0: Double, time: Double, into envelope: UnsafeMutableBufferPointer<Double>) {
        windowWaveform(x, f0: f0, time: time)
        powerSpectrum(f0: f0)
        let power = UnsafeMutableBufferPointer(rebasing: forward.waveform[0...(fftSize / 2)])
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
        designWindow(halfLength: halfLength, f0: f0)
        let origin = Matlab.round(time * Double(sampleRate) + 0.001)
        let waveform = forward.waveform
        var waveformSum = 0.0
        var windowSum = 0.0
        for i in 0..<length {
            let index = min(x.count - 1, max(0, origin + i - halfLength))
            waveform[i] = x[index] * window[i] + noise.next() * 1e-12
        }
        for i in 0..<length {
            waveformSum += waveform[i]
            windowSum += window[i]
        }
        let dcLevel = waveformSum / windowSum
        for i in 0..<length {
            waveform[i] -= window[i] * dcLevel
        }
        for i in length..<fftSize {
            waveform[i] = 0
        }
    }

    /// Hann window of `2 * halfLength + 1` samples, scaled to unit energy. It is symmetric, so each
    /// cosine is computed once for both halves.
    private func designWindow(halfLength: Int, f0: Double) {
        for offset in 0...halfLength {
            let position = Double(offset) / 1.5 / Double(sampleRate)
            let value = 0.5 * cos(Double.pi * position * f0) + 0.5
            window[halfLength + offset] = value
            window[halfLength - offset] = value
        }
        var energy = 0.0
        for i in 0...(2 * halfLength) {
            energy += window[i] * window[i]
        }
        let norm = energy.squareRoot()
        for i in 0...(2 * halfLength) {
            window[i] /= norm
        }
    }

    /// The power spectrum, written over the first `fftSize / 2 + 1` waveform samples.
    private func powerSpectrum(f0: Double) {
        forward.execute()
        let spectrum = forward.spectrum
        for bin in 0...(fftSize / 2) {
            forward.waveform[bin] = spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
        }
    }

    /// Keeps every bin strictly positive so its logarithm exists.
    private func addInfinitesimalNoise(_ power: UnsafeMutableBufferPointer<Double>) {
        for bin in power.indices {
            power[bin] += abs(noise.next()) * Double.ulpOfOne
        }
    }

    /// Log spectrum → cepstrum, lifted by a sinc (smoothing over F0) times the recovery lifter,
    /// then back to a power spectrum.
    private func smoothInCepstrumWithRecovery(f0: Double, into envelope: UnsafeMutableBufferPointer<Double>) {
        let half = fftSize / 2
        let logSpectrum = forward.waveform
        for bin in 0...half {
            logSpectrum[bin] = log(logSpectrum[bin])
        }
        for bin in 1..<half {
            logSpectrum[fftSize - bin] = logSpectrum[bin]
        }
        forward.execute()

        let cepstrum = forward.spectrum
        inverse.spectrum[0] = Complex(cepstrum[0].real * 1.0 * ((1.0 - 2.0 * q1) + 2.0 * q1) / Double(fftSize), 0)
        for quefrencyBin in 1...half {
            let quefrency = Double(quefrencyBin) / Double(sampleRate)
            let smoothing = sin(Double.pi * f0 * quefrency) / (Double.pi * f0 * quefrency)
            let recovery = (1.0 - 2.0 * q1) + 2.0 * q1 * cos(2.0 * Double.pi * quefrency * f0)
            inverse.spectrum[quefrencyBin] = Complex(cepstrum[quefrencyBin].real * smoothing * recovery / Double(fftSize), 0)
        }
        inverse.execute()

        for bin in 0...half {
            envelope[bin] = exp(inverse.waveform[bin])
        }
    }
}
