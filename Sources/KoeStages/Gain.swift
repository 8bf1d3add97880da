import Foundation

/// A constant gain in dB, as sox's `gain` effect applies it. No delay.
public final class Gain: Stage {
    public let decibels: Double
    /// The linear factor every sample is multiplied by.
    public let factor: Double

    public init(decibels: Double) throws(StageError) {
        guard decibels.isFinite else { throw StageError("gain \(decibels) dB is not a finite number") }
        self.decibels = decibels
        factor = pow(10, decibels / 20)
    }

    /// The gain stage, or nil at 0 dB, where it would change nothing.
    public static func make(decibels: Double) throws(StageError) -> Gain? {
        decibels == 0 ? nil : try Gain(decibels: decibels)
    }

    public var latency: Int { 0 }

    public func process(_ input: [Double], isFinal: Bool) -> [Double] {
        input.map { $0 * factor }
    }
}
