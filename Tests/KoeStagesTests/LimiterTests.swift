import Foundation
import KoeStages
import TestSupport
import Testing

@Suite struct LimiterTests {
    private let sampleRate = 16000

    private func limited(_ input: [Double], ceiling: Double = 1, chunk: Int? = nil, enabled: Bool = true) throws -> [Double] {
        let limiter = try Limiter(sampleRate: sampleRate, ceiling: ceiling)
        limiter.isEnabled = enabled
        var output: [Double] = []
        let size = chunk ?? max(1, input.count)
        for start in stride(from: 0, to: input.count, by: size) {
            try limiter.process(Array(input[start..<min(input.count, start + size)]), isFinal: false, into: &output)
        }
        try limiter.process([], isFinal: true, into: &output)
        return output
    }

    @Test func itsLatencyIsTheLookAhead() throws {
        #expect(try Limiter(sampleRate: 16000, ceiling: 1).latency == 80)
        #expect(try Limiter(sampleRate: 48000, ceiling: 1).latency == 240)
    }

    @Test func aSignalWithinTheCeilingPassesBitForBit() throws {
        let speech = Signals.vowel(f0: 130, sampleRate: sampleRate, duration: 0.5).map { $0 * 1.9 }  // peak 0.95
        let passed = try limited(speech) == speech
        #expect(passed)
        let fullScale = 32767.0 / 32768
        let touching = speech.map { min(max($0 / 0.95 * fullScale, -fullScale), fullScale) }
        let touchingPassed = try limited(touching, ceiling: fullScale) == touching
        #expect(touchingPassed, "a peak exactly at the ceiling is within it")
    }

    @Test func noSampleLeavesAboveTheCeiling() throws {
        let loud = Signals.whiteNoise(count: 20000, amplitude: 3, seed: 7)
            + Signals.sine(frequency: 150, sampleRate: sampleRate, duration: 0.5, amplitude: 1.6)
        let output = try limited(loud, ceiling: 0.9)
        #expect(output.count == loud.count)
        #expect(output.map(abs).max()! <= 0.9)
    }

    /// A loud steady tone is brought down to the ceiling and held there without ripple: the gain has settled,
    /// so successive periods are alike and the peak sits at the ceiling.
    @Test func aLoudToneSettlesAtTheCeiling() throws {
        let tone = Signals.sine(frequency: 150, sampleRate: sampleRate, duration: 1, amplitude: 2)
        let output = try limited(tone)
        let settled = Array(output[8000...])
        #expect(settled.map(abs).max()! <= 1)
        #expect(settled.map(abs).max()! > 0.999)
        let ratios = zip(settled, tone[8000...]).filter { abs($0.1) > 0.5 }.map { $0.0 / $0.1 }
        #expect(ratios.max()! - ratios.min()! < 1e-3, "gain between \(ratios.min()!) and \(ratios.max()!)")
    }

    /// An isolated peak: the gain comes down over the look-ahead before it, in small steps, and comes back to
    /// exactly 1 (2 s later at the default release), so quiet samples long after it are untouched.
    @Test func theGainRampsDownBeforeAPeakAndReturnsToOne() throws {
        var signal = Signals.sine(frequency: 200, sampleRate: sampleRate, duration: 3, amplitude: 0.5)
        signal[8000] = 2
        let output = try limited(signal)
        #expect(abs(output[8000]) <= 1)
        let gains = (7900..<8000).map { output[$0] / signal[$0] }.filter(\.isFinite)
        #expect(gains.first! > 0.99 && gains.last! < 0.55)
        #expect(zip(gains, gains.dropFirst()).allSatisfy { abs($0.1 - $0.0) < 0.02 }, "no step in the gain")
        let untouched = output[48000...] == signal[48000...]
        #expect(untouched)
    }

    @Test func switchedOffItOnlyDelaysWhichIsTrimmed() throws {
        let loud = Signals.whiteNoise(count: 5000, amplitude: 3, seed: 2)
        let unchanged = try limited(loud, enabled: false) == loud
        #expect(unchanged)
    }

    @Test(arguments: [1, 17, 4096])
    func chunkedEqualsWhole(chunk: Int) throws {
        let loud = Signals.whiteNoise(count: 12000, amplitude: 1.5, seed: 5)
        let same = try limited(loud, chunk: chunk) == limited(loud)
        #expect(same)
    }

    @Test func aStreamShorterThanTheLookAheadComesOutWhole() throws {
        #expect(try limited([0.25, 3, -0.5]).count == 3)
        #expect(try limited([]).isEmpty)
    }

    @Test func refusesACeilingThatIsNotPositive() {
        #expect(throws: StageError.self) { try Limiter(sampleRate: 16000, ceiling: 0) }
        #expect(throws: StageError.self) { try Limiter(sampleRate: 16000, ceiling: .nan) }
    }
}
