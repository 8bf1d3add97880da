import Glibc

/// A gain in dB, as sox's `gain` effect applies it. No delay. A new gain set while audio plays is reached
/// along a straight line over `glideSamples`, so it never clicks.
package final class Gain: InPlaceStage {
    private(set) var decibels: Double
    /// The linear factor every sample is multiplied by, once a glide is over.
    package private(set) var factor: Double
    private let glideSamples: Int
    private var current: Double
    private var step = 0.0
    private var glideSamplesLeft = 0

    package init(decibels: Double, glideSamples: Int = 1) throws(KoeError) {
        try Self.requireFinite(decibels)
        self.decibels = decibels
        factor = Self.factor(decibels)
        current = factor
        self.glideSamples = max(1, glideSamples)
    }

    /// The gain stage, or nil at 0 dB, where it would change nothing.
    package static func make(decibels: Double) throws(KoeError) -> Gain? {
        decibels == 0 ? nil : try Gain(decibels: decibels)
    }

    /// Takes a new gain from the next sample on, gliding there or at once.
    package func set(decibels: Double, gliding: Bool = true) throws(KoeError) {
        try Self.requireFinite(decibels)
        self.decibels = decibels
        factor = Self.factor(decibels)
        guard gliding else {
            current = factor
            glideSamplesLeft = 0
            return
        }
        step = (factor - current) / Double(glideSamples)
        glideSamplesLeft = glideSamples
    }

    /// The gain reached at once: a glide under way is over.
    package func reset() {
        current = factor
        glideSamplesLeft = 0
    }

    package func apply(_ samples: UnsafeMutableBufferPointer<Double>) {
        var start = samples.startIndex
        while glideSamplesLeft > 0, start < samples.endIndex {
            glideSamplesLeft -= 1
            current = glideSamplesLeft == 0 ? factor : current + step
            samples[start] *= current
            start += 1
        }
        for index in start..<samples.endIndex {
            samples[index] *= factor
        }
    }

    private static func factor(_ decibels: Double) -> Double {
        pow(10, decibels / 20)
    }

    private static func requireFinite(_ decibels: Double) throws(KoeError) {
        guard decibels.isFinite else { throw KoeError.invalidArgument("gain \(decibels) dB is not a finite number") }
    }
}
