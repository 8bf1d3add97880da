import Foundation
@testable import KoeDSP
import Testing

@Suite struct VectorMathTests {
    /// Deterministic values spread over `range`, with a few awkward ones, in a buffer of odd length.
    private func samples(_ range: ClosedRange<Double>, count: Int = 4001) -> [Double] {
        var generator = Randn()
        return (0..<count).map { index in
            let uniform = (generator.next() / 12 + 0.5).clamped(0, 1)
            return index % 97 == 0 ? range.lowerBound : range.lowerBound + uniform * (range.upperBound - range.lowerBound)
        }
    }

    /// A signal with runs of zeros, exact repeats (flat slopes) and sign changes, for the zero-crossing tests.
    private func crossingSignal() -> [Double] {
        samples(-1...1, count: 2001).enumerated().map { index, value in
            index % 13 < 3 ? 0 : index % 17 == 0 ? 0.25 : value
        }
    }

    /// Every index's four tests as its bits, against the definitions one index at a time.
    @Test func crossingBitsFollowTheirDefinitions() {
        let signal = crossingSignal()
        signal.withUnsafeBufferPointer { x in
            for first in 0..<(x.count - 9) {
                var expected = 0
                for i in 0..<8 {
                    let (a, b, c) = (x[first + i], x[first + i + 1], x[first + i + 2])
                    let (slope, nextSlope) = (b - a, c - b)
                    let tests = [a > 0 && b <= 0, a < 0 && b >= 0, slope > 0 && nextSlope <= 0, slope < 0 && nextSlope >= 0]
                    for (kind, holds) in tests.enumerated() where holds {
                        expected |= 1 << (8 * kind + i)
                    }
                }
                #expect(VectorMath.crossingBits(x.baseAddress! + first) == expected)
            }
        }
    }

    /// DIO's alignment, less an offset: every index's four tests as its bits, against the definitions one index at
    /// a time.
    @Test func eventBitsFollowTheirDefinitions() {
        let signal = crossingSignal()
        signal.withUnsafeBufferPointer { x in
            for offset in [0, 0.25, -1e-3] {
                for first in 2..<(x.count - 8) {
                    var expected = 0
                    for i in 0..<8 {
                        let (a, b, c) = (x[first + i - 2] - offset, x[first + i - 1] - offset, x[first + i] - offset)
                        let (earlier, later) = (b - a, c - b)
                        let tests = [b > 0 && c <= 0, b < 0 && c >= 0, earlier > 0 && later <= 0, earlier < 0 && later >= 0]
                        for (kind, holds) in tests.enumerated() where holds {
                            expected |= 1 << (8 * kind + i)
                        }
                    }
                    #expect(VectorMath.eventBits(endingAt: x.baseAddress! + first, less: offset) == expected)
                }
            }
        }
    }

    @Test func exponentiateFollowsLibmAtTheEdges() {
        let special: [(Double, Double)] = [(0, 0), (-800, 1), (800, 1), (.nan, 0), (0, .nan), (0, 1e7), (-.infinity, 2)]
        var values = special.map { Complex($0.0, $0.1) }
        values.withUnsafeMutableBufferPointer { VectorMath.exponentiate($0, scale: 1) }
        for (index, (real, imag)) in special.enumerated() {
            let expected = Complex(exp(real) * cos(imag), exp(real) * sin(imag))
            #expect(same(values[index].real, expected.real) && same(values[index].imag, expected.imag), "\(real), \(imag)")
        }
    }

    /// Equal within rounding, or the same infinity or NaN.
    private func same(_ a: Double, _ b: Double) -> Bool {
        a == b || (a.isNaN && b.isNaN) || abs(a - b) <= 2.3e-16 * abs(b)
    }

    @Test func exponentiateMatchesLibmWithinRounding() {
        let scale = 1.0 / 64
        let real = samples(-2000.0 ... 300.0, count: 1025)
        let imag = samples(-6000.0 ... 6000.0, count: 1025)
        var values = zip(real, imag).map { Complex($0, $1) }
        values.withUnsafeMutableBufferPointer { VectorMath.exponentiate($0, scale: scale) }
        for index in values.indices {
            let magnitude = exp(real[index] * scale)
            let phase = imag[index] * scale
            #expect(abs(values[index].real - magnitude * cos(phase)) <= 4e-16 * magnitude)
            #expect(abs(values[index].imag - magnitude * sin(phase)) <= 4e-16 * magnitude)
        }
    }

    @Test func exponentialsMatchLibmWithinRounding() {
        let scale = log(10.0) / 20
        let input = samples(-200.0 ... 20.0, count: 1025) + [-8000, 0, 8000, .nan, -.infinity]
        var values = input
        values.withUnsafeMutableBufferPointer { VectorMath.exponentials($0, scale: scale) }
        for index in values.indices {
            let expected = exp(input[index] * scale)
            #expect(same(values[index], expected), "exp(\(input[index] * scale))")
        }
    }

    @Test func logarithmsMatchLibmWithinOneUnitInTheLastPlace() {
        // Across the mantissa's two forms (its range around 1.4 to 1.7 and the rest), many exponents, and the
        // values the kernel leaves to libm: zero, negative, subnormal, infinite, NaN.
        let spread = samples(-700.0 ... 700.0, count: 2001).map { exp($0) }
        let mantissas = (0..<512).map { 1.0 + Double($0) / 512 }
        let special: [Double] = [
            1, 2, 0.5, .leastNormalMagnitude, .greatestFiniteMagnitude, .leastNormalMagnitude / 4, 0, -1, .infinity, .nan,
        ]
        let input = spread + mantissas + special
        var values = input
        values.withUnsafeMutableBufferPointer { VectorMath.logarithms($0, scale: 0.5) }
        for index in values.indices {
            let expected = log(input[index]) * 0.5
            let agrees = expected.isFinite
                ? abs(values[index] - expected) <= expected.ulp : same(values[index], expected)
            #expect(agrees, "log(\(input[index]))")
        }
    }

    @Test func sumsAgreeWithLeftToRightSumsWithinRounding() {
        for count in [0, 1, 3, 4, 7, 1921] {
            let values = samples(-1.0 ... 3.0, count: max(count, 1)).prefix(count)
            let sum = values.withContiguousStorageIfAvailable { VectorMath.sum($0) }!
            let squares = values.withContiguousStorageIfAvailable { VectorMath.sumOfSquares($0) }!
            let expectedSum = values.reduce(0, +)
            let expectedSquares = values.reduce(0) { $0 + $1 * $1 }
            #expect(abs(sum - expectedSum) <= 1e-13 * values.reduce(0) { $0 + abs($1) }, "sum of \(count)")
            #expect(abs(squares - expectedSquares) <= 1e-13 * expectedSquares, "squares of \(count)")
        }
    }

    @Test func sineAndCosineStayWithinRoundingAcrossQuadrants() {
        let input = samples(-100.0 ... 100.0, count: 4000) + [0, .pi / 4, .pi / 2, .pi, -.pi / 2, 1e6, .nan]
        var index = 0
        while index < input.count {
            var x = VectorMath.Lanes(repeating: 0)
            let lanes = min(x.scalarCount, input.count - index)
            for lane in 0..<lanes { x[lane] = input[index + lane] }
            let (sine, cosine) = VectorMath.sinCos(x)
            for lane in 0..<lanes {
                let value = x[lane]
                if value.isNaN {
                    #expect(sine[lane].isNaN && cosine[lane].isNaN)
                } else {
                    #expect(abs(sine[lane] - sin(value)) <= 1.2e-16, "sin(\(value))")
                    #expect(abs(cosine[lane] - cos(value)) <= 1.2e-16, "cos(\(value))")
                }
            }
            index += lanes
        }
    }
}

extension Double {
    fileprivate func clamped(_ low: Double, _ high: Double) -> Double {
        Swift.min(Swift.max(self, low), high)
    }
}
