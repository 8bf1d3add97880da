import Glibc
import KoeDSP

/// WORLD's StoneMask: refines each voiced frame's F0 from the instantaneous frequencies of its lowest
/// harmonics, measured with a Blackman window three periods long and that window's time derivative.
/// Numbers follow WORLD's `StoneMask` step for step.
public struct StoneMask: Sendable {
    public let sampleRate: Int

    /// F0 at or below which a frame is left unvoiced (WORLD's `kFloorF0StoneMask`, 40 Hz).
    static let f0Floor = 40.0

    /// Throws if the rate is not supported.
    public init(sampleRate: Int) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        self.sampleRate = sampleRate
    }

    /// The contour with each frame's F0 refined (unvoiced where it cannot be). Throws if `signal` is empty or
    /// not finite throughout, or a frame's time is not finite or lies beyond `F0Contour.farthestTime`.
    public func refine(_ signal: [Double], contour: F0Contour) throws(WorldError) -> F0Contour {
        try SignalRequirements.validate(signal, contour: contour)
        var f0: [Double] = []
        signal.withUnsafeBufferPointer { Refiner(sampleRate: sampleRate).refine($0, contour: contour, into: &f0) }
        return F0Contour(sameLengthTime: contour.time, f0: f0)
    }

    /// Samples past a frame's centre that refining an F0 above `lowestF0` reads (at most).
    static func reach(sampleRate: Int, lowestF0: Double) -> Int {
        RefinementWindow(f0: max(lowestF0, f0Floor), sampleRate: sampleRate).halfLength + 2
    }

    /// Refines one frame at a time, reading only the samples around it; keeps one pair of FFTs per size and
    /// window workspaces across frames and calls, so a frame allocates nothing once they have grown. One
    /// thread at a time.
    package final class Refiner {
        private let sampleRate: Int
        private var transforms: [Int: (main: ForwardRealFFT, derivative: ForwardRealFFT)] = [:]
        private var sampleIndex: [Int] = []
        private var mainWindow: [Double] = []
        private var derivativeWindow: [Double] = []

        /// Largest relative correction accepted; beyond it the initial F0 is kept.
        private static let maximumCorrection = 0.2

        /// `sampleRate` must be a supported one.
        package init(sampleRate: Int) {
            self.sampleRate = sampleRate
            // Every FFT size and the longest window a refinable F0 can ask for, made now: a stream that met a
            // new one later would allocate in the middle of the audio.
            let longest = RefinementWindow(f0: StoneMask.f0Floor, sampleRate: sampleRate)
            var size = RefinementWindow(f0: Double(sampleRate) / 12.0, sampleRate: sampleRate).fftSize
            while size <= longest.fftSize {
                _ = transforms(size: size)
                size *= 2
            }
            sampleIndex = [Int](repeating: 0, count: longest.length)
            mainWindow = [Double](repeating: 0, count: longest.length)
            derivativeWindow = [Double](repeating: 0, count: longest.length)
        }

        /// `StoneMask.refine`'s F0, written into `f0` (one value a frame), which keeps its capacity from call
        /// to call. `signal` must not be empty.
        package func refine(_ signal: UnsafeBufferPointer<Double>, contour: F0Contour, into f0: inout [Double]) {
            let view = SignalView(samples: signal, start: 0, length: signal.count)
            f0.removeAll(keepingCapacity: true)
            for frame in 0..<contour.frameCount {
                f0.append(refined(contour.f0[frame], at: contour.time[frame], in: view))
            }
        }

        /// WORLD refines F0 above 40 Hz and up to a twelfth of the sample rate; anything else is unvoiced.
        private func isRefinable(_ f0: Double) -> Bool {
            f0 > StoneMask.f0Floor && f0 <= Double(sampleRate) / 12.0
        }

        /// The refined F0 of the frame centred at `time` (seconds from the signal's start), whose initial F0 is
        /// `initialF0`. `signal` must hold every sample within `StoneMask.reach` of the centre that lies inside
        /// the signal.
        func refined(_ initialF0: Double, at time: Double, in signal: SignalView) -> Double {
            guard isRefinable(initialF0) else { return 0 }
            let window = RefinementWindow(f0: initialF0, sampleRate: sampleRate)
            prepareWindows(window, position: time)
            let (main, derivative) = windowedSpectra(window, signal: signal, fft: transforms(size: window.fftSize))
            let spectra = HarmonicSpectra(main: main, derivative: derivative, fftSize: window.fftSize, sampleRate: sampleRate)
            let estimate = spectra.tentativeF0(initialF0)
            return abs(estimate - initialF0) > initialF0 * Self.maximumCorrection ? initialF0 : estimate
        }

        private func transforms(size: Int) -> (main: ForwardRealFFT, derivative: ForwardRealFFT) {
            if let pair = transforms[size] { return pair }
            let pair = (ForwardRealFFT(size: size), ForwardRealFFT(size: size))
            transforms[size] = pair
            return pair
        }

        /// Sample positions of the window around `position`, the Blackman window evaluated there, and its
        /// central-difference derivative.
        private func prepareWindows(_ window: RefinementWindow, position: Double) {
            let length = window.length
            // The buffers were made at construction for the longest window a refinable F0 has.
            precondition(sampleIndex.count >= length, "a refinable F0 needs no longer window than the refiner made")
            let rate = Double(sampleRate)
            let consecutive = sampleIndex.withUnsafeMutableBufferPointer { sampleIndex in
                var consecutive = true
                for i in 0..<length {
                    let offset = Double(i - window.halfLength) / rate
                    sampleIndex[i] = Matlab.round((position + offset) * rate)
                    consecutive = consecutive && (i == 0 || sampleIndex[i] == sampleIndex[i - 1] + 1)
                }
                return consecutive
            }
            // Indices are 1-based as in the MATLAB original: index k reads sample k - 1, whose time this is.
            func phase(_ index: Int) -> Double {
                2.0 * Double.pi * ((Double(index) - 1.0) / rate - position) / window.durationInSeconds
            }
            mainWindow.withUnsafeMutableBufferPointer { mainWindow in
                let cosines = UnsafeMutableBufferPointer(rebasing: mainWindow[0..<length])
                // Consecutive samples (nearly always) advance the phase by 2π / length: a progression.
                if consecutive {
                    // Made for each frame, not kept for each length: the F0 sets the length, and a cache of
                    // them would allocate whenever a stream meets a new one.
                    Trigonometry.cosines(start: phase(sampleIndex[0]), step: 2.0 * Double.pi / Double(length), into: cosines)
                } else {
                    for i in 0..<length {
                        cosines[i] = cos(phase(sampleIndex[i]))
                    }
                }
                // The Blackman window's second cosine is the first's double angle: cos 2x = 2 cos^2 x - 1.
                for i in 0..<length {
                    let c = cosines[i]
                    cosines[i] = 0.42 + 0.5 * c + 0.08 * (2.0 * c * c - 1.0)
                }
                derivativeWindow.withUnsafeMutableBufferPointer { derivativeWindow in
                    derivativeWindow[0] = -mainWindow[1] / 2.0
                    for i in 1..<(length - 1) {
                        derivativeWindow[i] = -(mainWindow[i + 1] - mainWindow[i - 1]) / 2.0
                    }
                    derivativeWindow[length - 1] = mainWindow[length - 2] / 2.0
                }
            }
        }

        /// Spectra of the signal under the window and under its derivative; samples outside the signal
        /// repeat its first or last sample.
        private func windowedSpectra(
            _ window: RefinementWindow, signal: SignalView, fft: (main: ForwardRealFFT, derivative: ForwardRealFFT)
        ) -> (main: UnsafeMutableBufferPointer<Complex>, derivative: UnsafeMutableBufferPointer<Complex>) {
            let main = fft.main.waveform
            let derivative = fft.derivative.waveform
            for i in 0..<window.length {
                let sample = signal[clamping: sampleIndex[i] - 1]
                main[i] = sample * mainWindow[i]
                derivative[i] = sample * derivativeWindow[i]
            }
            for i in window.length..<window.fftSize {
                main[i] = 0
                derivative[i] = 0
            }
            fft.main.execute()
            fft.derivative.execute()
            return (fft.main.spectrum, fft.derivative.spectrum)
        }
    }
}

/// A stretch of a longer signal of `length` samples: `samples[i]` is its sample `start + i`.
struct SignalView {
    let samples: UnsafeBufferPointer<Double>
    let start: Int
    let length: Int

    /// The signal's sample at `index`, or its first or last sample when `index` lies before or after it.
    subscript(clamping index: Int) -> Double {
        let clamped = min(max(index, 0), length - 1)
        precondition(clamped >= start && clamped - start < samples.count, "sample \(clamped) is not in the view")
        return samples[clamped - start]
    }
}

/// Geometry of the analysis window for one initial F0.
private struct RefinementWindow {
    let halfLength: Int
    let durationInSeconds: Double
    let fftSize: Int

    init(f0: Double, sampleRate: Int) {
        halfLength = Int(1.5 * Double(sampleRate) / f0 + 1.0)
        durationInSeconds = (2.0 * Double(halfLength) + 1.0) / Double(sampleRate)
        let octaves = Int(log(Double(halfLength) * 2.0 + 1.0) / log(2.0))
        fftSize = Int(pow(2.0, 2.0 + Double(octaves)))
    }

    var length: Int { 2 * halfLength + 1 }
}

/// Power and instantaneous-frequency numerator read from the two spectra, bin by bin as needed.
private struct HarmonicSpectra {
    let main: UnsafeMutableBufferPointer<Complex>
    let derivative: UnsafeMutableBufferPointer<Complex>
    let fftSize: Int
    let sampleRate: Int

    /// Keeps the harmonic average finite when every amplitude is zero (WORLD's `kMySafeGuardMinimum`).
    private static let safeGuard = 1e-12

    /// A first estimate from two harmonics; if plausible (positive, under twice the initial F0),
    /// the final one from six harmonics around it.
    func tentativeF0(_ initialF0: Double) -> Double {
        let coarse = weightedF0(around: initialF0, harmonics: 2)
        guard coarse > 0.0, coarse <= initialF0 * 2 else { return 0 }
        return weightedF0(around: coarse, harmonics: 6)
    }

    /// Instantaneous frequencies of the bins nearest the first `harmonics` multiples of `f0`, each divided
    /// by its harmonic number and averaged with amplitude weights.
    private func weightedF0(around f0: Double, harmonics: Int) -> Double {
        let rate = Double(sampleRate)
        var numerator = 0.0
        var denominator = 0.0
        for harmonic in 1...harmonics {
            let bin = min(Matlab.round(f0 * Double(fftSize) / rate * Double(harmonic)), fftSize / 2)
            let m = main[bin]
            let d = derivative[bin]
            let power = m.real * m.real + m.imag * m.imag
            let phaseNumerator = m.real * d.imag - m.imag * d.real
            let frequency = power == 0.0
                ? 0.0
                : Double(bin) * rate / Double(fftSize) + phaseNumerator / power * rate / 2.0 / Double.pi
            let amplitude = power.squareRoot()
            numerator += amplitude * frequency
            denominator += amplitude * Double(harmonic)
        }
        return numerator / (denominator + Self.safeGuard)
    }
}
