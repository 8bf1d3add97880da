/// The two spectral helpers CheapTrick and D4C share: WORLD's DC correction, which folds the
/// part of a spectrum below F0 back onto itself, and its rectangular smoothing along frequency.
/// Scratch space for one FFT size is allocated once, so frame loops never allocate.
final class SpectralSmoothing {
    let fftSize: Int
    let sampleRate: Int

    private let binCount: Int
    /// Running integral of the spectrum mirrored at both ends; room for the widest allowed width.
    private let integral: UnsafeMutableBufferPointer<Double>
    private let lowerEdges: UnsafeMutableBufferPointer<Double>
    private let upperEdges: UnsafeMutableBufferPointer<Double>
    private let lowerLevels: UnsafeMutableBufferPointer<Double>
    private let upperLevels: UnsafeMutableBufferPointer<Double>
    private let replica: UnsafeMutableBufferPointer<Double>

    init(fftSize: Int, sampleRate: Int) {
        precondition(fftSize >= 8 && fftSize % 2 == 0, "FFT size must be even and at least 8")
        self.fftSize = fftSize
        self.sampleRate = sampleRate
        binCount = fftSize / 2 + 1
        integral = .allocate(capacity: 3 * (fftSize / 2) + 1)
        lowerEdges = .allocate(capacity: binCount)
        upperEdges = .allocate(capacity: binCount)
        lowerLevels = .allocate(capacity: binCount)
        upperLevels = .allocate(capacity: binCount)
        replica = .allocate(capacity: binCount)
    }

    deinit {
        integral.deallocate()
        lowerEdges.deallocate()
        upperEdges.deallocate()
        lowerLevels.deallocate()
        upperLevels.deallocate()
        replica.deallocate()
    }

    /// The highest F0 (and smoothing width) in Hz both helpers accept at this FFT size:
    /// above it WORLD would read past the end of the spectrum.
    var highestF0: Double {
        Double(fftSize / 2 - 2) * Double(sampleRate) / Double(fftSize)
    }

    /// Adds to each bin below `f0` the spectrum mirrored about `f0`, in place
    /// (the energy a windowed harmonic leaks below 0 Hz comes back positive).
    func correctDC(_ spectrum: UnsafeMutableBufferPointer<Double>, f0: Double) {
        precondition(spectrum.count >= binCount && f0 >= 0 && f0 <= highestF0)
        let upperLimit = 2 + Int(f0 * Double(fftSize) / Double(sampleRate))
        let replicaCount = upperLimit - 1
        let binWidth = Double(sampleRate) / Double(fftSize)
        for bin in 0..<replicaCount {
            lowerEdges[bin] = Double(bin) * Double(sampleRate) / Double(fftSize)
        }
        Matlab.interp1Q(
            origin: f0, step: -binWidth,
            y: UnsafeBufferPointer(rebasing: spectrum[0...upperLimit]),
            at: UnsafeBufferPointer(rebasing: lowerEdges[0..<replicaCount]),
            into: UnsafeMutableBufferPointer(rebasing: replica[0..<replicaCount]))
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

        let binWidth = Double(sampleRate) / Double(fftSize)
        for bin in 0...half {
            lowerEdges[bin] = Double(bin) / Double(fftSize) * Double(sampleRate) - width / 2.0
            upperEdges[bin] = lowerEdges[bin] + width
        }
        let origin = -(Double(boundary) - 0.5) * Double(sampleRate) / Double(fftSize)
        let levels = UnsafeBufferPointer(rebasing: integral[0..<integralCount])
        let bins = 0..<binCount
        Matlab.interp1Q(
            origin: origin, step: binWidth, y: levels,
            at: UnsafeBufferPointer(rebasing: lowerEdges[bins]), into: UnsafeMutableBufferPointer(rebasing: lowerLevels[bins]))
        Matlab.interp1Q(
            origin: origin, step: binWidth, y: levels,
            at: UnsafeBufferPointer(rebasing: upperEdges[bins]), into: UnsafeMutableBufferPointer(rebasing: upperLevels[bins]))
        for bin in bins {
            output[bin] = (upperLevels[bin] - lowerLevels[bin]) / width
        }
    }

    /// In-place form of `smooth(_:width:into:)`.
    func smooth(_ spectrum: UnsafeMutableBufferPointer<Double>, width: Double) {
        smooth(UnsafeBufferPointer(spectrum), width: width, into: spectrum)
    }

    /// Integral (in power × Hz) of the spectrum extended by `boundary` mirrored bins at each end.
    private func integrateMirrored(_ spectrum: UnsafeBufferPointer<Double>, boundary: Int, count: Int) {
        let half = fftSize / 2
        var running = 0.0
        for index in 0..<count {
            let source: Int
            if index < boundary {
                source = boundary - index
            } else if index < half + boundary {
                source = index - boundary
            } else {
                source = half - (index - (half + boundary))
            }
            running = spectrum[source] * Double(sampleRate) / Double(fftSize) + running
            integral[index] = running
        }
    }
}
