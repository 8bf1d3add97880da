import Foundation
import Testing
import TestSupport
@testable import KoeWorld

/// CheapTrick and D4C over several segments at once: each segment as its own call, for any thread count.
@Suite struct FrameBatchTests {
    private let sampleRate = 48000

    /// Two segments of different lengths, voiced and unvoiced frames in each, on their own time axes.
    private func segments() -> [SignalSegment] {
        let first = Signals.vowel(f0: 130, sampleRate: sampleRate, duration: 0.12)
            + Signals.whiteNoise(count: sampleRate / 20, amplitude: 0.05)
        let second = Signals.whiteNoise(count: sampleRate / 25, amplitude: 0.02, seed: 3)
            + Signals.vowel(f0: 230, sampleRate: sampleRate, duration: 0.1, formants: [500, 1500, 2500])
        return [first, second].map { signal in
            let raw = Dio(sampleRate: sampleRate).estimate(signal)
            return SignalSegment(signal: signal, contour: StoneMask(sampleRate: sampleRate).refine(signal, contour: raw))
        }
    }

    private func stacked(_ matrices: [Matrix]) -> [Double] {
        matrices.flatMap(\.storage)
    }

    @Test func cheapTrickAnalysesEachSegmentAsItsOwnCall() {
        let segments = segments()
        let cheapTrick = CheapTrick(sampleRate: sampleRate)
        let alone = stacked(segments.map { cheapTrick.estimate($0.signal, contour: $0.contour) })
        for threads in [1, 2, 3] {
            let batch = cheapTrick.estimate(segments, threads: threads)
            #expect(batch.rows == segments.reduce(0) { $0 + $1.contour.frameCount })
            #expect(batch.storage == alone, "\(threads) threads")
        }
    }

    @Test func d4cAnalysesEachSegmentAsItsOwnCall() {
        let segments = segments()
        #expect(segments.allSatisfy { $0.contour.f0.contains { $0 > 0 } && $0.contour.f0.contains(0) })
        let d4c = D4C(sampleRate: sampleRate, fftSize: CheapTrick(sampleRate: sampleRate).fftSize)
        let alone = stacked(segments.map { d4c.estimate($0.signal, contour: $0.contour) })
        #expect(alone.contains { $0 < 0.5 })
        for threads in [1, 2, 3] {
            #expect(d4c.estimate(segments, threads: threads).storage == alone, "\(threads) threads")
        }
    }
}
