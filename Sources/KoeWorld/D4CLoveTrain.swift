import KoeDSP

/// The love-train periodicity score: the share of 100–7900 Hz power that lies below 4 kHz in a
/// 3-period Blackman window. Voiced speech concentrates there; noise does not. Below 15.8 kHz the band is
/// cut at Nyquist: no power lies past it (WORLD sums memory it never wrote there; see `bounds`).
final class LoveTrain {
    private let sampleRate: Int
    let fftSize: Int
    private let forward: ForwardRealFFT
    private let window: D4CWindow
    private let lowBound: Int
    private let splitBound: Int
    private let highBound: Int
    /// Samples of `forward.waveform` written by the last frame; the rest are zero.
    private var writtenLength = 0

    /// The lowest F0 the window is sized for; lower F0 is analysed as this.
    static let f0Floor = 40.0
    static let periods = 3.0

    init(sampleRate: Int) {
        self.sampleRate = sampleRate
        fftSize = LoveTrain.fftSize(sampleRate: sampleRate)
        forward = ForwardRealFFT(size: fftSize)
        window = D4CWindow(capacity: fftSize)
        (lowBound, splitBound, highBound) = LoveTrain.bounds(sampleRate: sampleRate, fftSize: fftSize)
    }

    private static func fftSize(sampleRate: Int) -> Int {
        fftSizeHolding(periods: periods, of: f0Floor, sampleRate: sampleRate)
    }

    /// Bins at or above 100 Hz, 4 kHz and 7.9 kHz, the last two at most the Nyquist bin. Past Nyquist WORLD
    /// sums the rest of a buffer it never wrote, whose contents depend on what the heap held before: pyworld
    /// then calls any number of frames unvoiced, from call to call. With that memory zeroed, WORLD's sums are
    /// these, and its score is the share of power up to Nyquist that lies below 4 kHz (1 at 8 kHz).
    private static func bounds(sampleRate: Int, fftSize: Int) -> (low: Int, split: Int, high: Int) {
        func bin(_ frequency: Double) -> Int {
            min(Int((frequency * Double(fftSize) / Double(sampleRate)).rounded(.up)), fftSize / 2)
        }
        return (bin(100), bin(4000), bin(7900))
    }

    /// The score of one voiced frame, `f0` at least `f0Floor`.
    func score(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream) -> Double {
        let waveform = forward.waveform
        let length = window.apply(
            to: x, sampleRate: sampleRate, f0: f0, time: time, shape: .blackman, periods: LoveTrain.periods,
            noise: noise, into: waveform)
        for i in length..<max(length, writtenLength) {
            waveform[i] = 0
        }
        writtenLength = length
        forward.execute()
        let spectrum = forward.spectrum
        var belowSplit = 0.0
        var total = 0.0
        for bin in (lowBound + 1)...highBound {
            total += spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
            if bin == splitBound { belowSplit = total }
        }
        return belowSplit / total
    }
}
