import Foundation
import Testing
import TestSupport
@testable import KoeWorld

@Suite struct StreamingDioTests {
    private let sampleRate = 16000

    /// Two vowels and a pause, with silence at both ends.
    private func signal() -> [Double] {
        let pause = [Double](repeating: 0, count: 1600)
        return pause + Signals.vowel(f0: 140, sampleRate: sampleRate, duration: 0.5) + pause
            + Signals.vowel(f0: 220, sampleRate: sampleRate, duration: 0.4) + pause
    }

    private func stream(
        _ signal: [Double], chunk: Int, sampleRate: Int = 16000, options: StreamingDio.Options = .init()
    ) -> [Double] {
        let dio = StreamingDio(sampleRate: sampleRate, options: options)
        var f0: [Double] = []
        var start = 0
        while start < signal.count {
            let end = min(signal.count, start + chunk)
            f0 += dio.push(Array(signal[start..<end]))
            start = end
        }
        return f0 + dio.finish()
    }

    @Test(arguments: [1, 17, 4096])
    func chunkingDoesNotChangeTheContour(chunk: Int) {
        let input = signal()
        #expect(stream(input, chunk: chunk) == stream(input, chunk: input.count))
    }

    @Test func givesWorldsFrameCountAndFindsTheVowels() {
        let input = signal()
        let f0 = stream(input, chunk: 1000)
        #expect(f0.count == F0Contour.frameCount(samples: input.count, sampleRate: sampleRate, framePeriod: 5))
        // Frames 50 ms inside each vowel.
        for frame in 30...110 {
            #expect(abs(f0[frame] - 140) < 1.4, "frame \(frame): \(f0[frame]) Hz")
        }
        for frame in 150...210 {
            #expect(abs(f0[frame] - 220) < 2.2, "frame \(frame): \(f0[frame]) Hz")
        }
        #expect(f0[0..<15].allSatisfy { $0 == 0 })
    }

    @Test func equalsWholeSignalDioWhenTheLookAheadSpansTheSignal() {
        // Whole-signal DIO subtracts the mean, which a stream cannot know; here it is zero up to rounding.
        let noisy = zip(signal(), Signals.whiteNoise(count: signal().count, amplitude: 0.001)).map(+)
        let mean = noisy.reduce(0, +) / Double(noisy.count)
        let input = noisy.map { $0 - mean }
        var options = StreamingDio.Options()
        options.lookAhead = 10_000
        let streamed = stream(input, chunk: 4096, options: options)
        let whole = Dio(sampleRate: sampleRate).estimate(input).f0
        #expect(streamed.count == whole.count)
        for (frame, (a, b)) in zip(streamed, whole).enumerated() {
            #expect((a > 0) == (b > 0), "frame \(frame)")
            #expect(abs(a - b) <= 1e-9 * b, "frame \(frame): \(a) vs \(b) Hz")
        }
    }

    @Test func handsOutEachFrameWithinItsLatency() {
        let input = signal()
        let dio = StreamingDio(sampleRate: sampleRate)
        let samplesPerFrame = 5.0 * Double(sampleRate) / 1000
        var handedOut = 0
        for (index, sample) in input.enumerated() {
            handedOut += dio.push([sample]).count
            let due = Int((Double(index + 1 - dio.latency) / samplesPerFrame).rounded(.down)) + 1
            #expect(handedOut >= due, "after \(index + 1) samples")
        }
        #expect(dio.latency < sampleRate / 10 + sampleRate / 100)
    }

    @Test func holdsBoundedStateOnALongStream() {
        let dio = StreamingDio(sampleRate: sampleRate)
        let chunk = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.25)
            + Signals.whiteNoise(count: sampleRate / 4, amplitude: 0.05)
        var largest = (samples: 0, intervals: 0)
        var frames = 0
        for _ in 0..<40 {
            frames += dio.push(chunk).count
            largest = (max(largest.samples, dio.heldState.samples), max(largest.intervals, dio.heldState.intervals))
        }
        #expect(frames > 1900)
        #expect(largest.samples < 3 * chunk.count)
        #expect(largest.intervals < 7 * 4 * 2 * 600)
    }

    @Test(arguments: [8000, 192_000])
    func neverTrapsOnEdgeSignals(sampleRate: Int) {
        let length = SignalRequirements.minimumLength(sampleRate: sampleRate, f0Floor: 71)
        let signals = Signals.edgeCases(count: length, sampleRate: sampleRate)
        for signal in signals {
            let f0 = stream(signal, chunk: 999, sampleRate: sampleRate)
            #expect(f0.count == F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: 5))
            #expect(f0.allSatisfy { $0.isFinite && $0 >= 0 })
        }
    }
}
