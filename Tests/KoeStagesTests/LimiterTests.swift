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
            limiter.process(Array(input[start..<min(input.count, start + size)]), into: &output)
        }
        limiter.finish(into: &output)
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
        #expect(throws: KoeError.self) { try Limiter(sampleRate: 16000, ceiling: 0) }
        #expect(throws: KoeError.self) { try Limiter(sampleRate: 16000, ceiling: .nan) }
    }
}

/// The limiter against a straightforward per-sample reference of the same algorithm: every sample, bit for bit,
/// through loud bursts, quiet stretches, silence, samples at the ceiling, the limiter switched on and off
/// between blocks, and blocks of 1, 17 and 4096 samples in random order.
@Suite struct LimiterReferenceTests {
    @Test(arguments: [(16000, 0.005), (48000, 0.005), (16000, 0.0), (8000, 0.02)])
    func matchesThePerSampleReference(sampleRate: Int, lookAhead: Double) throws {
        var options = Limiter.Options()
        options.lookAhead = lookAhead
        options.release = 0.002  // short, so the gain often returns to 1 between bursts
        for seed in 1...6 as ClosedRange<UInt64> {
            var random = SeededRandom(seed: seed)
            let ceiling = [1, 0.8, 32767.0 / 32768][Int(seed) % 3]
            let signal = Self.signal(count: 60000, ceiling: ceiling, random: &random)
            let limiter = try Limiter(sampleRate: sampleRate, ceiling: ceiling, options: options)
            let reference = ReferenceLimiter(sampleRate: sampleRate, ceiling: ceiling, options: options)
            var output: [Double] = []
            var expected: [Double] = []
            var start = 0
            while start < signal.count {
                if random.next() % 8 == 0 {
                    limiter.isEnabled.toggle()
                    reference.isEnabled = limiter.isEnabled
                }
                let size = [1, 17, 4096][Int(random.next() % 3)]
                let block = Array(signal[start..<min(signal.count, start + size)])
                start += block.count
                limiter.process(block, into: &output)
                reference.process(block, into: &expected)
            }
            limiter.finish(into: &output)
            reference.finish(into: &expected)
            #expect(output.count == signal.count && expected.count == signal.count)
            let firstDifference = zip(output, expected).enumerated().first { $0.element.0.bitPattern != $0.element.1.bitPattern }?.offset
            #expect(firstDifference == nil, "seed \(seed)")
        }
    }

    @Test func aStreamShorterThanTheLookAheadMatchesTheReference() throws {
        for count in [0, 1, 79, 80, 81] {
            let signal = Signals.whiteNoise(count: count, amplitude: 3, seed: UInt64(count + 1))
            let limiter = try Limiter(sampleRate: 16000, ceiling: 1)
            let reference = ReferenceLimiter(sampleRate: 16000, ceiling: 1, options: Limiter.Options())
            var output: [Double] = []
            var expected: [Double] = []
            limiter.process(signal, into: &output)
            limiter.finish(into: &output)
            reference.process(signal, into: &expected)
            reference.finish(into: &expected)
            #expect(output.map(\.bitPattern) == expected.map(\.bitPattern))
        }
    }

    /// Stretches of silence, quiet noise, a sine touching the ceiling, loud noise and lone spikes.
    private static func signal(count: Int, ceiling: Double, random: inout SeededRandom) -> [Double] {
        var signal: [Double] = []
        while signal.count < count {
            let length = 1 + Int(random.next() % 3000)
            switch random.next() % 5 {
            case 0:
                signal += repeatElement(0, count: length)
            case 1:
                signal += (0..<length).map { _ in ceiling * 0.5 * random.unit() }
            case 2:
                signal += (0..<length).map { ceiling * sin(Double($0) * 0.05) }
            case 3:
                signal += (0..<length).map { _ in ceiling * 4 * random.unit() }
            default:
                signal += (0..<length).map { _ in random.next() % 500 == 0 ? ceiling * (1 + 3 * abs(random.unit())) : 0.1 * random.unit() }
            }
        }
        return Array(signal.prefix(count))
    }
}

/// The limiter's algorithm written plainly, one sample at a time, as the stage first had it: the reference the
/// stage's faster loops must match bit for bit.
private final class ReferenceLimiter {
    var isEnabled = true
    private let ceiling: Double
    private let latency: Int
    private let window: Int
    private let releaseStep: Double
    private var delay: [Double]
    private var delayPosition = 0
    private var needs: [Double]
    private var needPositions: [Int]
    private var front = 0
    private var queued = 0
    private var released = 1.0
    private var shortfalls: [Double]
    private var shortfallSum = 0.0
    private var nonZeroShortfalls = 0
    private var received = 0

    init(sampleRate: Int, ceiling: Double, options: Limiter.Options) {
        self.ceiling = ceiling
        latency = Int((options.lookAhead * Double(sampleRate)).rounded())
        window = latency + 1
        releaseStep = 1 - exp(-1 / (options.release * Double(sampleRate)))
        delay = [Double](repeating: 0, count: latency)
        needs = [Double](repeating: 0, count: window)
        needPositions = [Int](repeating: 0, count: window)
        shortfalls = [Double](repeating: 0, count: window)
    }

    func process(_ input: [Double], into output: inout [Double]) {
        for sample in input {
            push(sample, into: &output)
        }
    }

    func finish(into output: inout [Double]) {
        for _ in 0..<latency {
            push(0, into: &output)
        }
    }

    private func push(_ sample: Double, into output: inout [Double]) {
        let gain = gain(after: sample)
        var leaving = sample
        if latency > 0 {
            swap(&leaving, &delay[delayPosition])
            delayPosition = delayPosition + 1 == latency ? 0 : delayPosition + 1
        }
        if received >= latency {
            let limited = leaving * gain
            output.append(isEnabled && abs(limited) > ceiling ? (limited < 0 ? -ceiling : ceiling) : limited)
        }
        received += 1
    }

    private func gain(after sample: Double) -> Double {
        let magnitude = abs(sample)
        let need = isEnabled && magnitude > ceiling ? ceiling / magnitude : 1
        let held = smallestNeed(after: need)
        if held < released {
            released = held
        } else {
            released += (held - released) * releaseStep
            if held == 1 && 1 - released < 1e-9 { released = 1 }
        }
        let slot = received % window
        let shortfall = 1 - released
        if shortfalls[slot] != 0 { nonZeroShortfalls -= 1 }
        if shortfall != 0 { nonZeroShortfalls += 1 }
        shortfallSum += shortfall - shortfalls[slot]
        shortfalls[slot] = shortfall
        if nonZeroShortfalls == 0 { shortfallSum = 0 }
        return 1 - shortfallSum / Double(window)
    }

    private func smallestNeed(after need: Double) -> Double {
        while queued > 0, needs[(front + queued - 1) % window] >= need {
            queued -= 1
        }
        if queued > 0, needPositions[front] <= received - window {
            front = (front + 1) % window
            queued -= 1
        }
        let back = (front + queued) % window
        needs[back] = need
        needPositions[back] = received
        queued += 1
        return needs[front]
    }
}
