import Foundation
@testable import KoeDSP
import Testing

@Suite struct TrigonometryTests {
    private func compute(
        count: Int, start: Double, step: Double
    ) -> (cosines: [Double], sines: [Double], both: ([Double], [Double])) {
        var cosines = [Double](repeating: .nan, count: count)
        var sines = [Double](repeating: .nan, count: count)
        cosines.withUnsafeMutableBufferPointer { Trigonometry.cosines(start: start, step: step, into: $0) }
        sines.withUnsafeMutableBufferPointer { Trigonometry.sines(start: start, step: step, into: $0) }
        var bothCosines = [Double](repeating: .nan, count: count)
        var bothSines = [Double](repeating: .nan, count: count)
        bothCosines.withUnsafeMutableBufferPointer { c in
            bothSines.withUnsafeMutableBufferPointer { s in
                Trigonometry.cosinesAndSines(start: start, step: step, into: c, s)
            }
        }
        return (cosines, sines, (bothCosines, bothSines))
    }

    @Test func matchesLibmWithinRounding() {
        for (count, start, step) in [(1, 0.3, 0.1), (31, 0, 0.01), (33, -1.2, 0.7), (1025, 0, Double.pi / 1024), (5000, 2.5, 0.0031)] {
            let result = compute(count: count, start: start, step: step)
            for k in 0..<count {
                let angle = start + Double(k) * step
                #expect(abs(result.cosines[k] - cos(angle)) < 1e-14 * max(1, abs(angle)))
                #expect(abs(result.sines[k] - sin(angle)) < 1e-14 * max(1, abs(angle)))
            }
            #expect(result.both.0 == result.cosines)
            #expect(result.both.1 == result.sines)
        }
    }

    @Test func startsExactlyAtTheStartAngle() {
        let result = compute(count: 100, start: 0, step: 0.05)
        #expect(result.cosines[0] == 1)
        #expect(result.sines[0] == 0)
    }

    @Test func emptyOutputIsFine() {
        let result = compute(count: 0, start: 0, step: 1)
        #expect(result.cosines.isEmpty)
    }

    @Test func progressionGivesTheSameCosinesForAnyStart() {
        let progression = Trigonometry.Progression(step: 0.013, count: 300)
        for start in [0.0, 1.7, -40.2] {
            var reused = [Double](repeating: .nan, count: 300)
            var direct = [Double](repeating: .nan, count: 300)
            reused.withUnsafeMutableBufferPointer { progression.cosines(start: start, into: $0) }
            direct.withUnsafeMutableBufferPointer { Trigonometry.cosines(start: start, step: 0.013, into: $0) }
            #expect(reused == direct)
        }
    }
}
