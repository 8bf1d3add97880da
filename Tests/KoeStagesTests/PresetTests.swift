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

    // MARK: targets

    private func voice(_ median: Double, _ length: Double) -> SpeakerProfile {
        SpeakerProfile(f0Median: median, f0Spread: 4, vocalTractLength: length, voicedSeconds: 3)
    }

    @Test func voicePresetsAimAndEffectsDoNot() {
        for name in ["female", "male", "kawaii", "child", "deep", "giant"] {
            #expect(Preset.named(name)?.target != nil, "\(name) has no target")
        }
        for name in ["chipmunk", "robot", "whisper"] {
            #expect(Preset.named(name)?.target == nil, "\(name) is an effect")
            #expect(Preset.named(name)?.aim(for: voice(120, 17)) == nil)
        }
        #expect(Preset.named("female")?.target?.f0Median == 210 && Preset.named("male")?.target?.f0Median == 120)
    }

    @Test func theRatiosMoveTheSpeakerToTheTarget() throws {
        let female = try #require(Preset.named("female")?.target)
        let aim = try #require(Preset.named("female")?.aim(for: voice(100, 17)))
        #expect(abs(aim.pitch - female.f0Median / 100) < 1e-12)
        #expect(abs(aim.formant - 17 / female.vocalTractLength) < 1e-12)
        #expect(!aim.clamped)
        // The same preset asks less of a voice nearer its target: the output lands on the target either way.
        let higher = try #require(Preset.named("female")?.aim(for: voice(200, 15)))
        #expect(abs(100 * aim.pitch - 200 * higher.pitch) < 1e-9 && higher.formant < aim.formant)
        let male = try #require(Preset.named("male")?.aim(for: voice(220, 14.5)))
        #expect(male.pitch < 0.6 && male.formant < 1)
    }

    @Test func boundsBiteAndSaySo() throws {
        // 300 Hz from a voice at 60 Hz would be 5 times: clamped to 4.
        let kawaii = try #require(Preset.named("kawaii")?.aim(for: voice(60, 17)))
        #expect(kawaii.pitch == 4 && kawaii.pitchClamped && kawaii.wantedPitch == 5 && kawaii.clamped)
        // A giant's 22 cm tract from a 14.5 cm one is beyond the formant bound; from 17 cm (0.77) within it.
        #expect(Preset.named("giant")?.aim(for: voice(120, 17))?.formantClamped == false)
        let giant = try #require(Preset.named("giant")?.aim(for: voice(120, 14.5)))
        #expect(giant.formant == 0.75 && giant.formantClamped && !giant.pitchClamped)
        let male = try #require(Preset.named("male")?.aim(for: voice(600, 14.5)))
        #expect(male.pitch == 0.4 && male.pitchClamped)
    }

    @Test func aTractBeyondTheAdultSpanCountsAsItsEdgeAndNoneAsThePresetsRatio() throws {
        let female = try #require(Preset.named("female"))
        let long = try #require(female.aim(for: voice(120, 21)))
        #expect(abs(long.formant - 18 / 14.5) < 1e-12)
        let unknown = try #require(female.aim(for: voice(120, .nan)))
        #expect(unknown.formant == female.voice.formant)
    }

    /// A voice the vocoder reads an octave up (its fundamental filtered out) is aimed from the vocoder's F0, which
    /// the ratio multiplies; within the octave the profile's median decides.
    @Test func aVocoderAnOctaveOffDecidesThePitchRatio() throws {
        let female = try #require(Preset.named("female"))
        let octaveUp = try #require(female.aim(for: voice(110, 17), vocoderMedian: 262))
        #expect(abs(octaveUp.pitch - 210.0 / 262) < 1e-12)
        let near = try #require(female.aim(for: voice(110, 17), vocoderMedian: 131))
        #expect(abs(near.pitch - 210.0 / 110) < 1e-12)
    }
}
