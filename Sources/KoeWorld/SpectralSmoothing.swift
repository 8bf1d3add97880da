import KoeDSP
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
    /// Where each bin's lower and upper edges fall on the integral's axis, in bins, when `EdgeAxis` finds no
    /// steady shift.
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

        // The integral's axis starts `boundary - 0.5` bins below 0 Hz.
        let axis = EdgeAxis(
            sampleRate: sampleRate, fftSize: fftSize, width: width, origin: -(Double(boundary) - 0.5) * binWidth)
        let levels = UnsafeBufferPointer(rebasing: integral[0..<integralCount])
        let last = integralCount - 1
        if let shifts = axis.steadyShifts(binCount: binCount, last: last) {
            for bin in 0..<binCount {
                let (lowerPosition, upperPosition) = axis.positions(bin)
                let lower = interpolate(levels, base: bin &+ shifts.lower, at: lowerPosition)
                let upper = interpolate(levels, base: bin &+ shifts.upper, at: upperPosition)
                output[bin] = (upper - lower) / width
            }
            return
        }
        let (lowerPositions, upperPositions) = (lowerPositions, upperPositions)
        for bin in 0..<binCount {
            (lowerPositions[bin], upperPositions[bin]) = axis.positions(bin)
        }
        for bin in 0..<binCount {
            let lower = interpolate(levels, last: last, at: lowerPositions[bin])
            let upper = interpolate(levels, last: last, at: upperPositions[bin])
            output[bin] = (upper - lower) / width
        }
    }

    /// In-place form of `smooth(_:width:into:)`.
    func smooth(_ spectrum: UnsafeMutableBufferPointer<Double>, width: Double) {
        smooth(UnsafeBufferPointer(spectrum), width: width, into: spectrum)
    }

    /// `interpolate(_:last:at:)` for a position whose integer part `base` is known and below `last`.
    @inline(__always)
    private func interpolate(_ y: UnsafeBufferPointer<Double>, base: Int, at position: Double) -> Double {
        let fraction = position - Double(Int32(truncatingIfNeeded: base))
        return y[base] + (y[base &+ 1] - y[base]) * fraction
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

/// Where the edges of each bin's smoothing rectangle, `bin * fs / fftSize ∓ width / 2`, fall on the axis of
/// the mirrored integral, in bins from its start at `origin` Hz.
///
/// Computed exactly as WORLD computes them: the smoothing subtracts nearly equal integrals, so even the last
/// bit of a position shows in a quiet part of the result. (Division by a power-of-two size is an exact
/// multiplication.) The loops over bins that call `positions` vectorise, two divisions at a time.
private struct EdgeAxis {
    let rate: Double
    let size: Double
    let inverseSize: Double?
    let binWidth: Double
    let width: Double
    let halfWidth: Double
    let origin: Double

    init(sampleRate: Int, fftSize: Int, width: Double, origin: Double) {
        rate = Double(sampleRate)
        size = Double(fftSize)
        inverseSize = fftSize & (fftSize - 1) == 0 ? 1.0 / size : nil
        binWidth = rate / size
        self.width = width
        halfWidth = width / 2.0
        self.origin = origin
    }

    @inline(__always)
    func positions(_ bin: Int) -> (lower: Double, upper: Double) {
        let frequency = Double(Int32(truncatingIfNeeded: bin))
        let lowerEdge = (inverseSize.map { frequency * $0 } ?? frequency / size) * rate - halfWidth
        return ((lowerEdge - origin) / binWidth, (lowerEdge + width - origin) / binWidth)
    }

    /// Positions advance by one a bin, give or take far less than 10⁻⁶ of rounding. Unless the first ones lie
    /// that close to a whole number, each edge's integer part is its bin plus a constant shift, so the
    /// interpolation reads the integral in order with no conversion a bin. Nil when a shift is not certain,
    /// or when the highest edges reach the integral's last point (where interpolation turns flat).
    func steadyShifts(binCount: Int, last: Int) -> (lower: Int, upper: Int)? {
        let margin = 1e-6
        func shift(_ position: Double) -> Int? {
            let whole = position.rounded(.down)
            let fraction = position - whole
            return fraction > margin && fraction < 1 - margin ? Int(whole) : nil
        }
        let (lowerPosition, upperPosition) = positions(0)
        guard let lower = shift(lowerPosition), let upper = shift(upperPosition),
            binCount - 1 + max(lower, upper) < last
        else { return nil }
        return (lower, upper)
    }
}
