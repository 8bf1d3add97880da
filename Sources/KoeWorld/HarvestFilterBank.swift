import Glibc
import KoeDSP

/// Harvest's band-pass channels and their spectra at the one FFT size the channels are filtered with, block by
/// block, whatever the signal's length. Both depend only on the analysis rate and the channel centres, so one bank
/// serves every estimate a Harvest makes.
final class HarvestFilterBank: Sendable {
    /// One channel: a Nuttall-windowed cosine at the channel's centre, two periods each side.
    struct Filter: Sendable {
        let centre: Double
        let half: Int
        let taps: [Double]

        init(centre: Double, sampleRate: Double) {
            self.centre = centre
            let half = Matlab.round(sampleRate / centre * 2.0)
            let window = Window.nuttall(length: 2 * half + 1)
            self.half = half
            taps = (-half...half).map { i in window[i + half] * cos(2 * Double.pi * centre * Double(i) / sampleRate) }
        }
    }

    /// Centres ascending, so the first filter is the longest.
    let filters: [Filter]
    /// Every filter's spectrum at the block FFT size: about eight times the longest filter (4096 points at WORLD's
    /// default floor), where the cost a sample of overlap-save is least and a block's spectra stay in cache.
    let spectra: FilterSpectra

    init(centres: [Double], sampleRate: Double) {
        filters = centres.map { Filter(centre: $0, sampleRate: sampleRate) }
        spectra = FilterSpectra(filters: filters, fftSize: Matlab.suitableFFTSize(8 * filters[0].taps.count))
    }
}

/// The spectra of a bank's filters at one FFT size, channel after channel; never changed once made.
final class FilterSpectra: @unchecked Sendable {
    let fftSize: Int
    private let bins: UnsafeMutableBufferPointer<Complex>
    private var binsPerChannel: Int { fftSize / 2 + 1 }

    init(filters: [HarvestFilterBank.Filter], fftSize: Int) {
        self.fftSize = fftSize
        bins = .allocate(capacity: filters.count * (fftSize / 2 + 1))
        let fft = ForwardRealFFT(size: fftSize)
        for (channel, filter) in filters.enumerated() {
            for i in 0..<fftSize {
                fft.waveform[i] = i < filter.taps.count ? filter.taps[i] : 0
            }
            fft.execute()
            _ = UnsafeMutableBufferPointer(rebasing: bins[(channel * binsPerChannel)..<((channel + 1) * binsPerChannel)])
                .initialize(fromContentsOf: fft.spectrum)
        }
    }

    deinit {
        bins.deallocate()
    }

    func spectrum(channel: Int) -> UnsafeBufferPointer<Complex> {
        UnsafeBufferPointer(rebasing: bins[(channel * binsPerChannel)..<((channel + 1) * binsPerChannel)])
    }
}
