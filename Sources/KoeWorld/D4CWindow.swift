import KoeDSP

/// One of D4C's F0-adaptive windows, and the signal under it. The buffer remembers the window it holds: a
/// frame's two centroid windows share shape and F0, so the second is not designed again.
final class D4CWindow {
    /// The two shapes D4C uses.
    enum Shape {
        case hann, blackman
    }

    private let values: UnsafeMutableBufferPointer<Double>
    private var holds: (shape: Shape, f0: Double, periods: Double)?

    init(capacity: Int) {
        values = .allocate(capacity: capacity)
    }

    deinit {
        values.deallocate()
    }

    /// Samples in a window `periods` periods of `f0` long, as WORLD rounds it (always odd).
    static func length(sampleRate: Int, f0: Double, periods: Double) -> Int {
        2 * Matlab.round(periods * Double(sampleRate) / f0 / 2.0) + 1
    }

    /// Samples around `time` under the window of `shape`, `periods` periods of `f0` long, plus safeguard noise,
    /// with the window-shaped DC removed; written to the start of `waveform`. Samples outside the signal repeat
    /// its end points. Returns the number of samples written.
    func apply(
        to x: UnsafeBufferPointer<Double>, sampleRate: Int, f0: Double, time: Double,
        shape: Shape, periods: Double, noise: NoiseStream, into waveform: UnsafeMutableBufferPointer<Double>
    ) -> Int {
        let length = Self.length(sampleRate: sampleRate, f0: f0, periods: periods)
        let halfLength = length / 2
        let window = prepare(shape, sampleRate: sampleRate, f0: f0, periods: periods, halfLength: halfLength)
        let safeguard = noise.take(length)
        let origin = Matlab.round(time * Double(sampleRate) + 0.001)
        UnsafeMutableBufferPointer(rebasing: waveform[0..<length]).copyClamped(from: x, first: origin - halfLength)
        for i in 0..<length {
            waveform[i] = waveform[i] * window[i] + safeguard[i] * D4C.safeguardNoise
        }
        let dcLevel = VectorMath.sum(UnsafeBufferPointer(rebasing: waveform[0..<length]))
            / VectorMath.sum(UnsafeBufferPointer(rebasing: window[0..<length]))
        for i in 0..<length {
            waveform[i] -= window[i] * dcLevel
        }
        return length
    }

    /// The window of `shape`, `periods` periods of `f0` long (`2 * halfLength + 1` samples).
    private func prepare(
        _ shape: Shape, sampleRate: Int, f0: Double, periods: Double, halfLength: Int
    ) -> UnsafeMutableBufferPointer<Double> {
        if let holds, holds.shape == shape, holds.f0 == f0, holds.periods == periods {
            return values
        }
        let step = 2.0 * Double.pi * f0 / (periods * Double(sampleRate))
        Self.design(shape, halfLength: halfLength, step: step, into: values)
        holds = (shape, f0, periods)
        return values
    }

    /// A symmetric window whose phase advances by `step` a sample from its centre; each value is computed
    /// once for both halves.
    private static func design(
        _ shape: Shape, halfLength: Int, step: Double, into window: UnsafeMutableBufferPointer<Double>
    ) {
        let rightHalf = UnsafeMutableBufferPointer(rebasing: window[halfLength...(2 * halfLength)])
        Trigonometry.cosines(step: step, into: rightHalf)
        for offset in 0...halfLength {
            let cosine = rightHalf[offset]
            let value: Double
            switch shape {
            case .hann:
                value = 0.5 * cosine + 0.5
            case .blackman:
                value = 0.42 + 0.5 * cosine + 0.08 * (2.0 * cosine * cosine - 1.0)
            }
            rightHalf[offset] = value
            window[halfLength - offset] = value
        }
    }
}
