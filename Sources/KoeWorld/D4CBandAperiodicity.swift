import Glibc
import KoeDSP

/// Aperiodicity of one voiced frame in 3 kHz bands (up to 15 kHz), interpolated onto the output bins.
final class BandAperiodicity {
    private let sampleRate: Int
    private let fftSize: Int
    private let outputFFTSize: Int
    private let forward: ForwardRealFFT
    /// Transforms the windowed group delay of one band; its input beyond the band window stays zero.
    private let bandFFT: ForwardRealFFT
    private let smoothing: SpectralSmoothing
    private let window: D4CWindow
    /// Samples of `forward.waveform` written by the last window; the rest are zero.
    private var writtenLength = 0
    private let savedSpectrum: UnsafeMutableBufferPointer<Complex>
    private let staticCentroid: UnsafeMutableBufferPointer<Double>
    private let smoothedPower: UnsafeMutableBufferPointer<Double>
    private let groupDelay: UnsafeMutableBufferPointer<Double>
    private let smoothedGroupDelay: UnsafeMutableBufferPointer<Double>
    private let bandPower: UnsafeMutableBufferPointer<Double>
    /// Scratch for finding a band's strongest bins.
    private let strongestScratch: UnsafeMutableBufferPointer<Int64>
    private let bandWindow: [Double]
    private let bandCount: Int
    /// Band edges in Hz: 0, 3 kHz, 6 kHz, … then Nyquist; `coarse` holds the level (dB) at each.
    private let coarseAxis: [Double]
    private var coarse: [Double]
    private let outputAxis: [Double]

    private static let bandSpacing = 3000.0
    private static let upperLimit = 15000.0
    static let periods = 4.0

    static func fftSize(sampleRate: Int) -> Int {
        fftSizeHolding(periods: periods, of: D4C.f0Floor, sampleRate: sampleRate)
    }

    init(sampleRate: Int, outputFFTSize: Int) {
        self.sampleRate = sampleRate
        self.outputFFTSize = outputFFTSize
        fftSize = BandAperiodicity.fftSize(sampleRate: sampleRate)
        forward = ForwardRealFFT(size: fftSize)
        bandFFT = ForwardRealFFT(size: fftSize)
        smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        let binCount = fftSize / 2 + 1
        window = D4CWindow(capacity: fftSize)
        savedSpectrum = .allocate(capacity: binCount)
        staticCentroid = .allocate(capacity: binCount)
        smoothedPower = .allocate(capacity: binCount)
        groupDelay = .allocate(capacity: binCount)
        smoothedGroupDelay = .allocate(capacity: binCount)
        bandPower = .allocate(capacity: binCount)

        let spacing = BandAperiodicity.bandSpacing
        bandCount = Int(min(BandAperiodicity.upperLimit, Double(sampleRate) / 2.0 - spacing) / spacing)
        bandWindow = Window.nuttall(length: Int(spacing * Double(fftSize) / Double(sampleRate)) * 2 + 1)
        strongestScratch = .allocate(capacity: largestScratchCount(binCount))
        coarseAxis = (0...bandCount).map { Double($0) * spacing } + [Double(sampleRate) / 2.0]
        coarse = [-60.0] + [Double](repeating: 0, count: bandCount) + [-1e-12]
        outputAxis = (0...(outputFFTSize / 2)).map { Double($0) * Double(sampleRate) / Double(outputFFTSize) }
    }

    deinit {
        savedSpectrum.deallocate()
        staticCentroid.deallocate()
        smoothedPower.deallocate()
        groupDelay.deallocate()
        smoothedGroupDelay.deallocate()
        bandPower.deallocate()
        strongestScratch.deallocate()
    }

    /// Bins of a band's group-delay spectrum counted as its periodic peak.
    private static func strongBins(fftSize: Int, bandWindowLength: Int) -> Int {
        Matlab.round(Double(fftSize) * 8.0 / Double(bandWindowLength))
    }

    func estimate(
        _ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream,
        into aperiodicity: UnsafeMutableBufferPointer<Double>
    ) {
        computeStaticCentroid(x, f0: f0, time: time, noise: noise)
        computeSmoothedPower(x, f0: f0, time: time, noise: noise)
        computeStaticGroupDelay(f0: f0)
        computeCoarseAperiodicity(f0: f0)
        interpolate(into: aperiodicity)
    }

    /// A 4-period window of the signal into `forward.waveform`, zero beyond it; returns its length.
    private func window(
        _ x: UnsafeBufferPointer<Double>, shape: D4CWindow.Shape, f0: Double, time: Double, noise: NoiseStream
    ) -> Int {
        let waveform = forward.waveform
        let length = window.apply(
            to: x, sampleRate: sampleRate, f0: f0, time: time, shape: shape, periods: BandAperiodicity.periods,
            noise: noise, into: waveform)
        for i in length..<max(length, writtenLength) {
            waveform[i] = 0
        }
        writtenLength = length
        return length
    }

    /// Sum of the energy centroids half a period apart, which cancels their oscillation with time.
    private func computeStaticCentroid(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream) {
        let binCount = fftSize / 2 + 1
        addCentroid(x, f0: f0, time: time - 0.25 / f0, noise: noise, replacing: true)
        addCentroid(x, f0: f0, time: time + 0.25 / f0, noise: noise, replacing: false)
        smoothing.correctDC(UnsafeMutableBufferPointer(rebasing: staticCentroid[0..<binCount]), f0: f0)
    }

    /// Energy centroid along time (Cohen): Re{X · conj(FFT(t·x))} of a 4-period Blackman frame of unit energy.
    private func addCentroid(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream, replacing: Bool) {
        let waveform = forward.waveform
        let length = window(x, shape: .blackman, f0: f0, time: time, noise: noise)
        let norm = VectorMath.sumOfSquares(UnsafeBufferPointer(rebasing: waveform[0..<length])).squareRoot()
        for i in 0..<length {
            waveform[i] /= norm
        }
        forward.execute()
        let spectrum = forward.spectrum
        for bin in 0...(fftSize / 2) {
            savedSpectrum[bin] = spectrum[bin]
        }
        weightByPosition(UnsafeMutableBufferPointer(rebasing: waveform[0..<length]))
        forward.execute()
        func centroid(_ bin: Int) -> Double {
            spectrum[bin].real * savedSpectrum[bin].real + savedSpectrum[bin].imag * spectrum[bin].imag
        }
        if replacing {
            for bin in 0...(fftSize / 2) { staticCentroid[bin] = centroid(bin) }
        } else {
            for bin in 0...(fftSize / 2) { staticCentroid[bin] += centroid(bin) }
        }
    }

    /// Power spectrum of a 4-period Hann frame, DC-corrected and smoothed over F0.
    private func computeSmoothedPower(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream) {
        _ = window(x, shape: .hann, f0: f0, time: time, noise: noise)
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
        let strongBins = BandAperiodicity.strongBins(fftSize: fftSize, bandWindowLength: bandWindow.count)
        let waveform = bandFFT.waveform
        let spectrum = bandFFT.spectrum
        for band in 0..<bandCount {
            let center = Int(BandAperiodicity.bandSpacing * Double(band + 1) * Double(fftSize) / Double(sampleRate))
            for i in 0..<bandWindow.count {
                waveform[i] = groupDelay[center - windowHalfLength + i] * bandWindow[i]
            }
            bandFFT.execute()
            for bin in 0...half {
                bandPower[bin] = spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
            }
            let (weakSum, total) = sumOfSmallest(
                UnsafeBufferPointer(rebasing: bandPower[0...half]), count: half - strongBins, scratch: strongestScratch)
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
        // 10^(level / 20), as an exponential.
        VectorMath.exponentials(aperiodicity, scale: log(10.0) / 20.0)
    }
}

/// `values[i] *= i + 1`. The weights are counted in doubles, four lanes at a time, exact: AVX2 has no vector
/// conversion from 64-bit integers, and a single running weight would make each step wait for the addition before.
func weightByPosition(_ values: UnsafeMutableBufferPointer<Double>) {
    guard let base = values.baseAddress else { return }
    var weights = SIMD4<Double>(1, 2, 3, 4)
    var index = 0
    while index + 4 <= values.count {
        let lanes = UnsafeMutableRawPointer(base + index)
        lanes.storeBytes(of: lanes.loadUnaligned(as: SIMD4<Double>.self) * weights, as: SIMD4<Double>.self)
        weights += 4
        index += 4
    }
    for rest in index..<values.count {
        values[rest] *= Double(rest + 1)
    }
}

/// The sum of the `count` smallest values and the sum of all. Only a few values are left out, the largest,
/// so the threshold is found among a few candidates (`largest`) and one pass sums in order below it.
func sumOfSmallest(_ values: UnsafeBufferPointer<Double>, count: Int) -> (smallest: Double, total: Double) {
    withUnsafeTemporaryAllocation(of: Int64.self, capacity: largestScratchCount(values.count)) { scratch in
        sumOfSmallest(values, count: count, scratch: scratch)
    }
}

/// `sumOfSmallest`, with `scratch` (`largestScratchCount(values.count)` keys) for finding the threshold.
func sumOfSmallest(
    _ values: UnsafeBufferPointer<Double>, count: Int, scratch: UnsafeMutableBufferPointer<Int64>
) -> (smallest: Double, total: Double) {
    let excluded = values.count - count
    guard count > 0, excluded > 0 else {
        let total = values.reduce(0, +)
        return (count > 0 ? total : 0, total)
    }
    let (threshold, atOrAbove) = largest(excluded, of: values, scratch: scratch)
    // Four running sums of each kind, so that no addition waits for the one before.
    var totals = SIMD4<Double>()
    var smallests = SIMD4<Double>()
    var index = 0
    let base = values.baseAddress!
    while index + 4 <= values.count {
        let (a, b, c, d) = (base[index], base[index + 1], base[index + 2], base[index + 3])
        totals += SIMD4(a, b, c, d)
        smallests += SIMD4(a < threshold ? a : 0, b < threshold ? b : 0, c < threshold ? c : 0, d < threshold ? d : 0)
        index += 4
    }
    var smallest = smallests.sum()
    var total = totals.sum()
    for value in values[index...] {
        total += value
        if value < threshold {
            smallest += value
        }
    }
    // Values equal to the threshold make up the rest of the smallest `count`.
    smallest += Double(count - (values.count - atOrAbove)) * threshold
    return (smallest, total)
}
