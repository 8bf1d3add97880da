import KoeDSP

/// The love-train periodicity score: the share of 100–7900 Hz power that lies below 4 kHz in a
/// 3-period Blackman window. Voiced speech concentrates there; noise does not.
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

    /// Bins at or above 100 Hz, 4 kHz and 7.9 kHz.
    private static func bounds(sampleRate: Int, fftSize: Int) -> (low: Int, split: Int, high: Int) {
        func bin(_ frequency: Double) -> Int {
            Int((frequency * Double(fftSize) / Double(sampleRate)).rounded(.up))
        }
        return (bin(100), bin(4000), bin(7900))
    }

    /// Below 15.8 kHz the 7900 Hz bound lies past Nyquist. WORLD then sums memory it never wrote, and in
    /// practice (pyworld) scores all frames, or all but the first voiced one, as unvoiced; here all, and no
    /// noise is drawn for them.
    static func bandFits(sampleRate: Int) -> Bool {
        let fftSize = fftSize(sampleRate: sampleRate)
        return bounds(sampleRate: sampleRate, fftSize: fftSize).high <= fftSize / 2
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
