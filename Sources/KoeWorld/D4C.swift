import Foundation

/// D4C: band aperiodicity from the temporally static group delay (Morise 2016), after the
/// "love train" voiced/unvoiced test; frames judged unvoiced stay fully aperiodic.
public struct D4C: Sendable {
    public struct Options: Sendable, Equatable {
        /// Voiced/unvoiced threshold on the love-train periodicity score (0 keeps every F0 frame voiced).
        /// WORLD's default, 0.85, suits Harvest, which calls most frames voiced.
        public var threshold: Double

        public init(threshold: Double = 0.85) {
            self.threshold = threshold
        }
    }

    public let sampleRate: Int
    /// The size of the FFT the result is laid out for (CheapTrick's), giving `fftSize / 2 + 1` bins a frame.
    public let fftSize: Int
    public let options: Options

    public init(sampleRate: Int, fftSize: Int, options: Options = Options()) {
        precondition(fftSize >= 2 && fftSize % 2 == 0, "D4C's FFT size must be even")
        self.sampleRate = sampleRate
        self.fftSize = fftSize
        self.options = options
    }

    /// Linear aperiodicity in (0, 1] for each frame and bin.
    public func estimate(_ signal: [Double], contour: F0Contour) -> Matrix {
        var aperiodicity = Matrix(rows: contour.frameCount, columns: fftSize / 2 + 1, repeating: 1.0 - 1e-12)
        var noise = Randn()
        let periodicity = LoveTrain(sampleRate: sampleRate)
        let bands = BandAperiodicity(sampleRate: sampleRate, outputFFTSize: fftSize)
        signal.withUnsafeBufferPointer { x in
            let scores = periodicity.scores(x, contour: contour, noise: &noise)
            for frame in 0..<contour.frameCount where D4C.isVoiced(contour.f0[frame]) && scores[frame] > options.threshold {
                let f0 = min(max(D4C.f0Floor, contour.f0[frame]), bands.highestF0)
                aperiodicity.withMutableRow(frame) { row in
                    bands.estimate(x, f0: f0, time: contour.time[frame], noise: &noise, into: row)
                }
            }
        }
        return aperiodicity
    }

    /// WORLD marks unvoiced frames with an F0 of exactly 0; NaN cannot be analysed either.
    static func isVoiced(_ f0: Double) -> Bool {
        f0 != 0 && !f0.isNaN
    }

    /// Frames below this F0 (Hz) are analysed as if at it.
    static let f0Floor = 47.0
    /// Amplitude of the noise added to every windowed sample so no spectrum is exactly zero.
    static let safeguardNoise = 1e-6
}

/// The two F0-adaptive windows D4C uses.
private enum WindowShape {
    case hann, blackman
}

/// Samples around `time` under an F0-adaptive window `lengthInPeriods` periods long, plus safeguard
/// noise, with the window-shaped DC removed; written to the start of `waveform`. Samples outside the
/// signal repeat its end points. `window` is scratch. Returns the number of samples written.
private func windowWaveform(
    _ x: UnsafeBufferPointer<Double>, sampleRate: Int, f0: Double, time: Double,
    shape: WindowShape, lengthInPeriods: Double, window: UnsafeMutableBufferPointer<Double>,
    noise: inout Randn, into waveform: UnsafeMutableBufferPointer<Double>
) -> Int {
    let halfLength = Matlab.round(lengthInPeriods * Double(sampleRate) / f0 / 2.0)
    let length = 2 * halfLength + 1
    designWindow(shape, halfLength: halfLength, sampleRate: sampleRate, f0: f0, lengthInPeriods: lengthInPeriods, into: window)
    let origin = Matlab.round(time * Double(sampleRate) + 0.001)
    for i in 0..<length {
        let index = min(x.count - 1, max(0, origin + i - halfLength))
        waveform[i] = x[index] * window[i] + noise.next() * D4C.safeguardNoise
    }
    var waveformSum = 0.0
    var windowSum = 0.0
    for i in 0..<length {
        waveformSum += waveform[i]
        windowSum += window[i]
    }
    let dcLevel = waveformSum / windowSum
    for i in 0..<length {
        waveform[i] -= window[i] * dcLevel
    }
    return length
}

/// A symmetric window, so each value is computed once for both halves.
private func designWindow(
    _ shape: WindowShape, halfLength: Int, sampleRate: Int, f0: Double, lengthInPeriods: Double,
    into window: UnsafeMutableBufferPointer<Double>
) {
    for offset in 0...halfLength {
        let position = (2.0 * Double(offset) / lengthInPeriods) / Double(sampleRate)
        let phase = Double.pi * position * f0
        let value: Double
        switch shape {
        case .hann:
            value = 0.5 * cos(phase) + 0.5
        case .blackman:
            value = 0.42 + 0.5 * cos(phase) + 0.08 * cos(phase * 2)
        }
        window[halfLength + offset] = value
        window[halfLength - offset] = value
    }
}

/// The love-train periodicity score: the share of 100–7900 Hz power that lies below 4 kHz in a
/// 3-period Blackman window. Voiced speech concentrates there; noise does not.
private final class LoveTrain {
    private let sampleRate: Int
    private let fftSize: Int
    private let forward: ForwardRealFFT
    private let window: UnsafeMutableBufferPointer<Double>
    private let cumulativePower: UnsafeMutableBufferPointer<Double>
    private let lowBound: Int
    private let splitBound: Int
    private let highBound: Int

    /// The lowest F0 the window is sized for.
    private static let f0Floor = 40.0

    init(sampleRate: Int) {
        self.sampleRate = sampleRate
        fftSize = fftSizeHolding(periods: 3, of: LoveTrain.f0Floor, sampleRate: sampleRate)
        forward = ForwardRealFFT(size: fftSize)
        window = .allocate(capacity: fftSize)
        cumulativePower = .allocate(capacity: fftSize / 2 + 1)
        lowBound = Int((100.0 * Double(fftSize) / Double(sampleRate)).rounded(.up))
        splitBound = Int((4000.0 * Double(fftSize) / Double(sampleRate)).rounded(.up))
        highBound = Int((7900.0 * Double(fftSize) / Double(sampleRate)).rounded(.up))
    }

    deinit {
        window.deallocate()
        cumulativePower.deallocate()
    }

    /// Below 15.8 kHz the 7900 Hz bound lies past Nyquist. WORLD then sums memory it never wrote, and in
    /// practice (pyworld) scores all frames, or all but the first voiced one, as unvoiced; here all.
    private var bandFits: Bool { highBound <= fftSize / 2 }

    /// One score a frame; 0 for unvoiced frames.
    func scores(_ x: UnsafeBufferPointer<Double>, contour: F0Contour, noise: inout Randn) -> [Double] {
        var scores = [Double](repeating: 0, count: contour.frameCount)
        guard bandFits else { return scores }
        for frame in 0..<contour.frameCount where D4C.isVoiced(contour.f0[frame]) {
            scores[frame] = score(x, f0: max(contour.f0[frame], LoveTrain.f0Floor), time: contour.time[frame], noise: &noise)
        }
        return scores
    }

    private func score(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: inout Randn) -> Double {
        let length = windowWaveform(
            x, sampleRate: sampleRate, f0: f0, time: time, shape: .blackman, lengthInPeriods: 3.0,
            window: window, noise: &noise, into: forward.waveform)
        for i in length..<fftSize {
            forward.waveform[i] = 0
        }
        forward.execute()
        for bin in 0...lowBound {
            cumulativePower[bin] = 0
        }
        let spectrum = forward.spectrum
        for bin in (lowBound + 1)...(fftSize / 2) {
            cumulativePower[bin] = spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
        }
        for bin in lowBound...highBound {
            cumulativePower[bin] += cumulativePower[bin - 1]
        }
        return cumulativePower[splitBound] / cumulativePower[highBound]
    }
}

/// Aperiodicity of one voiced frame in 3 kHz bands (up to 15 kHz), interpolated onto the output bins.
private final class BandAperiodicity {
    private let sampleRate: Int
    private let fftSize: Int
    private let outputFFTSize: Int
    private let forward: ForwardRealFFT
    private let smoothing: SpectralSmoothing
    private let window: UnsafeMutableBufferPointer<Double>
    private let savedSpectrum: UnsafeMutableBufferPointer<Complex>
    private let staticCentroid: UnsafeMutableBufferPointer<Double>
    private let smoothedPower: UnsafeMutableBufferPointer<Double>
    private let groupDelay: UnsafeMutableBufferPointer<Double>
    private let smoothedGroupDelay: UnsafeMutableBufferPointer<Double>
    private let bandPower: UnsafeMutableBufferPointer<Double>
    private let bandWindow: [Double]
    private let bandCount: Int
    /// Band edges in Hz: 0, 3 kHz, 6 kHz, … then Nyquist; `coarse` holds the level (dB) at each.
    private let coarseAxis: [Double]
    private var coarse: [Double]
    private let outputAxis: [Double]

    private static let bandSpacing = 3000.0
    private static let upperLimit = 15000.0

    init(sampleRate: Int, outputFFTSize: Int) {
        self.sampleRate = sampleRate
        self.outputFFTSize = outputFFTSize
        fftSize = fftSizeHolding(periods: 4, of: D4C.f0Floor, sampleRate: sampleRate)
        forward = ForwardRealFFT(size: fftSize)
        smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        let binCount = fftSize / 2 + 1
        window = .allocate(capacity: fftSize)
        savedSpectrum = .allocate(capacity: binCount)
        staticCentroid = .allocate(capacity: binCount)
        smoothedPower = .allocate(capacity: binCount)
        groupDelay = .allocate(capacity: binCount)
        smoothedGroupDelay = .allocate(capacity: binCount)
        bandPower = .allocate(capacity: binCount)

        let spacing = BandAperiodicity.bandSpacing
        bandCount = Int(min(BandAperiodicity.upperLimit, Double(sampleRate) / 2.0 - spacing) / spacing)
        bandWindow = Window.nuttall(length: Int(spacing * Double(fftSize) / Double(sampleRate)) * 2 + 1)
        coarseAxis = (0...bandCount).map { Double($0) * spacing } + [Double(sampleRate) / 2.0]
        coarse = [-60.0] + [Double](repeating: 0, count: bandCount) + [-1e-12]
        outputAxis = (0...(outputFFTSize / 2)).map { Double($0) * Double(sampleRate) / Double(outputFFTSize) }
    }

    deinit {
        window.deallocate()
        savedSpectrum.deallocate()
        staticCentroid.deallocate()
        smoothedPower.deallocate()
        groupDelay.deallocate()
        smoothedGroupDelay.deallocate()
        bandPower.deallocate()
    }

    var highestF0: Double { smoothing.highestF0 }

    func estimate(
        _ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: inout Randn,
        into aperiodicity: UnsafeMutableBufferPointer<Double>
    ) {
        computeStaticCentroid(x, f0: f0, time: time, noise: &noise)
        computeSmoothedPower(x, f0: f0, time: time, noise: &noise)
        computeStaticGroupDelay(f0: f0)
        computeCoarseAperiodicity(f0: f0)
        interpolate(into: aperiodicity)
    }

    /// Sum of the energy centroids half a period apart, which cancels their oscillation with time.
    private func computeStaticCentroid(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: inout Randn) {
        let binCount = fftSize / 2 + 1
        addCentroid(x, f0: f0, time: time - 0.25 / f0, noise: &noise, replacing: true)
        addCentroid(x, f0: f0, time: time + 0.25 / f0, noise: &noise, replacing: false)
        smoothing.correctDC(UnsafeMutableBufferPointer(rebasing: staticCentroid[0..<binCount]), f0: f0)
    }

    /// Energy centroid along time (Cohen): Re{X · conj(FFT(t·x))} of a 4-period Blackman frame of unit energy.
    private func addCentroid(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: inout Randn, replacing: Bool) {
        let waveform = forward.waveform
        let length = windowWaveform(
            x, sampleRate: sampleRate, f0: f0, time: time, shape: .blackman, lengthInPeriods: 4.0,
            window: window, noise: &noise, into: waveform)
        for i in length..<fftSize {
            waveform[i] = 0
        }
        var energy = 0.0
        for i in 0..<length {
            energy += waveform[i] * waveform[i]
        }
        for i in 0..<length {
            waveform[i] /= energy.squareRoot()
        }
        forward.execute()
        let spectrum = forward.spectrum
        for bin in 0...(fftSize / 2) {
            savedSpectrum[bin] = spectrum[bin]
        }
        for i in 0..<length {
            waveform[i] *= Double(i) + 1.0
        }
        forward.execute()
        for bin in 0...(fftSize / 2) {
            let centroid = spectrum[bin].real * savedSpectrum[bin].real + savedSpectrum[bin].imag * spectrum[bin].imag
            staticCentroid[bin] = replacing ? centroid : staticCentroid[bin] + centroid
        }
    }

    /// Power spectrum of a 4-period Hann frame, DC-corrected and smoothed over F0.
    private func computeSmoothedPower(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: inout Randn) {
        let waveform = forward.waveform
        let length = windowWaveform(
            x, sampleRate: sampleRate, f0: f0, time: time, shape: .hann, lengthInPeriods: 4.0,
            window: window, noise: &noise, into: waveform)
        for i in length..<fftSize {
            waveform[i] = 0
        }
        forward.execute()
        let spectrum = forward.spectrum
        for bin in 0...(fftSize / 2) {
            smoothedPower[bin] = spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
        }
        let power = UnsafeMutableBufferPointer(rebasing: smoothedPower[0...(fftSize / 2)])
        smoothing.correctDC(power, f0: f0)
        smoothing.smooth(power, width: f0)
    }

    /// Group delay smoothed over F0 / 2, minus its trend over F0: what is left is the fine structure
    /// that stays flat for periodic bands and fluctuates for noisy ones.
    private func computeStaticGroupDelay(f0: Double) {
        let bins = 0...(fftSize / 2)
        for bin in bins {
            groupDelay[bin] = staticCentroid[bin] / smoothedPower[bin]
        }
        let delay = UnsafeMutableBufferPointer(rebasing: groupDelay[bins])
        smoothing.smooth(delay, width: f0 / 2.0)
        smoothing.smooth(UnsafeBufferPointer(delay), width: f0, into: UnsafeMutableBufferPointer(rebasing: smoothedGroupDelay[bins]))
        for bin in bins {
            groupDelay[bin] -= smoothedGroupDelay[bin]
        }
    }

    /// For each 3 kHz band: the spectrum of the Nuttall-windowed group delay around its centre; the
    /// share of power outside its strongest bins, in dB, then raised for higher F0 and capped at 0 dB.
    private func computeCoarseAperiodicity(f0: Double) {
        let half = fftSize / 2
        let windowHalfLength = bandWindow.count / 2
        let strongBins = Matlab.round(Double(fftSize) * 8.0 / Double(bandWindow.count))
        let waveform = forward.waveform
        for i in bandWindow.count..<fftSize {
            waveform[i] = 0
        }
        let spectrum = forward.spectrum
        for band in 0..<bandCount {
            let center = Int(BandAperiodicity.bandSpacing * Double(band + 1) * Double(fftSize) / Double(sampleRate))
            for i in 0..<bandWindow.count {
                waveform[i] = groupDelay[center - windowHalfLength + i] * bandWindow[i]
            }
            forward.execute()
            for bin in 0...half {
                bandPower[bin] = spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
            }
            let (weakSum, total) = sumOfSmallest(UnsafeMutableBufferPointer(rebasing: bandPower[0...half]), count: half - strongBins)
            let level = 10 * log10(weakSum / total)
            coarse[band + 1] = min(0.0, level + (f0 - 100) / 50.0)
        }
    }

    /// Linear interpolation of the band levels (dB) onto the output bins, as amplitude.
    private func interpolate(into aperiodicity: UnsafeMutableBufferPointer<Double>) {
        coarseAxis.withUnsafeBufferPointer { axis in
            coarse.withUnsafeBufferPointer { levels in
                outputAxis.withUnsafeBufferPointer { bins in
                    Matlab.interp1(x: axis, y: levels, at: bins, into: aperiodicity)
                }
            }
        }
        for bin in aperiodicity.indices {
            aperiodicity[bin] = pow(10.0, aperiodicity[bin] / 20.0)
        }
    }
}

/// The sum of the `count` smallest values and the sum of all, by partial partitioning in place
/// (quickselect); the order of `values` is not kept.
private func sumOfSmallest(_ values: UnsafeMutableBufferPointer<Double>, count: Int) -> (smallest: Double, total: Double) {
    guard count > 0 else { return (0, values.reduce(0, +)) }
    var low = 0
    var high = values.count - 1
    let target = count - 1
    while low < high {
        let pivot = medianOfThree(values[low], values[(low + high) / 2], values[high])
        var i = low
        var j = high
        while i <= j {
            while values[i] < pivot { i += 1 }
            while values[j] > pivot { j -= 1 }
            if i <= j {
                values.swapAt(i, j)
                i += 1
                j -= 1
            }
        }
        if target <= j {
            high = j
        } else if target >= i {
            low = i
        } else {
            break
        }
    }
    var smallest = 0.0
    for index in 0..<count {
        smallest += values[index]
    }
    var rest = 0.0
    for index in count..<values.count {
        rest += values[index]
    }
    return (smallest, smallest + rest)
}

private func medianOfThree(_ a: Double, _ b: Double, _ c: Double) -> Double {
    max(min(a, b), min(max(a, b), c))
}
