/// A seeded Gaussian generator: xorshift128 draws, twelve uniform draws summed (Irwin–Hall),
/// the same sequence as WORLD's `randn`, so noise excitation can be reproduced run to run.
public struct Randn: Sendable {
    private var x: UInt32 = 123_456_789
    private var y: UInt32 = 362_436_069
    private var z: UInt32 = 521_288_629
    private var w: UInt32 = 88_675_123

    public init() {}

    /// Restart the sequence from its fixed seed.
    public mutating func reseed() {
        self = Randn()
    }

    /// Approximately standard normal: mean 0, variance 1, bounded to ±6.
    public mutating func next() -> Double {
        var sum: UInt32 = 0
        for _ in 0..<12 {
            sum &+= nextUniformBits() >> 4
        }
        return Double(sum) / 268_435_456.0 - 6.0
    }

    private mutating func nextUniformBits() -> UInt32 {
        let t = x ^ (x << 11)
        x = y
        y = z
        z = w
        w = (w ^ (w >> 19)) ^ (t ^ (t >> 8))
        return w
    }
}
