import Foundation
@testable import KoeDSP
import Testing

@Suite struct MatlabTests {
    @Test func roundsHalvesAwayFromZero() {
        #expect(Matlab.round(2.5) == 3)
        #expect(Matlab.round(-2.5) == -3)
        #expect(Matlab.round(2.49) == 2)
    }

    @Test func interp1InterpolatesAndExtrapolates() {
        let y = Matlab.interp1(x: [0, 1, 2], y: [0, 10, 30], at: [-1, 0, 0.5, 1.5, 2, 3])
        #expect(y == [-10, 0, 5, 20, 30, 50])
    }

    /// Many queries a segment (Harvest's 1 ms frames between its events) go through `interp1`'s four-lane path;
    /// each value must be WORLD's own, `y[k-1] + (xi - x[k-1]) / (x[k] - x[k-1]) * (y[k] - y[k-1])` with `k` the
    /// first knot above `xi` (histc), bit for bit, also on the knots and beyond both ends.
    @Test func interp1GivesWorldsValueForEachOfManyQueries() {
        let x = [0.013, 0.021, 0.0305, 0.031, 0.047, 0.0521, 0.09]
        let y = [212.5, 198.25, 187.0, 240.125, 199.9, 205.3, 180.7]
        let xi = (0..<100).map { Double($0) * 0.001 } + x
        let queries = xi.sorted()
        let values = Matlab.interp1(x: x, y: y, at: queries)
        for (query, value) in zip(queries, values) {
            let k = min(max(x.firstIndex { $0 > query } ?? x.count - 1, 1), x.count - 1)
            let expected = y[k - 1] + (query - x[k - 1]) / (x[k] - x[k - 1]) * (y[k] - y[k - 1])
            #expect(value.bitPattern == expected.bitPattern, "at \(query)")
        }
    }

    @Test func interp1QOnUniformAxis() {
        let y = Matlab.interp1Q(origin: 1, step: 0.5, y: [0, 1, 4], at: [1, 1.25, 1.75, 2])
        #expect(y == [0, 0.5, 2.5, 4])
    }

    @Test func suitableFFTSizeIsNextPowerOfTwoAbove() {
        #expect(Matlab.suitableFFTSize(1000) == 1024)
        #expect(Matlab.suitableFFTSize(1024) == 2048)
    }

    @Test func decimateKeepsLowFrequencyAndLength() {
        let x = (0..<400).map { sin(2 * Double.pi * Double($0) / 100) }
        let y = Matlab.decimate(x, factor: 4, count: 100)
        #expect(y.count == 100)
        for i in 10..<90 {
            let expected = sin(2 * Double.pi * Double(4 * i + 3) / 100)
            #expect(abs(y[i] - expected) < 0.05)
        }
    }

    @Test func randnIsReproducibleAndRoughlyStandard() {
        var first = Randn()
        var second = Randn()
        let draws = (0..<20000).map { _ in first.next() }
        #expect(draws.prefix(5) == (0..<5).map { _ in second.next() }[...])
        let mean = draws.reduce(0, +) / Double(draws.count)
        let variance = draws.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(draws.count)
        #expect(abs(mean) < 0.05)
        #expect(abs(variance - 1) < 0.05)
    }
}
