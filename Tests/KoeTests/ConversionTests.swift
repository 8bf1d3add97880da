import Foundation
import Koe
@testable import KoeIO
import Testing
import TestSupport

/// `convert` with the limiter and the F0 edits that need the whole file: what reaches the output file.
@Suite struct ConversionTests {
    let folder = TemporaryFolder()

    private func writeAudio(_ samples: [Double], sampleRate: Int = 16000, to name: String) throws -> String {
        let file = try AudioFile(writing: folder.file(name), sampleRate: sampleRate, channels: 1)
        try file.write(channels: [samples])
        try file.close()
        return folder.file(name)
    }

    private func pitched(_ ratio: Double) -> ConversionSettings {
        var settings = ConversionSettings()
        settings.voice.pitch = ratio
        return settings
    }

    /// A stream converts as a file does: read in pieces of any size, it gives the file's bytes, and written piece
    /// by piece at a 16-bit file's full scale, the samples that file holds.
    @Test func aStreamConvertsAsAFileDoes() throws {
        let samples = Signals.vowel(f0: 140, sampleRate: 16000, duration: 0.6)
        let input = try writeAudio(samples, to: "vowel.wav")
        let reference = try convert(.file(input), to: .file(folder.file("file.wav")), settings: pitched(1.3))
        let fileSamples = try AudioFile(reading: input).readInterleaved(maxFrames: samples.count)
        var position = 0
        let streamed = ConversionInput.stream(name: "test stream", sampleRate: 16000, channels: 1, read: { maxFrames in
            guard position < fileSamples.count else { return nil }
            let piece = Array(fileSamples[position..<min(position + min(maxFrames, 777), fileSamples.count)])
            position += piece.count
            return piece
        })
        var settings = pitched(1.3)
        settings.chunkFrames = 1000
        let statistics = try convert(streamed, to: .file(folder.file("stream.wav")), settings: settings)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("stream.wav"))) == Data(contentsOf: URL(fileURLWithPath: folder.file("file.wav"))))
        #expect(statistics.outputSeconds == reference.outputSeconds)

        var written: [Double] = []
        _ = try convert(.file(input), to: .stream(fullScale: 32767.0 / 32768) { piece in
            written += piece
            return 0
        }, settings: pitched(1.3))
        _ = try writeAudio(written, to: "written.wav")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.file("written.wav"))) == Data(contentsOf: URL(fileURLWithPath: folder.file("file.wav"))))
    }

    @Test func aStreamsErrorsNameIt() throws {
        let empty = ConversionInput.stream(name: "test stream", sampleRate: 16000, channels: 1, read: { _ in nil })
        #expect(throws: KoeError.self) { try convert(empty, to: .file(folder.file("out.wav"))) }
        #expect(!FileManager.default.fileExists(atPath: folder.file("out.wav")), "a refused stream leaves no file")
        let failing = ConversionInput.stream(name: "test stream", sampleRate: 16000, channels: 1, read: { _ in [.nan] })
        do {
            _ = try convert(failing, to: .file(folder.file("out.wav")), settings: pitched(1.2))
            Issue.record("a NaN sample converted")
        } catch {
            #expect(error.description.contains("test stream"), "\(error)")
        }
    }

    /// The issue's example: a -0.5 dBFS 150 Hz tone through pitch 1.2 clips half its samples unlimited.
    @Test func theLimiterLeavesNothingToClip() throws {
        let tone = try writeAudio(Signals.sine(frequency: 150, sampleRate: 16000, duration: 1, amplitude: pow(10, -0.5 / 20)), to: "tone.wav")
        var unlimited = pitched(1.2)
        unlimited.limitsOutput = false
        let clipped = try convert(.file(tone), to: .file(folder.file("clipped.wav")), settings: unlimited)
        let limited = try convert(.file(tone), to: .file(folder.file("limited.wav")), settings: pitched(1.2))
        #expect(clipped.clippedSamples > 1000)
        #expect(limited.clippedSamples == 0)
        #expect(limited.latencyBoundMilliseconds - clipped.latencyBoundMilliseconds == 5)
        let output = try AudioFile(reading: folder.file("limited.wav")).readChannel(0)
        #expect(output.count == 16000)
        #expect(output.map(abs).max()! > 0.99, "limited to full scale, not far below it")
    }

    @Test func aSignalWithHeadroomIsTheSameWithAndWithoutTheLimiter() throws {
        let vowel = try writeAudio(Signals.vowel(f0: 140, sampleRate: 16000, duration: 0.6), to: "vowel.wav")
        var unlimited = pitched(1.3)
        unlimited.limitsOutput = false
        _ = try convert(.file(vowel), to: .file(folder.file("a.wav")), settings: pitched(1.3))
        _ = try convert(.file(vowel), to: .file(folder.file("b.wav")), settings: unlimited)
        let same = try AudioFile(reading: folder.file("a.wav")).readChannel(0) == AudioFile(reading: folder.file("b.wav")).readChannel(0)
        #expect(same)
    }

    @Test func aCopyHasNoLimiter() throws {
        let loud = try writeAudio(Signals.whiteNoise(count: 4000, amplitude: 1, seed: 4), to: "loud.wav")
        let statistics = try convert(.file(loud), to: .file(folder.file("copy.wav")))
        #expect(statistics.latencyBoundMilliseconds == 0)
        let same = try AudioFile(reading: loud).readChannel(0) == AudioFile(reading: folder.file("copy.wav")).readChannel(0)
        #expect(same)
    }

    @Test func anF0TrackMustHaveOneValueAFrame() throws {
        let vowel = try writeAudio(Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.5), to: "vowel.wav")
        var settings = ConversionSettings()
        settings.voice.f0Track = try F0Track(values: [Double](repeating: 200, count: 100), name: "f0.npy")
        #expect(throws: KoeError.badInput(source: "f0.npy", reason:
            "has 100 F0 values but \(vowel) has 101 analysis frames (8000 samples at 16000 Hz, one frame every 5.0 ms from 0)")) {
            try convert(.file(vowel), to: .file(folder.file("out.wav")), settings: settings)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.file("out.wav")))
        settings.voice.f0Track = try F0Track(values: [Double](repeating: 200, count: 101))
        let statistics = try convert(.file(vowel), to: .file(folder.file("out.wav")), settings: settings)
        let median = try #require(statistics.medianF0Out)
        #expect(abs(1200 * log2(median / 200)) < 1, "the median is kept to a cent: \(median) Hz")
    }

    @Test func settingsOutOfRangeAreRefused() throws {
        let vowel = try writeAudio(Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.5), to: "vowel.wav")
        var settings = ConversionSettings()
        settings.gainDB = 200
        #expect(throws: KoeError.invalidArgument("gain must be between -60 and 60 dB (got 200)")) {
            try convert(.file(vowel), to: .file(folder.file("out.wav")), settings: settings)
        }
        settings.gainDB = 0
        settings.voice.formant = 64
        #expect(throws: KoeError.invalidArgument("formant must be between 0.0625 and 16 (got 64)")) {
            try convert(.file(vowel), to: .file(folder.file("out.wav")), settings: settings)
        }
        settings.voice.formant = 1
        settings.voice.snap = PitchSnap.Options(strength: 2)
        #expect(throws: KoeError.invalidArgument("snap strength must be between 0 and 1 (got 2)")) {
            try convert(.file(vowel), to: .file(folder.file("out.wav")), settings: settings)
        }
        settings.voice.snap = nil
        settings.voice.vibrato = Vibrato.Options(rate: 50)
        #expect(throws: KoeError.invalidArgument("vibrato rate must be between 0 and 20 Hz (got 50)")) {
            try convert(.file(vowel), to: .file(folder.file("out.wav")), settings: settings)
        }
    }

    /// The library equals the CLI: a `VoiceChanger` fed 480-frame Float blocks gives, once its latency is
    /// trimmed, the very samples a conversion of the same audio writes to a float file, live and not.
    @Test(arguments: [false, true])
    func aVoiceChangerEqualsTheConversionOfAFile(live: Bool) throws {
        let sampleRate = 48000
        let speech = Signals.speechLike(sampleRate: sampleRate).map { Double(Float($0)) }
        let input = folder.file("speech.wav")
        let file = try AudioFile(writing: input, sampleRate: sampleRate, channels: 1, encoding: .float32)
        try file.write(channels: [speech])
        try file.close()
        var settings = pitched(1.2)
        settings.voice.formant = 1.1
        settings.analysis.live = live
        _ = try convert(.file(input), to: .file(folder.file("converted.wav")), settings: settings)
        let converted = try AudioFile(reading: folder.file("converted.wav")).readChannel(0)

        var options = VoiceChanger.Options()
        options.analysis.live = live
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1, options: options)
        changer.voice.pitch = 1.2
        changer.voice.formant = 1.1
        var changed: [Float] = []
        for start in stride(from: 0, to: speech.count, by: 480) {
            changed += try changer.process([speech[start..<min(speech.count, start + 480)].map(Float.init)])[0]
        }
        changed += try changer.finish()[0]
        #expect(changed.count == speech.count + changer.latency)
        let trimmed = changed.dropFirst(changer.latency).map(Double.init)
        let equal = trimmed == converted
        #expect(equal, "largest difference \(largestDifference(trimmed, converted))")
    }

    // MARK: presets that aim at a voice

    /// A steady vowel from a 17 cm tube at `f0`, 1.5 s.
    private func voice(f0: Double, to name: String) throws -> String {
        let formants = (1...4).map { Double(2 * $0 - 1) * 35_000 / (4 * 17.0) }
        return try writeAudio(Signals.vowel(f0: f0, sampleRate: 16000, duration: 1.5, formants: formants), to: name)
    }

    @Test func aVoicePresetAimsAFilesVoiceAtItsTarget() throws {
        let female = try #require(Preset.named("female")?.target)
        for f0 in [100.0, 180] {
            let input = try voice(f0: f0, to: "voice.wav")
            var settings = ConversionSettings()
            try settings.apply(preset: "female")
            let statistics = try convert(.file(input), to: .file(folder.file("out.wav")), settings: settings)
            let profile = try #require(statistics.profile)
            #expect(abs(profile.f0Median / f0 - 1) < 0.01)
            #expect(abs(statistics.pitchRatio - female.f0Median / profile.f0Median) < 1e-12)
            #expect(abs(statistics.formantRatio - profile.vocalTractLength / female.vocalTractLength) < 1e-12)
            #expect(statistics.aim?.clamped == false)
            let out = try #require(statistics.medianF0Out)
            #expect(abs(out / female.f0Median - 1) < 0.03, "\(f0) Hz in, \(out) Hz out")
        }
    }

    @Test func explicitRatiosStayRatios() throws {
        let input = try voice(f0: 110, to: "voice.wav")
        var settings = ConversionSettings()
        try settings.apply(preset: "kawaii")
        settings.voice.pitch = 1.3
        var statistics = try convert(.file(input), to: .file(folder.file("out.wav")), settings: settings)
        #expect(statistics.pitchRatio == 1.3 && statistics.formantRatio != Preset.named("kawaii")?.voice.formant)

        var text = ConversionSettings()
        try text.set("preset", to: "kawaii")
        try text.set("formant", to: "1.1")
        try text.set("pitch", to: "1.6")  // the preset's own ratio, asked for explicitly
        statistics = try convert(.file(input), to: .file(folder.file("out.wav")), settings: text)
        #expect(statistics.pitchRatio == 1.6 && statistics.formantRatio == 1.1 && statistics.aim == nil)
    }

    /// Speech-like: vowels of 0.6 s at about `f0` from a 17 cm tract, 0.3 s of silence after each.
    private func phrases(f0: Double, sampleRate: Int = 16000, parts: Int, seconds: Double = 0.6) -> [Double] {
        let formants = (1...4).map { Double(2 * $0 - 1) * 35_000 / (4 * 17.0) }
        let silence = [Double](repeating: 0, count: sampleRate * 3 / 10)
        return (0..<parts).flatMap { (part: Int) -> [Double] in
            Signals.vowel(f0: f0 * (1 + 0.02 * Double(part % 3)), sampleRate: sampleRate, duration: seconds, formants: formants) + silence
        }
    }

    private func stream(_ samples: [Double], sampleRate: Int = 16000) -> ConversionInput {
        var position = 0
        return .stream(name: "stream", sampleRate: sampleRate, channels: 1) { maxFrames in
            guard position < samples.count else { return nil }
            defer { position += maxFrames }
            return Array(samples[position..<min(samples.count, position + maxFrames)])
        }
    }

    /// A stream cannot be measured first: its voice aims from the profile estimated as it runs, which reaches the
    /// target's ratio by the end; with less than 0.5 s of voice in it, or in a file without a voice, the preset's
    /// typical ratios hold.
    @Test func aStreamAimsFromTheProfileItEstimates() throws {
        let female = try #require(Preset.named("female"))
        var settings = ConversionSettings()
        try settings.apply(preset: "female")
        var statistics = try convert(stream(phrases(f0: 110, parts: 4)), to: .file(folder.file("out.wav")), settings: settings)
        let profile = try #require(statistics.profile)
        #expect(abs(profile.f0Median / 110 - 1) < 0.03, "\(profile.f0Median)")
        #expect(abs(statistics.pitchRatio - 210 / profile.f0Median) < 1e-9, "\(statistics.pitchRatio)")
        #expect(statistics.aim?.pitch == statistics.pitchRatio && statistics.aim?.clamped == false)

        statistics = try convert(stream(phrases(f0: 110, parts: 1, seconds: 0.3)), to: .file(folder.file("out.wav")), settings: settings)
        #expect(statistics.profile == nil && statistics.pitchRatio == female.voice.pitch && statistics.formantRatio == female.voice.formant)

        let silence = try writeAudio([Double](repeating: 0, count: 16000), to: "silence.wav")
        statistics = try convert(.file(silence), to: .file(folder.file("out.wav")), settings: settings)
        #expect(statistics.profile == nil && statistics.pitchRatio == female.voice.pitch)
    }

    /// A profile known before stands for the speaker's: a file is not measured, a stream aims from its start until
    /// it has heard enough voice to estimate its own.
    @Test func aKnownProfileStandsForTheSpeakers() throws {
        let known = SpeakerProfile(f0Median: 150, f0Spread: 3, vocalTractLength: 16, voicedSeconds: 8)
        var settings = ConversionSettings()
        try settings.apply(preset: "female")
        settings.speakerProfile = known
        let input = try writeAudio(phrases(f0: 110, parts: 1), to: "voice.wav")
        var statistics = try convert(.file(input), to: .file(folder.file("out.wav")), settings: settings)
        #expect(statistics.profile?.f0Median == 150 && statistics.pitchRatio == 210.0 / 150)
        statistics = try convert(stream(phrases(f0: 110, parts: 1, seconds: 0.3)), to: .file(folder.file("out.wav")), settings: settings)
        #expect(statistics.profile?.f0Median == 150 && statistics.pitchRatio == 210.0 / 150)
    }

    /// A live conversion plays a file as a stream would, its voice aiming from the profile it estimates: the same
    /// samples from a file and a pipe, whatever the chunking and the threads.
    @Test func aLiveConversionAimsAlikeWhateverTheChunkingAndThreads() throws {
        let input = try writeAudio(phrases(f0: 120, parts: 4), to: "voice.wav")
        let samples = try AudioFile(reading: input).readChannel(0)
        func converted(_ source: ConversionInput, chunk: Int, threads: Int, live: Bool = true) throws -> (statistics: ConversionStatistics, samples: [Double]) {
            var settings = ConversionSettings()
            try settings.apply(preset: "kawaii")
            settings.analysis.live = live
            settings.chunkFrames = chunk
            settings.threads = threads
            let statistics = try convert(source, to: .file(folder.file("out.wav")), settings: settings)
            return (statistics, try AudioFile(reading: folder.file("out.wav")).readChannel(0))
        }
        let reference = try converted(.file(input), chunk: 4096, threads: 1)
        #expect(reference.statistics.profile != nil && reference.statistics.pitchRatio > 2)
        for (chunk, threads) in [(17, 1), (1000, 3)] {
            #expect(try converted(.file(input), chunk: chunk, threads: threads).samples == reference.samples, "chunk \(chunk), threads \(threads)")
        }
        #expect(try converted(stream(samples), chunk: 777, threads: 2).samples == reference.samples, "a pipe")
        // A stream without --live aims as it runs too, on the worker threads alike.
        let plain = try converted(stream(samples), chunk: 4096, threads: 1, live: false)
        #expect(plain.statistics.profile != nil)
        #expect(try converted(stream(samples), chunk: 333, threads: 3, live: false).samples == plain.samples)
    }
}
