import Glibc
import KoeDSP
import Synchronization

/// Harvest's band-pass channels and their spectra. Both depend only on the analysis rate and the channel
/// centres, so one bank serves every estimate a Harvest makes: a streamed analysis runs Harvest block after
/// block at one FFT size, and would otherwise transform the same filters again for every block.
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

    /// Largest set of spectra kept, in bytes: about 20 MB hold 151 channels (WORLD's default F0 range) at
    /// the 16384 points a 1 s block with its context needs. Longer signals transform each filter when used.
    static let spectraBudget = 32 << 20

    let filters: [Filter]
    private let kept = Mutex<FilterSpectra?>(nil)

    init(centres: [Double], sampleRate: Double) {
        filters = centres.map { Filter(centre: $0, sampleRate: sampleRate) }
    }

    /// Every filter's spectrum at `fftSize` points, made on first use and kept while that size is asked
    /// for; nil when they would not fit in `spectraBudget`.
    func spectra(fftSize: Int) -> FilterSpectra? {
        guard filters.count * (fftSize / 2 + 1) * MemoryLayout<Complex>.stride <= Self.spectraBudget else { return nil }
        return kept.withLock { kept in
            if let kept, kept.fftSize == fftSize { return kept }
            let made = FilterSpectra(filters: filters, fftSize: fftSize)
            kept = made
            return made
        }
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
        let transform = FilterTransform(fftSize: fftSize)
        for (channel, filter) in filters.enumerated() {
            let spectrum = transform.spectrum(of: filter)
            _ = UnsafeMutableBufferPointer(rebasing: bins[(channel * spectrum.count)..<((channel + 1) * spectrum.count)])
                .initialize(fromContentsOf: spectrum)
        }
    }

    deinit {
        bins.deallocate()
    }

    func spectrum(channel: Int) -> UnsafeBufferPointer<Complex> {
        UnsafeBufferPointer(rebasing: bins[(channel * binsPerChannel)..<((channel + 1) * binsPerChannel)])
    }
}

/// A filter's spectrum at one FFT size: its taps, zero-padded.
final class FilterTransform {
    private let fft: ForwardRealFFT
    /// Length of the filter last written; the rest of the input is zero.
    private var taps = 0

    init(fftSize: Int) {
        fft = ForwardRealFFT(size: fftSize)
    }

    /// Valid until the next call.
    func spectrum(of filter: HarvestFilterBank.Filter) -> UnsafeBufferPointer<Complex> {
        for i in 0..<filter.taps.count {
            fft.waveform[i] = filter.taps[i]
        }
        // The forward transform keeps its input, so only the taps of a longer previous filter need clearing.
        for i in filter.taps.count..<max(filter.taps.count, taps) {
            fft.waveform[i] = 0
        }
        taps = filter.taps.count
        fft.execute()
        return UnsafeBufferPointer(fft.spectrum)
    }
}
