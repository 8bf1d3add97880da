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

    @Test func equalsWholeSignalDioWhenTheLookAheadSpansTheSignal() throws {
        // An offset, which whole-signal DIO subtracts as the signal's mean and the stream as its opening's.
        let input = zip(signal(), Signals.whiteNoise(count: signal().count, amplitude: 0.001)).map { $0 + $1 + 0.1 }
        var options = StreamingDio.Options()
        options.lookAhead = 10_000
        let streamed = stream(input, chunk: 4096, options: options)
        let whole = try Dio(sampleRate: sampleRate).estimate(input).f0
        #expect(streamed.count == whole.count)
        for (frame, (a, b)) in zip(streamed, whole).enumerated() {
            #expect((a > 0) == (b > 0), "frame \(frame)")
            #expect(abs(a - b) <= 1e-9 * b, "frame \(frame): \(a) vs \(b) Hz")
        }
    }

    /// A voice from the first sample on, over a steady offset: the stream subtracts its opening's mean, so the
    /// frames within the low-cut's reach of the start agree with whole-signal DIO's, as the rest do.
    @Test func steadyOffsetLeavesTheFirstFramesAsWholeSignalDioHasThem() throws {
        let voice = Signals.vowel(f0: 180, sampleRate: sampleRate, duration: 0.6)
        let input = voice.map { $0 + 0.2 }
        let streamed = stream(input, chunk: 256)
        let whole = try Dio(sampleRate: sampleRate).estimate(input).f0
        for frame in 0..<20 {
            #expect((streamed[frame] > 0) == (whole[frame] > 0), "frame \(frame)")
            #expect(abs(streamed[frame] - whole[frame]) <= 1e-3 * whole[frame], "frame \(frame): \(streamed[frame]) vs \(whole[frame]) Hz")
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
