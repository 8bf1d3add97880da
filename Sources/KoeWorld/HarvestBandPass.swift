import KoeDSP

extension Harvest {
    /// WORLD's band-pass of the whole decimated signal through one channel, computed by overlap-save in blocks of
    /// the bank's FFT size, so its cost grows linearly with the signal and the filters' spectra are made once for
    /// every length. The signal's block spectra are made once and shared by all channels: they take about as much
    /// memory as the signal itself (bins for a block's samples plus its overlap), far less than the frames x
    /// channels candidates Harvest keeps anyway, and recomputing them per channel would double the FFT work.
    /// Read-only once made, so threads filter at once, each with an inverse transform of its own.
    final class BandPass: @unchecked Sendable {
        let filters: [HarvestFilterBank.Filter]
        private let filterSpectra: FilterSpectra
        private let quirk: NyquistQuirk
        private let length: Int
        /// New output samples a block gives: the FFT size less the longest filter's overlap.
        private let hop: Int
        /// Samples before a block's first new output that its input includes.
        private let overlap: Int
        private let bins: Int
        /// Block b's spectrum holds the signal from index `b * hop - overlap`, zero outside the signal.
        private let blockSpectra: UnsafeMutableBufferPointer<Complex>
        /// The size of the inverse transform `filter` takes.
        let fftSize: Int

        init(signal: DecimatedSignal, filterBank: HarvestFilterBank) {
            filters = filterBank.filters
            filterSpectra = filterBank.spectra
            fftSize = filterSpectra.fftSize
            length = signal.samples.count
            overlap = filters[0].taps.count - 1
            hop = fftSize - overlap
            bins = fftSize / 2 + 1
            quirk = NyquistQuirk(
                samples: signal.samples, filters: filters, sampleRate: signal.sampleRate, outputScale: Double(fftSize),
                longestSpan: hop)
            // The last output any channel needs is at WORLD's convolution index `half + length`.
            let blockCount = (filters[0].half + length) / hop + 1
            blockSpectra = .allocate(capacity: blockCount * bins)
            let forward = ForwardRealFFT(size: fftSize)
            signal.samples.withUnsafeBufferPointer { samples in
                for block in 0..<blockCount {
                    let start = block * hop - overlap
                    for i in 0..<fftSize {
                        let index = start + i
                        forward.waveform[i] = index >= 0 && index < length ? samples[index] : 0
                    }
                    forward.execute()
                    _ = UnsafeMutableBufferPointer(rebasing: blockSpectra[(block * bins)..<((block + 1) * bins)])
                        .initialize(fromContentsOf: forward.spectrum)
                }
            }
        }

        deinit {
            blockSpectra.deallocate()
        }

        /// The signal through `channel`'s filter into `output` (`length` samples), delayed as WORLD compensates:
        /// output i is the convolution at index i + half + 1. Scaled by the FFT size, as an unnormalised inverse
        /// FFT leaves it; only the signal's crossings are read.
        func filter(channel: Int, into output: UnsafeMutableBufferPointer<Double>, inverseFFT: InverseRealFFT) {
            let delay = filters[channel].half + 1
            let filter = filterSpectra.spectrum(channel: channel)
            let product = inverseFFT.spectrum
            var index = delay
            while index < delay + length {
                let block = index / hop
                let signal = UnsafeBufferPointer(rebasing: blockSpectra[(block * bins)..<((block + 1) * bins)])
                for k in 0..<bins {
                    product[k] = signal[k] * filter[k]
                }
                inverseFFT.execute()
                let end = min((block + 1) * hop, delay + length)
                let firstOutput = index - delay
                let outputs = UnsafeMutableBufferPointer(rebasing: output[firstOutput..<(end - delay)])
                let waveformStart = overlap + index - block * hop
                for i in 0..<outputs.count {
                    outputs[i] = inverseFFT.waveform[waveformStart + i]
                }
                quirk.apply(channel: channel, first: index, to: outputs)
                index = end
            }
        }
    }
}
