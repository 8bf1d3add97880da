import Foundation

/// A look-ahead peak limiter: keeps every sample within ±`ceiling`, so that WORLD's resynthesis, which can peak
/// above its input, never clips. A signal that stays within the ceiling passes bit for bit (gain exactly 1),
/// only delayed by the look-ahead, which the stage trims from its start like any other latency.
///
/// For each sample the gain it needs is `ceiling / |x|` (1 when it fits). The gain applied is the smallest need
/// of the look-ahead window, held there at once and released towards 1 with the `release` time constant,
/// then averaged over the window: it ramps down over the look-ahead to meet a peak exactly as the peak is
/// played, and never steps. The last guard against rounding is a clamp to the ceiling.
package final class Limiter: Stage {
    package struct Options: Sendable, Equatable {
        /// How far ahead the limiter sees, in seconds: the time its gain takes to come down to a peak, and its
        /// latency (default 5 ms).
        package var lookAhead = 0.005
        /// Time constant of the gain's return to 1 once peaks have passed, in seconds (default 100 ms): long
        /// enough that the gain on a loud low voice does not ripple with its waveform.
        package var release = 0.1

        package init() {}
    }

    /// The largest magnitude a sample leaves the stage with.
    package let ceiling: Double
    /// The look-ahead in samples.
    package let latency: Int
    /// Off, every sample's need is 1: the gain returns to 1 and the signal passes, still delayed.
    package var isEnabled = true

    /// The window's gains are averaged over `latency + 1` samples: the peak and the look-ahead before it.
    private let window: Int
    private let releaseStep: Double
    /// The last `latency` input samples, oldest at `delayPosition`.
    private var delay: [Double]
    private var delayPosition = 0
    /// The window's smallest need, kept by a queue of rising needs whose front is the smallest (Lemire's
    /// sliding minimum): each sample enters and leaves it once.
    private var queue: MinimumQueue
    /// The released gain of the last sample.
    private var released = 1.0
    /// 1 - released gain, for each sample of the window, and their sum; the count of non-zero ones lets the sum
    /// return to exactly 0, so the gain returns to exactly 1.
    private var shortfalls: [Double]
    private var shortfallSum = 0.0
    private var nonZeroShortfalls = 0
    private var received = 0

    /// A released gain this close to 1 is 1: the release would otherwise approach it without ever landing. At the
    /// default release it lands 2 s after a peak.
    private static let landing = 1e-9

    /// `ceiling` must be positive.
    package init(sampleRate: Int, ceiling: Double, options: Options = Options()) throws(StageError) {
        guard ceiling.isFinite && ceiling > 0 else { throw StageError("the limiter's ceiling must be positive (got \(ceiling))") }
        guard options.lookAhead.isFinite && options.lookAhead >= 0, options.release.isFinite && options.release > 0 else {
            throw StageError("the limiter's look-ahead and release must be positive times")
        }
        self.ceiling = ceiling
        latency = Int((options.lookAhead * Double(sampleRate)).rounded())
        window = latency + 1
        releaseStep = 1 - exp(-1 / (options.release * Double(sampleRate)))
        delay = [Double](repeating: 0, count: latency)
        queue = MinimumQueue(capacity: window)
        shortfalls = [Double](repeating: 0, count: window)
    }

    package func process(_ input: [Double], isFinal: Bool, into output: inout [Double]) {
        for sample in input {
            push(sample, into: &output)
        }
        if isFinal {
            // Silence after the end needs no gain; it carries the last `latency` samples out.
            for _ in 0..<latency {
                push(0, into: &output)
            }
        }
    }

    private func push(_ sample: Double, into output: inout [Double]) {
        let gain = gain(after: sample)
        var leaving = sample
        if latency > 0 {
            swap(&leaving, &delay[delayPosition])
            delayPosition = delayPosition + 1 == latency ? 0 : delayPosition + 1
        }
        if received >= latency {
            let limited = leaving * gain
            output.append(isEnabled && abs(limited) > ceiling ? (limited < 0 ? -ceiling : ceiling) : limited)
        }
        received += 1
    }

    /// The gain for the sample leaving now, `latency` samples before `sample`.
    private func gain(after sample: Double) -> Double {
        let magnitude = abs(sample)
        let need = isEnabled && magnitude > ceiling ? ceiling / magnitude : 1
        let held = queue.push(need, at: received)
        if held < released {
            released = held
        } else {
            released += (held - released) * releaseStep
            if held == 1 && 1 - released < Self.landing { released = 1 }
        }
        let slot = received % window
        let shortfall = 1 - released
        if shortfalls[slot] != 0 { nonZeroShortfalls -= 1 }
        if shortfall != 0 { nonZeroShortfalls += 1 }
        shortfallSum += shortfall - shortfalls[slot]
        shortfalls[slot] = shortfall
        if nonZeroShortfalls == 0 { shortfallSum = 0 }
        return 1 - shortfallSum / Double(window)
    }
}

/// The smallest value among the last `capacity` pushed, in a ring of fixed size: values that can no longer be
/// the smallest (an older value at least as large as a newer one) are dropped as they arrive.
private struct MinimumQueue {
    private var values: [Double]
    private var positions: [Int]
    private var front = 0
    private var count = 0

    init(capacity: Int) {
        values = [Double](repeating: 0, count: capacity)
        positions = [Int](repeating: 0, count: capacity)
    }

    /// Adds `value`, the `position`-th pushed, and returns the smallest of the last `capacity`.
    mutating func push(_ value: Double, at position: Int) -> Double {
        let capacity = values.count
        while count > 0, values[(front + count - 1) % capacity] >= value {
            count -= 1
        }
        if count > 0, positions[front] <= position - capacity {
            front = (front + 1) % capacity
            count -= 1
        }
        let back = (front + count) % capacity
        values[back] = value
        positions[back] = position
        count += 1
        return values[front]
    }
}
