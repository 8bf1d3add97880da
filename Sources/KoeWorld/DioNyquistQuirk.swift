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
            let signalNyquist = rotation.topBins(of: samples, offset: 0)
            let lowCutNyquist = rotation.topBins(of: lowCut, offset: -lowCutCentre)
            let lowCutNyquistValue = signalNyquist.nyquist.real * lowCutNyquist.nyquist.real
            let lowCutBelow = signalNyquist.below * lowCutNyquist.below
            var nyquistChanges: [Double] = []
            var belowChanges: [Complex] = []
            for halfAverageLength in ladder.halfAverageLengths {
                let window = rotation.topBins(of: Window.nuttall(length: 4 * halfAverageLength), offset: 0)
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
