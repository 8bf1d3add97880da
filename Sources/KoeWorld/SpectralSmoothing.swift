/// The two spectral helpers CheapTrick and D4C share: WORLD's DC correction, which folds the
/// part of a spectrum below F0 back onto itself, and its rectangular smoothing along frequency.
/// Scratch space for one FFT size is allocated once, so frame loops never allocate.
final class SpectralSmoothing {
    let fftSize: Int
    let sampleRate: Int

    private let binCount: Int
    private let binWidth: Double
    /// Running integral of the spectrum mirrored at both ends; room for the widest allowed width.
    private let integral: UnsafeMutableBufferPointer<Double>
    private let replica: UnsafeMutableBufferPointer<Double>

    init(fftSize: Int, sampleRate: Int) {
        precondition(fftSize >= 8 && fftSize % 2 == 0, "FFT size must be even and at least 8")
        self.fftSize = fftSize
        self.sampleRate = sampleRate
        binCount = fftSize / 2 + 1
        binWidth = Double(sampleRate) / Double(fftSize)
        integral = .allocate(capacity: 3 * (fftSize / 2) + 1)
        replica = .allocate(capacity: binCount)
    }

    deinit {
        integral.deallocate()
        replica.deallocate()
    }

    /// The highest F0 (and smoothing width) in Hz both helpers accept at this FFT size:
    /// above it WORLD would read past the end of the spectrum.
    var highestF0: Double {
        SpectralSmoothing.highestF0(fftSize: fftSize, sampleRate: sampleRate)
    }

    static func highestF0(fftSize: Int, sampleRate: Int) -> Double {
        Double(fftSize / 2 - 2) * Double(sampleRate) / Double(fftSize)
    }

    /// Adds to each bin below `f0` the spectrum mirrored about `f0`, in place
    /// (the energy a windowed harmonic leaks below 0 Hz comes back positive).
    func correctDC(_ spectrum: UnsafeMutableBufferPointer<Double>, f0: Double) {
        precondition(spectrum.count >= binCount && f0 >= 0 && f0 <= highestF0)
        let upperLimit = 2 + Int(f0 * Double(fftSize) / Double(sampleRate))
        let replicaCount = upperLimit - 1
        // The spectrum read backwards from f0 on the bin grid (WORLD's interp1Q with a negative step).
        for bin in 0..<replicaCount {
            let position = (Double(bin) * binWidth - f0) / -binWidth
            replica[bin] = interpolate(UnsafeBufferPointer(spectrum), last: upperLimit, at: position)
        }
        for bin in 0..<replicaCount {
            spectrum[bin] += replica[bin]
        }
    }

    /// Moving average of `input` over a rectangle `width` Hz wide centred on each bin, through the
    /// running integral of the spectrum mirrored at 0 Hz and at Nyquist. `output` may be `input`.
    func smooth(_ input: UnsafeBufferPointer<Double>, width: Double, into output: UnsafeMutableBufferPointer<Double>) {
        let half = fftSize / 2
        let boundary = Int(width * Double(fftSize) / Double(sampleRate)) + 1
        precondition(input.count >= binCount && output.count >= binCount && width > 0 && boundary <= half)
        let integralCount = half + 2 * boundary + 1
        integrateMirrored(input, boundary: boundary, count: integralCount)

        // Bin edges `bin * binWidth ∓ width / 2`, as positions on the integral's axis, which starts
        // `boundary - 0.5` bins below 0 Hz.
        let origin = -(Double(boundary) - 0.5) * binWidth
        let levels = UnsafeBufferPointer(rebasing: integral[0..<integralCount])
        let last = integralCount - 1
        for bin in 0...half {
            let lowerEdge = Double(bin) / Double(fftSize) * Double(sampleRate) - width / 2.0
            let upperEdge = lowerEdge + width
            let lower = interpolate(levels, last: last, at: (lowerEdge - origin) / binWidth)
            let upper = interpolate(levels, last: last, at: (upperEdge - origin) / binWidth)
            output[bin] = (upper - lower) / width
        }
    }

    /// In-place form of `smooth(_:width:into:)`.
    func smooth(_ spectrum: UnsafeMutableBufferPointer<Double>, width: Double) {
        smooth(UnsafeBufferPointer(spectrum), width: width, into: spectrum)
    }

    /// Linear interpolation of `y` at a non-negative fractional index, flat past index `last` (WORLD's interp1Q).
    @inline(__always)
    private func interpolate(_ y: UnsafeBufferPointer<Double>, last: Int, at position: Double) -> Double {
        let base = Int(position)
        let fraction = position - Double(base)
        let slope = base < last ? y[base + 1] - y[base] : 0
        return y[base] + slope * fraction
    }

    /// Integral (in power × Hz) of the spectrum extended by `boundary` mirrored bins at each end.
    private func integrateMirrored(_ spectrum: UnsafeBufferPointer<Double>, boundary: Int, count: Int) {
        let half = fftSize / 2
        let binWidth = binWidth
        var running = 0.0
        for index in 0..<boundary {
            running = spectrum[boundary - index] * binWidth + running
            integral[index] = running
        }
        for index in boundary..<(half + boundary) {
            running = spectrum[index - boundary] * binWidth + running
            integral[index] = running
        }
        for index in (half + boundary)..<count {
            running = spectrum[half - (index - (half + boundary))] * binWidth + running
            integral[index] = running
        }
    }
}
