import Foundation
@testable import KoeDSP
@testable import KoeWorld
import Testing

/// D4C's band aperiodicity sums all but each band's strongest bins, in one pass where WORLD sorts.
@Suite struct D4CBandAperiodicityTests {
    /// The centroid's time weights, four lanes at a time and the rest one by one, are each value times its
    /// position from 1, to the bit, at every length's remainder.
    @Test func weightByPositionIsExact() {
        var randn = Randn()
        for length in [0, 1, 3, 4, 5, 8, 11, 1921] {
            let values = (0..<length).map { _ in randn.next() }
            var weighted = values
            weighted.withUnsafeMutableBufferPointer { weightByPosition($0) }
            #expect(weighted == values.enumerated().map { $0.element * Double($0.offset + 1) }, "\(length) values")
        }
    }

    /// WORLD sorts a band's power spectrum and sums the smallest part of it; a single pass must agree.
    @Test func sumOfSmallestAgreesWithSorting() {
        var randn = Randn()
        for (length, count) in [(2049, 1984), (2049, 1), (40, 39), (40, 40), (40, 0)] {
            let values = (0..<length).map { _ in exp(4 * randn.next()) }
            let sorted = values.sorted()
            let reference = sorted[..<count].reduce(0, +)
            let (smallest, total) = values.withUnsafeBufferPointer { sumOfSmallest($0, count: count) }
            #expect(abs(smallest - reference) <= 1e-12 * reference, "\(count) of \(length)")
            #expect(abs(total - sorted.reduce(0, +)) <= 1e-12 * total, "\(count) of \(length)")
        }
    }

    /// Peaks on every eighth value only, where a guess from every eighth value overshoots: all are considered.
    @Test func sumOfSmallestHandlesSparsePeaks() {
        let values = (0..<2049).map { (index: Int) -> Double in index % 8 == 0 ? 100 + Double(index) : 1 + Double(index % 3) }
        let reference = values.sorted()[..<1984].reduce(0, +)
        let (smallest, total) = values.withUnsafeBufferPointer { sumOfSmallest($0, count: 1984) }
        #expect(smallest == reference)
        #expect(total == values.reduce(0, +))
    }

    /// Values equal to the threshold count only as often as the sorted order keeps them.
    @Test func sumOfSmallestCountsTiesOnce() {
        let values: [Double] = [3, 1, 3, 2, 3, 0, 3, 5, 3, 1]
        for count in 0...values.count {
            let reference = values.sorted()[..<count].reduce(0, +)
            let (smallest, total) = values.withUnsafeBufferPointer { sumOfSmallest($0, count: count) }
            #expect(smallest == reference, "\(count) smallest")
            #expect(total == 24)
        }
    }

    /// The selection behind the sums, at every rank: of signed values spanning every magnitude (so key ranges
    /// wider than `Int64.max`), of many ties, and of a few.
    @Test func largestAgreesWithSortingAtEveryRank() {
        var randn = Randn()
        let wide = (0..<300).map { _ in randn.next() * pow(10, 300 * randn.next() / 6) }
        let ties = (0..<300).map { _ in (randn.next() * 3).rounded() }
        let few: [Double] = [2, -0.0, 0, -1, 7]
        for values in [wide, ties, few, [Double](repeating: 4, count: 9), [-.infinity, 1, .infinity]] {
            let descending = values.sorted(by: >)
            for rank in 1...values.count {
                let found = values.withUnsafeBufferPointer { values in
                    withUnsafeTemporaryAllocation(of: Int64.self, capacity: largestScratchCount(values.count)) {
                        largest(rank, of: values, scratch: $0)
                    }
                }
                #expect(found.value == descending[rank - 1], "rank \(rank) of \(values.count)")
                #expect(found.atOrAbove == values.filter { $0 >= found.value }.count, "rank \(rank) of \(values.count)")
            }
        }
    }
}
