import Foundation
import KoeDSP
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

    private func applied(_ values: [Double], _ function: (UnsafeMutableBufferPointer<Double>) -> Void) -> [Double] {
        var result = values
        result.withUnsafeMutableBufferPointer { function($0) }
        return result
    }

    /// Distance in units of the last place of the libm value.
    private func ulps(_ value: Double, _ reference: Double) -> Double {
        value == reference ? 0 : abs(value - reference) / reference.ulp
    }

    @Test func expIsWithinAnUlpOrTwoOfLibm() {
        for range in [-700.0 ... 700.0, -1.0 ... 1.0, -40.0 ... 5.0] {
            let input = samples(range)
            let output = applied(input, VectorMath.exp)
            for (x, y) in zip(input, output) {
                #expect(ulps(y, exp(x)) <= 1, "exp(\(x))")
            }
        }
    }

    @Test func logIsWithinAnUlpOrTwoOfLibm() {
        for range in [1e-300 ... 1e300, 0.5 ... 2.0, 1e-12 ... 1e3] {
            let input = samples(range)
            let output = applied(input, VectorMath.log)
            for (x, y) in zip(input, output) {
                #expect(ulps(y, log(x)) <= 1, "log(\(x))")
            }
        }
    }

    @Test func edgeValuesFollowLibm() {
        let special = [0.0, -0.0, -1, .infinity, -.infinity, .nan, 800, -800, .leastNonzeroMagnitude, .leastNormalMagnitude]
        let exps = applied(special, VectorMath.exp)
        let logs = applied(special, VectorMath.log)
        for (index, x) in special.enumerated() {
            #expect(exps[index] == exp(x) || (exps[index].isNaN && exp(x).isNaN), "exp(\(x))")
            #expect(logs[index] == log(x) || (logs[index].isNaN && log(x).isNaN), "log(\(x))")
        }
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

    @Test func sineAndCosineStayWithinRoundingAcrossQuadrants() {
        let input = samples(-100.0 ... 100.0, count: 4000) + [0, .pi / 4, .pi / 2, .pi, -.pi / 2, 1e6, .nan]
        var index = 0
        while index < input.count {
            var x = SIMD4<Double>(repeating: 0)
            for lane in 0..<min(4, input.count - index) { x[lane] = input[index + lane] }
            let (sine, cosine) = VectorMath.sinCos(x)
            for lane in 0..<min(4, input.count - index) {
                let value = x[lane]
                if value.isNaN {
                    #expect(sine[lane].isNaN && cosine[lane].isNaN)
                } else {
                    #expect(abs(sine[lane] - sin(value)) <= 1.2e-16, "sin(\(value))")
                    #expect(abs(cosine[lane] - cos(value)) <= 1.2e-16, "cos(\(value))")
                }
            }
            index += 4
        }
    }
}

extension Double {
    fileprivate func clamped(_ low: Double, _ high: Double) -> Double {
        Swift.min(Swift.max(self, low), high)
    }
}
