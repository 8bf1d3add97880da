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
        /// (-1)^j, and (-1)^j times the real and imaginary parts of e^(-2 pi i j / N), for j below the longest span
        /// `apply` is given: its tone over any span is a combination of these three rows.
        private let alternation: [Double]
        private let alternatingCosines: [Double]
        private let alternatingSines: [Double]

        /// `outputScale`: the block-wise filter's output where the convolution is 1 (WORLD's is N, its inverse FFT
        /// being unnormalised).
        init(
            samples: [Double], filters: [HarvestFilterBank.Filter], sampleRate: Double, outputScale: Double, longestSpan: Int
        ) {
            let longestFilter = 2 * Int(2.0 * sampleRate / filters[0].centre)
            let fftSize = Matlab.suitableFFTSize(samples.count + 5 + longestFilter)
            let rotation = Rotation(period: fftSize)
            self.rotation = rotation
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
            let alternation = (0..<longestSpan).map { $0 & 1 == 0 ? 1.0 : -1.0 }
            self.alternation = alternation
            alternatingCosines = (0..<longestSpan).map { alternation[$0] * rotation.unit(at: $0).real }
            alternatingSines = (0..<longestSpan).map { alternation[$0] * rotation.unit(at: $0).imag }
        }

        /// Adds the changed bins' contribution to `values`, WORLD's convolution of `channel` from index `first`
        /// on, at most `longestSpan` of them. With n = first + j, Re(b e^(-2 pi i n / N)) is Re(c e^(-2 pi i j / N))
        /// for c = b e^(-2 pi i first / N), so each sample is a fixed combination of the rows, with no chain from
        /// one sample to the next.
        func apply(channel: Int, first: Int, to values: UnsafeMutableBufferPointer<Double>) {
            precondition(values.count <= alternation.count, "span longer than the quirk's rows")
            let sign = first & 1 == 0 ? 1.0 : -1.0
            let start = rotation.unit(at: first)
            let b = belowChanges[channel]
            // c = b times the conjugate of e^(2 pi i first / N), doubled and signed with (-1)^first.
            let real = 2 * sign * (b.real * start.real + b.imag * start.imag)
            let imag = 2 * sign * (b.imag * start.real - b.real * start.imag)
            let a = sign * nyquistChanges[channel]
            alternation.withUnsafeBufferPointer { alternation in
                alternatingCosines.withUnsafeBufferPointer { cosines in
                    alternatingSines.withUnsafeBufferPointer { sines in
                        // Re(c e^(-i x)) = c.real cos x + c.imag sin x.
                        for j in 0..<values.count {
                            values[j] += a * alternation[j] + real * cosines[j] + imag * sines[j]
                        }
                    }
                }
            }
        }
    }
}
