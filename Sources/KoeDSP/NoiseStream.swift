/// `Randn`'s sequence handed out in slices of any length. Draws near the seed come from `RandnPrefix`, computed
/// once per process: analyses restart the sequence for every short call, so most of what they take lies there.
/// Further on they are generated ahead in whole runs of the fast block fill, so that short, uneven requests
/// (a window here, a spectrum there) cost what long ones do.
package final class NoiseStream {
    /// The longest slice one `take` may ask for.
    let maximumTake: Int
    private let prefix: UnsafeBufferPointer<Double>
    /// Where the next draw taken lies in the sequence.
    private var position = 0
    private var generator = Randn()
    /// Where `generator`'s next draw lies in the sequence, once it has been moved there.
    private var generatorPosition: Int?
    private let buffer: UnsafeMutableBufferPointer<Double>
    /// Draws generated but not yet taken are `buffer[start ..< end]`: the sequence's from `position`.
    private var start = 0
    private var end = 0

    /// Generation happens in multiples of this many draws, all on `Randn.fill`'s fast path.
    private static let refillGranule = 256

    package init(maximumTake: Int) {
        assert(maximumTake > 0, "a noise stream must allow some draws")
        self.maximumTake = maximumTake
        let granule = NoiseStream.refillGranule
        let capacity = (maximumTake + granule - 1) / granule * granule + 4 * granule
        buffer = .allocate(capacity: capacity)
        // The prefix and the jump table are built once per process: here, rather than by the first take, on
        // an audio thread.
        prefix = RandnPrefix.shared.values
        _ = XorshiftJumps.shared
    }

    deinit {
        buffer.deallocate()
    }

    /// Restarts at `Randn`'s seed, `count` draws in.
    package func restart(skipping count: Int = 0) {
        position = count
        start = 0
        end = 0
    }

    /// The next `count` draws; valid until the next call.
    package func take(_ count: Int) -> UnsafeBufferPointer<Double> {
        precondition(count >= 0 && count <= maximumTake, "take at most maximumTake draws")
        defer { position += count }
        if start == end, position + count <= prefix.count {
            return UnsafeBufferPointer(rebasing: prefix[position..<(position + count)])
        }
        if end - start < count {
            generate(atLeast: count - (end - start))
        }
        defer { start += count }
        return UnsafeBufferPointer(rebasing: buffer[start..<(start + count)])
    }

    /// Appends the fewest whole granules that make `count` more draws, moving what is left to the front
    /// first if they do not fit. Generating only on demand matters: a stream is restarted for every short
    /// analysis call, and draws made ahead and never taken would be thrown away.
    private func generate(atLeast count: Int) {
        let next = position + (end - start)
        if generatorPosition != next {
            generator = Randn()
            generator.skip(next)
        }
        let granule = NoiseStream.refillGranule
        let length = (count + granule - 1) / granule * granule
        if end + length > buffer.count {
            let left = end - start
            if left > 0 {
                buffer.baseAddress!.update(from: buffer.baseAddress! + start, count: left)
            }
            start = 0
            end = left
        }
        generator.fill(UnsafeMutableBufferPointer(rebasing: buffer[end..<(end + length)]))
        end += length
        generatorPosition = next + length
    }
}

/// The first draws of `Randn`'s sequence, made once per process and shared by every `NoiseStream`.
final class RandnPrefix: Sendable {
    static let shared = RandnPrefix()

    /// Enough for a frame of D4C (the most any analysis draws for one frame: 15 periods of 40 to 47 Hz) at
    /// the highest rate koe supports, 192 kHz; 512 KB.
    static let count = 1 << 16

    nonisolated(unsafe) package let values: UnsafeBufferPointer<Double>

    private init() {
        let values = UnsafeMutableBufferPointer<Double>.allocate(capacity: RandnPrefix.count)
        var generator = Randn()
        generator.fill(values)
        self.values = UnsafeBufferPointer(values)
    }
}
