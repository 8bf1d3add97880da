import Foundation
import Testing
import TestSupport
@testable import KoeWorld

@Suite struct StreamingDioTests {
    private let sampleRate = 16000

    /// Two vowels and a pause, with silence at both ends, over a quiet room's noise (-100 dBFS): in digital
    /// silence what DIO finds near a vowel's onset is decided by how the FFT rounds (a plan of another CPU voices
    /// other frames), in noise by the signal.
    private func signal() -> [Double] {
        let pause = [Double](repeating: 0, count: 1600)
        let voices = pause + Signals.vowel(f0: 140, sampleRate: sampleRate, duration: 0.5) + pause
            + Signals.vowel(f0: 220, sampleRate: sampleRate, duration: 0.4) + pause
        return zip(voices, Signals.whiteNoise(count: voices.count, amplitude: 1e-5)).map { $0 + $1 }
    }

    private func stream(
        _ signal: [Double], chunk: Int, sampleRate: Int = 16000, options: StreamingDio.Options = .init()
    ) -> [Double] {
        StreamingDio(sampleRate: sampleRate, options: options).f0(streaming: signal, chunk: chunk)
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

    @Test(arguments: [false, true])
    func holdsBoundedStateOnALongStream(live: Bool) {
        let dio = StreamingDio(sampleRate: sampleRate, options: live ? self.live() : .init())
        let chunk = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.25)
            + Signals.whiteNoise(count: sampleRate / 4, amplitude: 0.05)
        var largest = (samples: 0, intervals: 0)
        var frames = 0
        for _ in 0..<40 {
            frames += dio.push(chunk).count
            largest = (max(largest.samples, dio.heldState.samples), max(largest.intervals, dio.heldState.intervals))
        }
        #expect(frames > (live ? 1990 : 1900))
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

    // MARK: Live mode

    private func live(lookAhead: Double? = nil, blockLength: Int? = nil) -> StreamingDio.Options {
        var options = StreamingDio.Options()
        options.live = true
        if let lookAhead {
            options.lookAhead = lookAhead
        }
        options.blockLength = blockLength
        return options
    }

    @Test func liveModeDefaultsToItsLookAheadAndFiveMillisecondBlocks() {
        #expect(StreamingDio.Options().lookAhead == 80)
        #expect(StreamingDio(sampleRate: 48000).blockLength == 960)
        #expect(live().lookAhead == StreamingDio.Options.liveLookAhead)
        let dio = StreamingDio(sampleRate: 48000, options: live())
        #expect(dio.blockLength == 240)
        #expect(dio.latency == Int(StreamingDio.Options.liveLookAhead * 48) + 240 + 1)
    }

    @Test(arguments: [1, 17, 4096])
    func liveChunkingDoesNotChangeTheContour(chunk: Int) {
        let input = signal()
        for lookAhead in [0.0, 30] {
            let options = live(lookAhead: lookAhead)
            #expect(stream(input, chunk: chunk, options: options) == stream(input, chunk: input.count, options: options))
        }
    }

    /// Once `latency` samples past a frame's centre have arrived the frame is out, and not before its
    /// look-ahead has: the frames handed out are exactly those whose look-ahead a completed block reached.
    @Test(arguments: [0.0, 10, 30])
    func liveHandsOutEachFrameWithinItsLatency(lookAhead: Double) {
        let input = signal()
        let dio = StreamingDio(sampleRate: sampleRate, options: live(lookAhead: lookAhead))
        let samplesPerFrame = 5.0 * Double(sampleRate) / 1000
        let lookAheadSamples = Int((lookAhead * Double(sampleRate) / 1000).rounded(.up))
        #expect(dio.latency == lookAheadSamples + dio.blockLength + 1)
        var handedOut = 0
        for (index, sample) in input.enumerated() {
            handedOut += dio.push([sample]).count
            let arrived = index + 1
            let due = Int((Double(arrived - dio.latency) / samplesPerFrame).rounded(.down)) + 1
            #expect(handedOut >= due, "after \(arrived) samples")
            let blocksDone = arrived / dio.blockLength * dio.blockLength
            let revealed = blocksDone - 1 - lookAheadSamples
            let possible = revealed < 0 ? 0 : Int((Double(revealed) / samplesPerFrame + 0.5).rounded(.down)) + 1
            #expect(handedOut <= possible, "after \(arrived) samples")
        }
        #expect(handedOut + dio.finish().count
                == F0Contour.frameCount(samples: input.count, sampleRate: sampleRate, framePeriod: 5))
    }

    /// On two vowels and pauses the live contour voices the frames whole-signal DIO voices, at its F0.
    @Test(arguments: [16000, 48000])
    func liveAgreesWithWholeSignalDioOnAVoicedSignal(sampleRate: Int) throws {
        let pause = [Double](repeating: 0, count: sampleRate / 10)
        let input = pause + Signals.vowel(f0: 140, sampleRate: sampleRate, duration: 0.5) + pause
            + Signals.vowel(f0: 220, sampleRate: sampleRate, duration: 0.4) + pause
        let whole = try Dio(sampleRate: sampleRate).estimate(input).f0
        let streamed = stream(input, chunk: 512, sampleRate: sampleRate, options: live())
        #expect(streamed.count == whole.count)
        let agreeing = zip(streamed, whole).filter { ($0 > 0) == ($1 > 0) }.count
        #expect(Double(agreeing) >= 0.97 * Double(whole.count), "\(agreeing) of \(whole.count) frames")
        // Within 1 % but for a frame or two at the vowels' ends, where whole-signal DIO's bands see the decay.
        let jointlyVoiced = zip(streamed, whole).filter { $0 > 0 && $1 > 0 }
        let close = jointlyVoiced.filter { abs($0 - $1) <= 0.01 * $1 }.count
        #expect(close >= jointlyVoiced.count - 2, "\(close) of \(jointlyVoiced.count) jointly voiced frames")
        for frame in 30...110 {
            #expect(abs(streamed[frame] - 140) < 1.4, "frame \(frame): \(streamed[frame]) Hz")
        }
        for frame in 150...210 {
            #expect(abs(streamed[frame] - 220) < 2.2, "frame \(frame): \(streamed[frame]) Hz")
        }
    }

    @Test(arguments: [8000, 192_000])
    func liveNeverTrapsOnEdgeSignalsOrOptions(sampleRate: Int) {
        let length = SignalRequirements.minimumLength(sampleRate: sampleRate, f0Floor: 71)
        let signals = Signals.edgeCases(count: length, sampleRate: sampleRate)
        // One-sample blocks at 8 kHz only: at 192 kHz each block's FFTs are long.
        let shortest = sampleRate <= 8000 ? 1 : 97
        let options = [live(), live(lookAhead: 0, blockLength: shortest), live(lookAhead: -5), live(lookAhead: .nan),
                       live(lookAhead: .infinity, blockLength: 100_000), live(lookAhead: 1000, blockLength: shortest - 1)]
        for signal in signals {
            for option in options {
                let f0 = stream(signal, chunk: 999, sampleRate: sampleRate, options: option)
                #expect(f0.count == F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: 5))
                #expect(f0.allSatisfy { $0.isFinite && $0 >= 0 })
            }
        }
    }
}
