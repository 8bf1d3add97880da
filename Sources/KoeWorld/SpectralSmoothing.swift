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
    /// Where each bin's lower and upper edges fall on the integral's axis, in bins.
    private let lowerPositions: UnsafeMutableBufferPointer<Double>
    private let upperPositions: UnsafeMutableBufferPointer<Double>

    init(fftSize: Int, sampleRate: Int) {
        precondition(fftSize >= 8 && fftSize % 2 == 0, "FFT size must be even and at least 8")
        self.fftSize = fftSize
        self.sampleRate = sampleRate
        binCount = fftSize / 2 + 1
        binWidth = Double(sampleRate) / Double(fftSize)
        integral = .allocate(capacity: 3 * (fftSize / 2) + 1)
        replica = .allocate(capacity: binCount)
        lowerPositions = .allocate(capacity: binCount)
        upperPositions = .allocate(capacity: binCount)
    }

    deinit {
        integral.deallocate()
        replica.deallocate()
        lowerPositions.deallocate()
        upperPositions.deallocate()
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
        edgePositions(width: width, origin: origin)
        let levels = UnsafeBufferPointer(rebasing: integral[0..<integralCount])
        let last = integralCount - 1
        for bin in 0...half {
            let lower = interpolate(levels, last: last, at: lowerPositions[bin])
            let upper = interpolate(levels, last: last, at: upperPositions[bin])
            output[bin] = (upper - lower) / width
        }
    }

    /// The bins' edges `bin * fs / fftSize ∓ width / 2` as positions on the integral's axis, computed exactly
    /// as WORLD does: the smoothing subtracts nearly equal integrals, so even the last bit of a position
    /// shows in a quiet part of the result. Divisions by a power-of-two size are exact multiplications, and
    /// a loop of nothing but this arithmetic runs two lanes at a time.
    private func edgePositions(width: Double, origin: Double) {
        let (lowerPositions, upperPositions) = (lowerPositions, upperPositions)
        let (rate, size, binWidth) = (Double(sampleRate), Double(fftSize), binWidth)
        let halfWidth = width / 2.0
        if fftSize & (fftSize - 1) == 0 {
            let inverseSize = 1.0 / size
            for bin in 0..<binCount {
                let lowerEdge = Double(bin) * inverseSize * rate - halfWidth
                lowerPositions[bin] = (lowerEdge - origin) / binWidth
                upperPositions[bin] = (lowerEdge + width - origin) / binWidth
            }
        } else {
            for bin in 0..<binCount {
                let lowerEdge = Double(bin) / size * rate - halfWidth
                lowerPositions[bin] = (lowerEdge - origin) / binWidth
                upperPositions[bin] = (lowerEdge + width - origin) / binWidth
            }
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
