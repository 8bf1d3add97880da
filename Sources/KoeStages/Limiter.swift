import Glibc

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

    /// Moved into a local for each block: the loop over its samples then touches no class storage, each access
    /// to which Swift checks for exclusivity at run time.
    private var core: Core

    /// `ceiling` must be positive.
    package init(sampleRate: Int, ceiling: Double, options: Options = Options()) throws(KoeError) {
        guard ceiling.isFinite && ceiling > 0 else { throw KoeError.invalidArgument("the limiter's ceiling must be positive (got \(ceiling))") }
        guard options.lookAhead.isFinite && options.lookAhead >= 0, options.release.isFinite && options.release > 0 else {
            throw KoeError.invalidArgument("the limiter's look-ahead and release must be positive times")
        }
        self.ceiling = ceiling
        latency = Int((options.lookAhead * Double(sampleRate)).rounded())
        core = Core(ceiling: ceiling, latency: latency, releaseStep: 1 - exp(-1 / (options.release * Double(sampleRate))))
    }

    deinit {
        core.deallocate()
    }

    package func process(_ input: [Double], into output: inout [Double]) {
        var core = core
        defer { self.core = core }
        let limits = isEnabled
        input.withUnsafeBufferPointer { input in
            core.push(count: input.count, limits: limits, into: &output) { input[$0] }
        }
    }

    package func finish(into output: inout [Double]) {
        var core = core
        defer { self.core = core }
        // Silence after the end needs no gain; it carries the last `latency` samples out.
        core.push(count: latency, limits: isEnabled, into: &output) { _ in 0 }
    }

    /// An empty look-ahead and a gain of 1, as `init` leaves them; on or off stays as it is.
    package func reset() {
        let fresh = Core(ceiling: core.ceiling, latency: core.latency, releaseStep: core.releaseStep)
        core.deallocate()
        core = fresh
    }
}

/// The limiter's state and rings. A plain value over memory the `Limiter` owns, so copying it in and out of the
/// stage for a block costs nothing.
private struct Core {
    let ceiling: Double
    let latency: Int
    /// The window's gains are averaged over `latency + 1` samples: the peak and the look-ahead before it.
    let window: Int
    let releaseStep: Double
    /// The last `latency` input samples, oldest at `delayPosition`.
    let delay: UnsafeMutablePointer<Double>
    var delayPosition = 0
    /// The window's smallest need, kept by a queue of rising needs whose front is the smallest (Lemire's
    /// sliding minimum): each sample enters and leaves it once.
    var queue: MinimumQueue
    /// The released gain of the last sample.
    var released = 1.0
    /// 1 - released gain, for each sample of the window (the current one at `shortfallSlot`), and their sum; the
    /// count of non-zero ones lets the sum return to exactly 0, so the gain returns to exactly 1.
    let shortfalls: UnsafeMutablePointer<Double>
    var shortfallSlot = 0
    var shortfallSum = 0.0
    var nonZeroShortfalls = 0
    var received = 0

    /// A released gain this close to 1 is 1: the release would otherwise approach it without ever landing. At the
    /// default release it lands 2 s after a peak.
    static let landing = 1e-9

    init(ceiling: Double, latency: Int, releaseStep: Double) {
        self.ceiling = ceiling
        self.latency = latency
        window = latency + 1
        self.releaseStep = releaseStep
        delay = .allocate(capacity: latency)
        delay.initialize(repeating: 0, count: latency)
        queue = MinimumQueue(capacity: window)
        shortfalls = .allocate(capacity: window)
        shortfalls.initialize(repeating: 0, count: window)
    }

    func deallocate() {
        delay.deallocate()
        shortfalls.deallocate()
        queue.deallocate()
    }

    /// True while the gain is exactly 1 and stays so for every sample within the ceiling: the window's only need
    /// is 1, nothing is being released and no shortfall is left in the window.
    var isQuiet: Bool {
        queue.holdsOnlyOne && released == 1 && nonZeroShortfalls == 0
    }

    /// Pushes `count` samples, the `index`-th being `sample(index)`, and appends the limited samples leaving.
    mutating func push(count: Int, limits: Bool, into output: inout [Double], sample: (Int) -> Double) {
        // The stream's first `latency` samples only fill the look-ahead.
        let filling = min(count, max(0, latency - received))
        for index in 0..<filling {
            _ = push(sample(index), limits: limits)
        }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: count - filling))
        output.withUnsafeMutableBufferPointer { output in
            var written = start
            var index = filling
            while index < count {
                if isQuiet {
                    // Gain exactly 1 (leaving * 1 is leaving): only the delay moves, until a sample needs less.
                    while index < count {
                        let next = sample(index)
                        guard !limits || abs(next) <= ceiling else { break }
                        output[written] = clamped(delayed(next), limits: limits)
                        shortfallSlot = shortfallSlot + 1 == window ? 0 : shortfallSlot + 1
                        received += 1
                        index += 1
                        written += 1
                    }
                    // The queue's need of 1 is now the last sample's, as pushing each would have left it.
                    queue.restampFront(at: received - 1)
                    if index == count { break }
                }
                output[written] = push(sample(index), limits: limits)
                index += 1
                written += 1
            }
        }
    }

    /// Pushes `sample` and returns the limited sample leaving, `latency` samples before it.
    private mutating func push(_ sample: Double, limits: Bool) -> Double {
        let gain = gain(after: sample, limits: limits)
        return clamped(delayed(sample) * gain, limits: limits)
    }

    /// The gain for the sample leaving now, `latency` samples before `sample`.
    private mutating func gain(after sample: Double, limits: Bool) -> Double {
        let magnitude = abs(sample)
        let need = limits && magnitude > ceiling ? ceiling / magnitude : 1
        let held = queue.push(need, at: received)
        if held < released {
            released = held
        } else {
            released += (held - released) * releaseStep
            if held == 1 && 1 - released < Self.landing { released = 1 }
        }
        let shortfall = 1 - released
        let leavingShortfall = shortfalls[shortfallSlot]
        if leavingShortfall != 0 { nonZeroShortfalls -= 1 }
        if shortfall != 0 { nonZeroShortfalls += 1 }
        shortfallSum += shortfall - leavingShortfall
        shortfalls[shortfallSlot] = shortfall
        if nonZeroShortfalls == 0 { shortfallSum = 0 }
        shortfallSlot = shortfallSlot + 1 == window ? 0 : shortfallSlot + 1
        received += 1
        return 1 - shortfallSum / Double(window)
    }

    /// Puts `sample` into the delay and returns the one leaving it.
    private mutating func delayed(_ sample: Double) -> Double {
        guard latency > 0 else { return sample }
        let leaving = delay[delayPosition]
        delay[delayPosition] = sample
        delayPosition = delayPosition + 1 == latency ? 0 : delayPosition + 1
        return leaving
    }

    /// The last guard against rounding.
    private func clamped(_ sample: Double, limits: Bool) -> Double {
        limits && abs(sample) > ceiling ? (sample < 0 ? -ceiling : ceiling) : sample
    }
}

/// The smallest value among the last `capacity` pushed, in a ring of fixed size: values that can no longer be
/// the smallest (an older value at least as large as a newer one) are dropped as they arrive.
private struct MinimumQueue {
    private let capacity: Int
    private let values: UnsafeMutablePointer<Double>
    private let positions: UnsafeMutablePointer<Int>
    private var front = 0
    private var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        values = .allocate(capacity: capacity)
        values.initialize(repeating: 0, count: capacity)
        positions = .allocate(capacity: capacity)
        positions.initialize(repeating: 0, count: capacity)
    }

    func deallocate() {
        values.deallocate()
        positions.deallocate()
    }

    /// True when the queue holds one value, 1.
    var holdsOnlyOne: Bool {
        count == 1 && values[front] == 1
    }

    /// Adds `value`, the `position`-th pushed, and returns the smallest of the last `capacity`.
    mutating func push(_ value: Double, at position: Int) -> Double {
        // front < capacity and count <= capacity: a ring index needs at most one wrap.
        while count > 0, values[wrapped(front + count - 1)] >= value {
            count -= 1
        }
        if count > 0, positions[front] <= position - capacity {
            front = wrapped(front + 1)
            count -= 1
        }
        let back = wrapped(front + count)
        values[back] = value
        positions[back] = position
        count += 1
        return values[front]
    }

    /// Marks the front value as pushed `position`-th.
    func restampFront(at position: Int) {
        positions[front] = position
    }

    private func wrapped(_ index: Int) -> Int {
        index >= capacity ? index - capacity : index
    }
}
