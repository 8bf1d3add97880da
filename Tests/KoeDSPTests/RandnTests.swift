@testable import KoeDSP
import Testing

@Suite struct RandnTests {
    /// WORLD's randn written out step by step: xorshift128 from its fixed seed, twelve draws summed.
    private struct Reference {
        var x: UInt32 = 123_456_789, y: UInt32 = 362_436_069, z: UInt32 = 521_288_629, w: UInt32 = 88_675_123

        mutating func next() -> Double {
            var sum: UInt32 = 0
            for _ in 0..<12 {
                let t = x ^ (x << 11)
                x = y
                y = z
                z = w
                w = (w ^ (w >> 19)) ^ (t ^ (t >> 8))
                sum &+= w >> 4
            }
            return Double(sum) / 268_435_456.0 - 6.0
        }
    }

    @Test func followsWorldsSequence() {
        var reference = Reference()
        var randn = Randn()
        for _ in 0..<10_000 {
            #expect(randn.next() == reference.next())
        }
    }

    @Test func fillDrawsTheNextValues() {
        var reference = Reference()
        var randn = Randn()
        _ = randn.next()
        _ = reference.next()
        var values = [Double](repeating: 0, count: 300)
        values.withUnsafeMutableBufferPointer { randn.fill($0) }
        #expect(values == (0..<300).map { _ in reference.next() })
        #expect(randn.next() == reference.next())
    }

    @Test func longFillsDrawTheSequenceInOrder() {
        for count in [255, 256, 257, 1000, 5000] {
            var reference = Reference()
            var randn = Randn()
            var values = [Double](repeating: 0, count: count)
            values.withUnsafeMutableBufferPointer { randn.fill($0) }
            #expect(values == (0..<count).map { _ in reference.next() }, "\(count) values")
            #expect(randn.next() == reference.next())
        }
    }

    @Test func skipLandsWhereDrawingWould() {
        for count in [0, 1, 2, 7, 64, 1000, 123_457] {
            var drawn = Randn()
            for _ in 0..<count { _ = drawn.next() }
            var skipped = Randn()
            skipped.skip(count)
            #expect(skipped.next() == drawn.next(), "after skipping \(count)")
        }
    }

    @Test func reseedRestarts() {
        var randn = Randn()
        let first = randn.next()
        randn.skip(50)
        randn.reseed()
        #expect(randn.next() == first)
    }

    @Test func drawsAreRoughlyStandardNormal() {
        var randn = Randn()
        let values = (0..<20_000).map { _ in randn.next() }
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
        #expect(abs(mean) < 0.03)
        #expect(abs(variance - 1) < 0.05)
        #expect(values.allSatisfy { abs($0) <= 6 })
    }
}
