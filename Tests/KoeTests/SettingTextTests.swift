import Koe
import Testing

@Suite struct SettingTextTests {
    @Test func setsEachKindFromText() throws {
        var settings = ConversionSettings()
        let given = [
            ("preset", "kawaii"), ("pitch-median", "210"), ("formant", "1.1"), ("whisper", "true"), ("no_limit", "1"),
            ("snap", "A:minor"), ("snap_strength", "0.5"), ("vibrato", "5.5:40"), ("eq", "peak:1000:6"),
            ("geq", "1,1,1,1,1,1,1,1,1,1"), ("f0_method", "harvest"), ("threads", "2"),
        ]
        for (name, text) in given { try settings.set(name, to: text) }
        #expect(settings.voice.pitch == Preset.named("kawaii")?.voice.pitch)
        #expect(settings.voice.pitchMedian == 210 && settings.voice.formant == 1.1 && settings.voice.whisper)
        #expect(!settings.limitsOutput)
        #expect(settings.voice.snap == PitchSnap.Options(scale: try MusicalScale(parsing: "A:minor"), strength: 0.5))
        #expect(settings.voice.vibrato == Vibrato.Options(rate: 5.5, depth: 40))
        #expect(settings.equalizer.count == 1 + 10)
        #expect(settings.analysis.f0Method == .harvest && settings.threads == 2)
    }

    @Test func refusesWhatTheTableRefuses() {
        var settings = ConversionSettings()
        #expect(throws: KoeError.invalidArgument("formant must be between 0.0625 and 16 (got 64)")) { try settings.set("formant", to: "64") }
        #expect(throws: KoeError.invalidArgument("gain must be a number (got 'loud')")) { try settings.set("gain", to: "loud") }
        #expect(throws: KoeError.invalidArgument("live must be true or false (got 'yes')")) { try settings.set("live", to: "yes") }
        #expect(throws: KoeError.invalidArgument("chunk_size must be a whole number between 1 and 1048576 frames (got 2.5)")) {
            try settings.set("chunk_size", to: "2.5")
        }
        #expect(throws: KoeError.invalidArgument("snap_speed tunes snap: give snap too")) { try settings.set("snap_speed", to: "10") }
        #expect(throws: KoeError.self) { try settings.set("pich", to: "1.2") }
        #expect(settings.voice == VoiceSettings() && settings.gainDB == 0, "a refused value changes nothing")
    }
}
