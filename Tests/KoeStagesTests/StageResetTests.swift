import KoeStages
import KoeWorld
import Testing
import TestSupport

/// `reset` forgets the stream and keeps the settings: a stage reset in the middle of a stream, a glide under way,
/// then gives a new stream exactly what a stage just made with those settings gives.
@Suite struct StageResetTests {
    private let sampleRate = 16000
    private let first = Signals.vowel(f0: 130, sampleRate: 16000, duration: 0.3)
    private let second = Signals.vowel(f0: 180, sampleRate: 16000, duration: 0.4) + Signals.whiteNoise(count: 1500, amplitude: 1.5)

    /// The second stream through `stage`, in blocks of 333 samples, then its end.
    private func stream(_ stage: any Stage, _ input: [Double], feed: ((ArraySlice<Double>) -> Void)? = nil) throws -> [Double] {
        var output: [Double] = []
        for start in stride(from: 0, to: input.count, by: 333) {
            let block = input[start..<min(input.count, start + 333)]
            feed?(block)
            try stage.process(Array(block), into: &output)
        }
        try stage.finish(into: &output)
        return output
    }

    /// Half of the first stream, `change` made, a few more samples (the change is under way), then `reset`.
    private func interrupted<S: Stage>(_ stage: S, change: (S) throws -> Void, feed: ((ArraySlice<Double>) -> Void)? = nil) throws -> S {
        let half = first.count / 2
        feed?(first[..<half])
        _ = try stage.process(Array(first[..<half]))
        try change(stage)
        feed?(first[half..<(half + 100)])
        _ = try stage.process(Array(first[half..<(half + 100)]))
        stage.reset()
        return stage
    }

    @Test func gain() throws {
        let reset = try interrupted(Gain(decibels: 2, glideSamples: 800)) { try $0.set(decibels: -7) }
        #expect(try stream(reset, second) == stream(Gain(decibels: -7, glideSamples: 800), second))
    }

    @Test func equalizer() throws {
        let before = [EqualizerBand(kind: .peak, frequency: 800, gainDB: 6, q: 1), EqualizerBand(kind: .highpass, frequency: 90)]
        let after = [EqualizerBand(kind: .lowshelf, frequency: 200, gainDB: -4)]
        let reset = try interrupted(Equalizer(bands: before, sampleRate: sampleRate, glideSamples: 800)) { try $0.set(bands: after) }
        #expect(try stream(reset, second) == stream(Equalizer(bands: after, sampleRate: sampleRate, glideSamples: 800), second))
    }

    @Test func limiter() throws {
        let loud = first.map { $0 * 8 }
        let limiter = try Limiter(sampleRate: sampleRate, ceiling: 0.5)
        _ = try limiter.process(loud)
        limiter.reset()
        #expect(try stream(limiter, second) == stream(Limiter(sampleRate: sampleRate, ceiling: 0.5), second))
    }

    @Test(arguments: [false, true])
    func dryWetMix(toWet: Bool) throws {
        let mix = DryWetMix(wet: !toWet, glideSamples: 800)
        let feedMix = { (block: ArraySlice<Double>) in block.withUnsafeBufferPointer { mix.feedDry($0) } }
        let reset = try interrupted(mix, change: { $0.set(wet: toWet) }, feed: feedMix)
        let fresh = DryWetMix(wet: toWet, glideSamples: 800)
        let wet = second.map { -$0 }
        #expect(
            try stream(reset, wet, feed: { block in block.withUnsafeBufferPointer { mix.feedDry($0) } })
                == stream(fresh, wet, feed: { block in block.withUnsafeBufferPointer { fresh.feedDry($0) } }))
    }

    @Test(arguments: [1, 2])
    func voiceShift(threads: Int) throws {
        var before = VoiceSettings()
        before.pitch = 0.8
        var after = VoiceSettings()
        after.pitch = 1.3
        after.formant = 1.1
        let reset = try interrupted(VoiceShift(sampleRate: sampleRate, voice: before, threads: threads)) { $0.update(after) }
        let fresh = try VoiceShift(sampleRate: sampleRate, voice: after, threads: threads)
        #expect(try stream(reset, second) == stream(fresh, second))
        #expect(reset.medianInputF0 == fresh.medianInputF0 && reset.medianOutputF0 == fresh.medianOutputF0)
    }
}
