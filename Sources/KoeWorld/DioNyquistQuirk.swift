import Glibc
import KoeDSP

extension Dio {
    /// WORLD filters each band by multiplying whole-signal spectra, and writes each product to the mirrored bin too;
    /// for the top two bins that lands inside the half spectrum, so the Nyquist bin becomes the signal's Nyquist
    /// value times the product one bin below, and that bin takes the same value. The band filters are small there
    /// at full rate but not after decimation, and on signals without events (DC, silence) that difference alone
    /// decides the crossings. This adds it to the overlap-save result: the inverse transform of the two changed bins,
    /// `(-1)^n (a + 2 Re(b e^(-2 pi i n / N)))` at WORLD's convolution index n, for WORLD's FFT size N.
    struct NyquistQuirk {
        /// WORLD's FFT size for the signal.
        let fftSize: Int
        /// Per band, the changes at Nyquist (its real part, which is all an inverse real FFT reads) and one bin below.
        private let nyquistChanges: [Double]
        private let belowChanges: [Complex]
        /// Per band, WORLD's index of filtered sample 0 in its convolution (half the Nuttall window).
        private let delays: [Int]
        private let rotation: Rotation

        init(samples: [Double], ladder: Dio.Ladder) {
            let length = samples.count
            let widestBandTaps = 4 * Int(1.0 + ladder.rate / ladder.boundaries[0] / 2.0)
            fftSize = Matlab.suitableFFTSize(length + ladder.lowCutHalfLength * 2 + 1 + widestBandTaps)
            rotation = Rotation(period: fftSize)
            let lowCut = ladder.lowCutTaps()
            let lowCutCentre = ladder.lowCutHalfLength
            let signalNyquist = Self.transform(samples, offset: 0, atNyquistOf: fftSize, rotation: rotation)
            let lowCutNyquist = Self.transform(lowCut, offset: -lowCutCentre, atNyquistOf: fftSize, rotation: rotation)
            let lowCutNyquistValue = signalNyquist.nyquist.real * lowCutNyquist.nyquist.real
            let lowCutBelow = signalNyquist.below * lowCutNyquist.below
            var nyquistChanges: [Double] = []
            var belowChanges: [Complex] = []
            for halfAverageLength in ladder.halfAverageLengths {
                let window = Self.transform(
                    Window.nuttall(length: 4 * halfAverageLength), offset: 0, atNyquistOf: fftSize, rotation: rotation)
                let trueBelow = lowCutBelow * window.below
                let trueNyquist = lowCutNyquistValue * window.nyquist.real
                let written = Complex(lowCutNyquistValue * trueBelow.real, lowCutNyquistValue * trueBelow.imag)
                nyquistChanges.append(written.real - trueNyquist)
                belowChanges.append(Complex(written.real - trueBelow.real, written.imag - trueBelow.imag))
            }
            self.nyquistChanges = nyquistChanges
            self.belowChanges = belowChanges
            delays = ladder.halfAverageLengths.map { 2 * $0 }
        }

        /// The real DFT of `values` (value k at index k + offset) at bins N/2 and N/2 - 1 of an N-point transform.
        private static func transform(
            _ values: [Double], offset: Int, atNyquistOf size: Int, rotation: Rotation
        ) -> (nyquist: Complex, below: Complex) {
            var nyquist = 0.0
            var below = Complex.zero
            for (k, value) in values.enumerated() {
                let index = k + offset
                let sign = index & 1 == 0 ? 1.0 : -1.0
                // e^(-2 pi i (N/2 - 1) n / N) = (-1)^n e^(2 pi i n / N)
                let turn = rotation.unit(at: index)
                nyquist += sign * value
                below.real += sign * value * turn.real
                below.imag += sign * value * turn.imag
            }
            return (Complex(nyquist, 0), below)
        }

        /// Adds the changed bins' contribution, scaled as the overlap-save output is, to `values`, filtered samples
        /// of `band` from index `first` on. The rotation advances by one step a sample: over a block its rounding
        /// drifts by far less than the contribution's own size.
        func apply(band: Int, first: Int, to values: UnsafeMutableBufferPointer<Double>) {
            let a = nyquistChanges[band]
            let b = belowChanges[band]
            let scale = 1.0 / Double(fftSize)
            let n = first + delays[band]
            var sign = n & 1 == 0 ? scale : -scale
            var turn = rotation.unit(at: n)
            let step = rotation.unit(at: 1)
            for i in values.indices {
                // b e^(-2 pi i n / N) takes the conjugate turn.
                let real = b.real * turn.real + b.imag * turn.imag
                values[i] += sign * (a + 2 * real)
                sign = -sign
                turn = turn * step
            }
        }
    }
}

/// e^(2 pi i n / period) for any integer n, from two small tables: accurate to rounding and cheap per call.
private struct Rotation {
    let period: Int
    private let coarse: [Complex]
    private let fine: [Complex]
    private let fineCount: Int

    init(period: Int) {
        self.period = period
        let fineCount = max(1, Int(Double(period).squareRoot()))
        self.fineCount = fineCount
        fine = (0..<fineCount).map { Rotation.exact($0, period: period) }
        coarse = (0...(period / fineCount)).map { Rotation.exact($0 * fineCount, period: period) }
    }

    private static func exact(_ n: Int, period: Int) -> Complex {
        let angle = 2.0 * Double.pi * Double(n) / Double(period)
        return Complex(cos(angle), sin(angle))
    }

    func unit(at n: Int) -> Complex {
        let wrapped = ((n % period) + period) % period
        let high = coarse[wrapped / fineCount]
        let low = fine[wrapped % fineCount]
        return high * low
    }
}
