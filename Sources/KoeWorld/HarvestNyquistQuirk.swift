import KoeDSP

extension Harvest {
    /// WORLD band-passes each channel by multiplying whole-signal spectra at one FFT size N, and writes each
    /// product to the mirrored bin too; for the top two bins that lands inside the half spectrum, so both become
    /// the signal's Nyquist value times the product one bin below. Block-wise filtering gives the true product
    /// everywhere, so this adds the difference: the inverse transform of the two changed bins,
    /// `(-1)^n (a + 2 Re(b e^(-2 pi i n / N)))` at WORLD's convolution index n. On speech it is 1e-12 to 1e-10 of
    /// a channel's peak, but where a channel is silent it alone decides the crossings, as in DIO.
    struct NyquistQuirk {
        /// Per channel, the changes at Nyquist (its real part, which is all an inverse real FFT reads) and one bin
        /// below, scaled as the block-wise output is.
        private let nyquistChanges: [Double]
        private let belowChanges: [Complex]
        private let rotation: Rotation

        /// `outputScale`: the block-wise filter's output where the convolution is 1 (WORLD's is N, its inverse FFT
        /// being unnormalised).
        init(samples: [Double], filters: [HarvestFilterBank.Filter], sampleRate: Double, outputScale: Double) {
            let longestFilter = 2 * Int(2.0 * sampleRate / filters[0].centre)
            let fftSize = Matlab.suitableFFTSize(samples.count + 5 + longestFilter)
            rotation = Rotation(period: fftSize)
            let scale = outputScale / Double(fftSize)
            let signal = rotation.topBins(of: samples, offset: 0)
            var nyquistChanges: [Double] = []
            var belowChanges: [Complex] = []
            nyquistChanges.reserveCapacity(filters.count)
            belowChanges.reserveCapacity(filters.count)
            for filter in filters {
                let taps = rotation.topBins(of: filter.taps, offset: 0)
                let trueBelow = signal.below * taps.below
                let trueNyquist = signal.nyquist.real * taps.nyquist.real
                let written = signal.nyquist * trueBelow
                nyquistChanges.append(scale * (written.real - trueNyquist))
                belowChanges.append(
                    Complex(scale * (written.real - trueBelow.real), scale * (written.imag - trueBelow.imag)))
            }
            self.nyquistChanges = nyquistChanges
            self.belowChanges = belowChanges
        }

        /// Adds the changed bins' contribution to `values`, WORLD's convolution of `channel` from index `first`
        /// on. The rotation advances by one step a sample: over a block its rounding drifts by far less than the
        /// contribution's own size.
        func apply(channel: Int, first: Int, to values: UnsafeMutableBufferPointer<Double>) {
            let a = nyquistChanges[channel]
            let b = belowChanges[channel]
            var sign = first & 1 == 0 ? 1.0 : -1.0
            var turn = rotation.unit(at: first)
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
