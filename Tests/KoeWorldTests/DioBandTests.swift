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
}
