/// `Randn`'s sequence handed out in slices of any length, generated ahead in whole runs of its fast block
/// fill so that short, uneven requests (a window here, a spectrum there) cost what long ones do.
public final class NoiseStream {
    /// The longest slice one `take` may ask for.
    public let maximumTake: Int
    private var generator = Randn()
    private let buffer: UnsafeMutableBufferPointer<Double>
    /// Draws generated but not yet taken are `buffer[start ..< end]`.
    private var start = 0
    private var end = 0

    /// Generation happens in multiples of this many draws, all on `Randn.fill`'s fast path.
    private static let refillGranule = 256

    public init(maximumTake: Int) {
        precondition(maximumTake > 0, "a noise stream must allow some draws")
        self.maximumTake = maximumTake
        let granule = NoiseStream.refillGranule
        let capacity = (maximumTake + granule - 1) / granule * granule + 4 * granule
        buffer = .allocate(capacity: capacity)
    }

    deinit {
        buffer.deallocate()
    }

    /// Restarts at `Randn`'s seed, `count` draws in.
    public func restart(skipping count: Int = 0) {
        generator = Randn()
        generator.skip(count)
        start = 0
        end = 0
    }

    /// The next `count` draws; valid until the next call.
    public func take(_ count: Int) -> UnsafeBufferPointer<Double> {
        precondition(count >= 0 && count <= maximumTake, "take at most maximumTake draws")
        if end - start < count {
            refill()
        }
        defer { start += count }
        return UnsafeBufferPointer(rebasing: buffer[start..<(start + count)])
    }

    /// Moves what is left to the front and fills the rest of the buffer with whole granules.
    private func refill() {
        let left = end - start
        if left > 0 {
            buffer.baseAddress!.update(from: buffer.baseAddress! + start, count: left)
        }
        let granules = (buffer.count - left) / NoiseStream.refillGranule
        let fresh = UnsafeMutableBufferPointer(rebasing: buffer[left..<(left + granules * NoiseStream.refillGranule)])
        generator.fill(fresh)
        start = 0
        end = left + fresh.count
    }
}
