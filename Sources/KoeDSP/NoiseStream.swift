/// `Randn`'s sequence handed out in slices of any length, generated ahead in whole runs of its fast block
/// fill so that short, uneven requests (a window here, a spectrum there) cost what long ones do.
package final class NoiseStream {
    /// The longest slice one `take` may ask for.
    package let maximumTake: Int
    private var generator = Randn()
    private let buffer: UnsafeMutableBufferPointer<Double>
    /// Draws generated but not yet taken are `buffer[start ..< end]`.
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
        // The jump table is built once per process: here, rather than by the first fill, on an audio thread.
        _ = XorshiftJumps.shared
    }

    deinit {
        buffer.deallocate()
    }

    /// Restarts at `Randn`'s seed, `count` draws in.
    package func restart(skipping count: Int = 0) {
        generator = Randn()
        generator.skip(count)
        start = 0
        end = 0
    }

    /// The next `count` draws; valid until the next call.
    package func take(_ count: Int) -> UnsafeBufferPointer<Double> {
        precondition(count >= 0 && count <= maximumTake, "take at most maximumTake draws")
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
    }
}
