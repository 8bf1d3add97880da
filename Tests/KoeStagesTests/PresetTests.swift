import KoeStages
import Testing

@Suite struct PresetTests {
    @Test func namesAreUniqueAndFoundIgnoringCase() {
        let names = Preset.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Preset.named("KAWAII")?.name == "kawaii")
        #expect(Preset.named("nonsense") == nil)
    }

    @Test func everyPresetChangesTheVoice() {
        for preset in Preset.all {
            #expect(!preset.voice.isIdentity, "\(preset.name) leaves the voice unchanged")
        }
    }

    @Test func theIssuesVoicesArePresent() {
        for name in ["kawaii", "deep", "child", "giant", "robot", "whisper"] {
            #expect(Preset.named(name) != nil)
        }
        #expect(Preset.named("robot")?.voice.pitchRange == 0)
        #expect(Preset.named("whisper")?.voice.whisper == true)
    }

    @Test func bandsTheRateCannotHoldAreLeftOut() throws {
        let kawaii = try #require(Preset.named("kawaii"))
        #expect(kawaii.bands(sampleRate: 16000) == kawaii.bands)
        #expect(kawaii.bands(sampleRate: 10000).isEmpty)
        #expect(kawaii.bands(sampleRate: 8000).isEmpty)
    }
}
