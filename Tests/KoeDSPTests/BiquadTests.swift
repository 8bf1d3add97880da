import Foundation
@testable import KoeDSP
import Testing

@Suite struct BiquadTests {
    private let sampleRate = 48000

    /// |H(e^jω)| of the filter's coefficients at `frequency` Hz.
    private func magnitude(_ filter: Biquad, at frequency: Double) -> Double {
        let c = filter.coefficients
        let omega = 2 * Double.pi * frequency / Double(sampleRate)
        func polynomial(_ p0: Double, _ p1: Double, _ p2: Double) -> Double {
            let real = p0 + p1 * cos(omega) + p2 * cos(2 * omega)
            let imag = -p1 * sin(omega) - p2 * sin(2 * omega)
            return (real * real + imag * imag).squareRoot()
        }
        return polynomial(c.b0, c.b1, c.b2) / polynomial(1, c.a1, c.a2)
    }

    private func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

    @Test func peakHasItsGainAtTheCentre() throws {
        let filter = try Biquad(kind: .peak, frequency: 1000, gainDB: 6, width: .q(1.4), sampleRate: sampleRate)
        #expect(abs(decibels(magnitude(filter, at: 1000)) - 6) < 1e-9)
        #expect(abs(decibels(magnitude(filter, at: 20)) - 0) < 0.01)
        #expect(abs(decibels(magnitude(filter, at: 20000)) - 0) < 0.05)
    }

    @Test func shelvesHaveTheirGainOnTheShelf() throws {
        let low = try Biquad(kind: .lowShelf, frequency: 200, gainDB: -8, width: .slope(0.5), sampleRate: sampleRate)
        #expect(abs(decibels(magnitude(low, at: 0)) + 8) < 1e-9)
        #expect(abs(decibels(magnitude(low, at: 24000))) < 1e-9)
        let high = try Biquad(kind: .highShelf, frequency: 4000, gainDB: 5, width: .q(0.7), sampleRate: sampleRate)
        #expect(abs(decibels(magnitude(high, at: 24000)) - 5) < 1e-9)
        #expect(abs(decibels(magnitude(high, at: 0))) < 1e-9)
    }

    @Test func butterworthPassFiltersAreThreeDecibelsDownAtTheCorner() throws {
        let q = Biquad.Width.q(0.5.squareRoot())
        let low = try Biquad(kind: .lowPass, frequency: 3000, width: q, sampleRate: sampleRate)
        let high = try Biquad(kind: .highPass, frequency: 300, width: q, sampleRate: sampleRate)
        #expect(abs(magnitude(low, at: 3000) - 0.5.squareRoot()) < 1e-12)
        #expect(abs(magnitude(high, at: 300) - 0.5.squareRoot()) < 1e-12)
        #expect(abs(magnitude(low, at: 0) - 1) < 1e-12)
        #expect(magnitude(low, at: 24000) < 1e-12)
        #expect(abs(magnitude(high, at: 24000) - 1) < 1e-12)
        #expect(magnitude(high, at: 0) < 1e-12)
    }

    @Test func aSteadySineComesOutScaledByTheResponse() throws {
        var filter = try Biquad(kind: .peak, frequency: 2000, gainDB: -9, width: .q(2), sampleRate: sampleRate)
        let expected = magnitude(filter, at: 2500)
        var samples = (0..<9600).map { sin(2 * Double.pi * 2500 * Double($0) / Double(sampleRate)) }
        filter.process(&samples)
        let settled = samples[4800...]
        let amplitude = (2 * settled.map { $0 * $0 }.reduce(0, +) / Double(settled.count)).squareRoot()
        #expect(abs(amplitude - expected) < 1e-3)
    }

    @Test func processingInPiecesContinuesTheState() throws {
        var whole = try Biquad(kind: .highShelf, frequency: 5000, gainDB: 7, width: .slope(1), sampleRate: sampleRate)
        var pieces = whole
        let signal = (0..<1000).map { sin(Double($0) * 0.37) + 0.3 * cos(Double($0) * 2.1) }
        var expected = signal
        whole.process(&expected)
        var result: [Double] = []
        for start in stride(from: 0, to: signal.count, by: 33) {
            var piece = Array(signal[start..<min(start + 33, signal.count)])
            pieces.process(&piece)
            result += piece
        }
        #expect(result == expected)
    }

    @Test func resetForgetsThePast() throws {
        var filter = try Biquad(kind: .lowPass, frequency: 500, width: .q(1), sampleRate: sampleRate)
        var first = [1.0, 0, 0, 0, 0]
        filter.process(&first)
        filter.reset()
        var second = [1.0, 0, 0, 0, 0]
        filter.process(&second)
        #expect(first == second)
    }

    @Test(arguments: [24000.0, 30000.0])
    func refusesFrequenciesAtOrAboveNyquist(frequency: Double) {
        #expect(throws: BiquadError.frequencyAtOrAboveNyquist(kind: .peak, frequency: frequency, sampleRate: sampleRate)) {
            try Biquad(kind: .peak, frequency: frequency, gainDB: 3, width: .q(1), sampleRate: sampleRate)
        }
        let message = BiquadError.frequencyAtOrAboveNyquist(kind: .peak, frequency: frequency, sampleRate: sampleRate)
            .description
        #expect(message.contains("peak") && message.contains("Nyquist") && message.contains("\(frequency)"))
    }

    @Test func refusesWidthsThatMeanNothing() {
        #expect(throws: BiquadError.self) { try Biquad(kind: .peak, frequency: 1000, width: .q(0), sampleRate: sampleRate) }
        #expect(throws: BiquadError.self) { try Biquad(kind: .peak, frequency: 1000, width: .slope(0.5), sampleRate: sampleRate) }
        #expect(throws: BiquadError.self) {
            try Biquad(kind: .lowShelf, frequency: 100, gainDB: 3, width: .slope(1.5), sampleRate: sampleRate)
        }
        #expect(throws: BiquadError.self) { try Biquad(kind: .lowPass, frequency: 0, width: .q(1), sampleRate: sampleRate) }
    }

    /// The smallest positive Q makes the cookbook's alpha infinite: such a band was built with NaN coefficients
    /// and turned its output into NaN.
    @Test(arguments: Biquad.Kind.allCases)
    func refusesAWidthTooNarrowToDesign(kind: Biquad.Kind) {
        #expect(throws: BiquadError.tooNarrow(kind: kind, width: .q(.leastNonzeroMagnitude))) {
            try Biquad(kind: kind, frequency: 1000, gainDB: 0, width: .q(.leastNonzeroMagnitude), sampleRate: sampleRate)
        }
    }
}
