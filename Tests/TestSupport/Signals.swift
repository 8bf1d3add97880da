import Foundation

/// Generated test signals with known truth.
public enum Signals {
    /// A sine of `frequency` Hz, `duration` seconds long.
    public static func sine(frequency: Double, sampleRate: Int, duration: Double, amplitude: Double = 0.5) -> [Double] {
        let count = Int(duration * Double(sampleRate))
        return (0..<count).map { amplitude * sin(2 * .pi * frequency * Double($0) / Double(sampleRate)) }
    }

    /// An impulse train at `f0` Hz (one unit impulse a period), `duration` seconds long.
    public static func pulseTrain(f0: Double, sampleRate: Int, duration: Double) -> [Double] {
        let count = Int(duration * Double(sampleRate))
        var signal = [Double](repeating: 0, count: count)
        var position = 0.0
        while Int(position) < count {
            signal[Int(position)] = 1
            position += Double(sampleRate) / f0
        }
        return signal
    }

    /// Speech-like test input, 1 s at 16 kHz: a vowel at 120 Hz, 0.1 s of noise, a vowel at 180 Hz with other
    /// formants, so a stream has voicing, a change of F0 and an unvoiced stretch.
    public static func speechLike(sampleRate: Int = 16000) -> [Double] {
        vowel(f0: 120, sampleRate: sampleRate, duration: 0.5)
            + whiteNoise(count: sampleRate / 10, amplitude: 0.05)
            + vowel(f0: 180, sampleRate: sampleRate, duration: 0.4, formants: [500, 1500, 2500])
    }

    /// A pulse train at `f0` through a cascade of two-pole resonators at `formants` (Hz, bandwidth 80 Hz):
    /// a steady synthetic vowel, normalised to a peak of 0.5.
    public static func vowel(f0: Double, sampleRate: Int, duration: Double, formants: [Double] = [700, 1200, 2600]) -> [Double] {
        var signal = pulseTrain(f0: f0, sampleRate: sampleRate, duration: duration)
        for formant in formants {
            signal = resonate(signal, frequency: formant, bandwidth: 80, sampleRate: sampleRate)
        }
        let peak = signal.map(abs).max() ?? 1
        return signal.map { 0.5 * $0 / peak }
    }

    /// Uniform white noise in [-amplitude, amplitude], reproducible from `seed`.
    public static func whiteNoise(count: Int, amplitude: Double = 0.5, seed: UInt64 = 1) -> [Double] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Double(state >> 11) / Double(1 << 53)
            return amplitude * (2 * unit - 1)
        }
    }

    private static func resonate(_ x: [Double], frequency: Double, bandwidth: Double, sampleRate: Int) -> [Double] {
        let radius = exp(-Double.pi * bandwidth / Double(sampleRate))
        let a1 = 2 * radius * cos(2 * .pi * frequency / Double(sampleRate))
        let a2 = -radius * radius
        var y1 = 0.0, y2 = 0.0
        return x.map { sample in
            let y = sample + a1 * y1 + a2 * y2
            y2 = y1
            y1 = y
            return y
        }
    }

    /// Signals that trip careless analysis: silence, DC, white noise and a 150 Hz sine, each `count` samples long.
    public static func edgeCases(count: Int, sampleRate: Int) -> [[Double]] {
        [
            [Double](repeating: 0, count: count),
            [Double](repeating: -0.7, count: count),
            whiteNoise(count: count),
            sine(frequency: 150, sampleRate: sampleRate, duration: Double(count) / Double(sampleRate)),
        ]
    }
}

/// The largest difference between two signals, or infinity when their lengths differ: a short message where
/// the arrays themselves would fill the screen.
public func largestDifference(_ first: [Double], _ second: [Double]) -> Double {
    guard first.count == second.count else { return .infinity }
    return zip(first, second).map { abs($0 - $1) }.max() ?? 0
}

/// `signal` cut into consecutive pieces of `length` values, the last one shorter if need be: a stream as a test
/// feeds it, chunk by chunk.
public func pieces(of signal: [Double], length: Int) -> [[Double]] {
    stride(from: 0, to: signal.count, by: length).map { Array(signal[$0..<min(signal.count, $0 + length)]) }
}
