import Foundation
import KoeDSP
import Testing
import TestSupport
@testable import KoeWorld

/// DIO's per-band parts that the streaming analysis shares with whole signals.
@Suite struct DioBandTests {
    /// A 100 Hz tone at 8 kHz up to its fifth peak, at 42.5 ms, then `silence` samples holding the peak: a
    /// flat band, in which no event comes.
    private func toneThenSilence(_ silence: Int) -> Dio.BandEvents {
        let rate = 8000.0
        var events = Dio.BandEvents(rate: rate)
        let samples = (0...340).map { sin(2 * .pi * 100 * Double($0) / rate) } + [Double](repeating: 1, count: silence)
        samples.withUnsafeBufferPointer { events.append(contentsOf: $0) }
        return events
    }

    private func frequencies(_ events: Dio.BandEvents, at time: Double, holdingLast: Bool) -> [Double] {
        var cursor = Dio.EventCursor()
        let found = events.eventFrequencies(at: time, in: events.snapshot(), holdingLast: holdingLast, cursor: &cursor)
        guard let found else { return [] }
        return [found.0, found.1, found.2, found.3]
    }

    /// Live, a time past the last interval takes its frequency while the interval still open is shorter...
    @Test func liveHoldsTheLastFrequencyWhileTheOpenIntervalIsShorter() {
        let held = frequencies(toneThenSilence(10), at: 0.0435, holdingLast: true)
        #expect(held.count == 4 && held.allSatisfy { abs($0 - 100) < 2 }, "\(held)")
    }

    /// ...and once it is longer, the open interval's frequency, as a whole signal's long interval across a gap.
    @Test func liveTakesTheOpenIntervalOnceItIsLonger() {
        let silence = 800
        let open = frequencies(toneThenSilence(silence), at: 0.12, holdingLast: true)
        #expect(open.count == 4 && open.allSatisfy { $0 < 8000.0 / Double(silence - 10) }, "\(open)")
        // Whole signals keep WORLD's extrapolation from the last two intervals.
        let whole = frequencies(toneThenSilence(silence), at: 0.12, holdingLast: false)
        #expect(whole.count == 4 && whole.allSatisfy { $0 > 50 }, "\(whole)")
    }

    /// Every band's signal and, live, every provisional sample handed out, by absolute index.
    private func bandSignals(
        _ input: [Double], sampleRate: Int, live: Bool, chunk: Int
    ) -> (final: [[Double]], provisional: [[Int: Double]]) {
        let ladder = Dio.Ladder(rate: Double(sampleRate), options: Dio.Options())
        var bank = Dio.BandFilterBank(ladder: ladder, blockLength: sampleRate / 200, live: live)
        var final = Array(repeating: [Double](), count: ladder.bandCount)
        var provisional = Array(repeating: [Int: Double](), count: ladder.bandCount)
        for start in stride(from: 0, to: input.count, by: chunk) {
            bank.push(Array(input[start..<min(input.count, start + chunk)])) { band, first, values in
                #expect(first == final[band].count)
                final[band] += values
            } provisional: { band, first, values in
                for (offset, value) in values.enumerated() {
                    provisional[band][first + offset] = value
                }
            } afterBlock: { _ in }
        }
        bank.finish(through: input.count - 1) { band, _, values in
            final[band] += values
        }
        return (final, provisional)
    }

    /// Speech-like vowels, digital silence between them, and an offset.
    private func input(sampleRate: Int) -> [Double] {
        let silence = [Double](repeating: 0, count: sampleRate / 5)
        return (silence + Signals.vowel(f0: 120, sampleRate: sampleRate, duration: 0.3) + silence
            + Signals.vowel(f0: 230, sampleRate: sampleRate, duration: 0.2) + silence).map { $0 - 0.01 }
    }

    /// Live blocks are filtered by partitioned convolution, whole signals by overlap-save: the band signals
    /// agree to rounding.
    @Test(arguments: [16000, 48000])
    func liveBandSignalsEqualWholeSignalOnes(sampleRate: Int) {
        let input = input(sampleRate: sampleRate)
        let live = bandSignals(input, sampleRate: sampleRate, live: true, chunk: 333).final
        let whole = bandSignals(input, sampleRate: sampleRate, live: false, chunk: input.count).final
        for band in whole.indices {
            #expect(live[band].count == input.count && whole[band].count == input.count)
            let worst = zip(live[band], whole[band]).map { abs($0 - $1) }.max() ?? 0
            #expect(worst < 1e-14, "band \(band): off by \(worst)")
        }
    }

    /// A provisional sample is the input through the band's Nuttall window alone, centred on it.
    @Test func provisionalSamplesAreTheNuttallWindowsOutput() {
        let sampleRate = 16000
        let input = input(sampleRate: sampleRate)
        let ladder = Dio.Ladder(rate: Double(sampleRate), options: Dio.Options())
        let provisional = bandSignals(input, sampleRate: sampleRate, live: true, chunk: 333).provisional
        for (band, samples) in provisional.enumerated() {
            let half = 2 * ladder.halfAverageLengths[band]
            let window = Window.nuttall(length: 2 * half)
            #expect(samples.count > input.count / 2)
            let worst = samples.map { index, value in
                abs(value - directConvolution(input, window, at: index + half))
            }.max() ?? 0
            #expect(worst < 1e-12, "band \(band): off by \(worst)")
        }
    }

    /// Appending a band in blocks, where eight samples at a time are tested for events before any is walked,
    /// finds exactly the events that appending it a sample at a time does: tones, noise, runs of +0 and -0, a
    /// plateau, a tone that only touches zero, and an offset taken from every sample.
    @Test func blocksFindTheEventsSampleBySampleDoes() {
        let rate = 8000.0
        var random = SeededRandom(seed: 23)
        var samples: [Double] = []
        for (frequency, length) in [(90.0, 700), (400.0, 300), (1900.0, 120)] {
            samples += (0..<length).map { 0.7 * sin(2 * .pi * frequency * Double($0) / rate) }
        }
        samples += (0..<400).map { _ in 0.01 * random.unit() }
        samples += [Double](repeating: 0, count: 20) + [Double](repeating: -0.0, count: 20)
        samples += [Double](repeating: 0.25, count: 50)
        samples += (0..<300).map { 0.25 + 0.25 * cos(2 * .pi * 150 * Double($0) / rate) }
        samples += (0..<500).map { 0.5 * sin(2 * .pi * 70 * Double($0) / rate) + 0.05 * random.unit() }
        let offset = 0.125

        var bySample = Dio.BandEvents(rate: rate)
        for sample in samples {
            [sample].withUnsafeBufferPointer { bySample.append(contentsOf: $0, less: offset) }
        }
        var inBlocks = Dio.BandEvents(rate: rate)
        var start = 0
        for length in [1, 2, 7, 8, 9, 16, 33, 64, 3, 500].cycled(toCover: samples.count) {
            let end = min(samples.count, start + length)
            samples[start..<end].withUnsafeBufferPointer { inBlocks.append(contentsOf: $0, less: offset) }
            start = end
            if start == samples.count { break }
        }

        #expect(bySample.counts == inBlocks.counts, "\(bySample.counts) against \(inBlocks.counts)")
        #expect(bySample.counts.0 > 40 && bySample.counts.2 > 40)
        #expect(bySample.sampleCount == inBlocks.sampleCount && bySample.lastSample == inBlocks.lastSample)
        for step in 0..<200 {
            let time = Double(step) / 200 * Double(samples.count) / rate
            for holdingLast in [false, true] {
                #expect(frequencies(bySample, at: time, holdingLast: holdingLast)
                        == frequencies(inBlocks, at: time, holdingLast: holdingLast), "at \(time) s")
            }
        }
    }
}

extension Array {
    /// This array's elements over and over, enough of them to add up past `total` when they are lengths.
    fileprivate func cycled(toCover total: Int) -> [Element] where Element == Int {
        var lengths: [Int] = []
        var covered = 0
        while covered < total {
            for length in self {
                lengths.append(length)
                covered += length
            }
        }
        return lengths
    }
}
