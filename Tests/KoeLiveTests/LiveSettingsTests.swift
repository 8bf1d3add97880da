import Glibc
import Koe
import KoeLive
import Testing

/// The one path that changes a running voice: `--set`'s lines, the arrow keys and the panel, checked by the
/// settings table and handed to the audio thread as a prepared change it takes between blocks.
@Suite struct LiveSettingsTests {
    private let sampleRate = 16000

    /// A live engine at 16 kHz with live analysis, and its settings from `settings`.
    private func voice(_ settings: ConversionSettings = ConversionSettings()) throws -> (LiveEngine, LiveSettings) {
        var options = VoiceChanger.Options()
        options.analysis.live = true
        let engine = LiveEngine(changer: try VoiceChanger(sampleRate: sampleRate, channels: 1, options: options))
        return (engine, try LiveSettings(engine: engine, settings: settings, graphicEQ: nil))
    }

    /// One block through the callback's work, which takes a change published since the last.
    private func block(_ engine: LiveEngine, frames: Int = 160) {
        let input = [Float](repeating: 0, count: frames)
        var output = [Float](repeating: 0, count: frames)
        input.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { engine.process(input.baseAddress, $0.baseAddress!, frames: frames, xrun: false) }
        }
    }

    @Test func aChangeReachesTheChangerAtTheNextBlock() throws {
        let (engine, settings) = try voice()
        try settings.set([("pitch", "1.5"), ("gain", "-6"), ("snap", "A:minor"), ("snap_strength", "0.5")])
        #expect(engine.changer.voice.pitch == 1, "nothing changes before the callback takes it")
        block(engine)
        #expect(engine.changer.voice.pitch == 1.5)
        #expect(engine.changer.gainDB == -6)
        #expect(engine.changer.voice.snap == PitchSnap.Options(scale: try MusicalScale(parsing: "A:minor"), strength: 0.5))
        #expect(settings.current.version == 1)
    }

    /// A refused change names the range and leaves everything as it was, the assignments before it in the same
    /// line too.
    @Test func aRefusedChangeChangesNothing() throws {
        let (engine, settings) = try voice()
        for (line, words) in [([("gain", "-6"), ("pitch", "99")], "pitch must be between 0.0625 and 16 (got 99)"),
                              ([("tempo", "1.2")], "tempo cannot change while koe live runs"),
                              ([("loudness", "3")], "'loudness=3' is not a setting koe live changes"),
                              ([("snap_speed", "20")], "snap_speed tunes snap: give snap too"),
                              ([("eq", "peak:9000:3")], "Nyquist"), ([("bypass", "maybe")], "bypass must be true or false")] {
            do {
                try settings.set(line)
                Issue.record("\(line) was taken")
            } catch {
                #expect(error.description.contains(words), "\(line): \(error)")
            }
        }
        block(engine)
        #expect(engine.changer.gainDB == 0 && settings.current.version == 0)
    }

    /// `eq` given again replaces the explicit bands with all those of the line; the graphic EQ stays apart from
    /// them; `off` unsets what is optional.
    @Test func bandsAndOptionalSettings() throws {
        let (engine, settings) = try voice()
        try settings.set([("eq", "peak:1000:6:1.4"), ("geq", "0,0,0,0,0,3,0,0,0,0"), ("eq", "lowshelf:120:3"), ("pitch_median", "180")])
        #expect(settings.current.value(of: "eq") == .text("peak:1000:6:1.4 lowshelf:120:3"))
        block(engine)
        #expect(engine.changer.equalizer.count == 3)
        try settings.set([("eq", "off"), ("pitch_median", "off")])
        block(engine)
        #expect(engine.changer.equalizer.map(\.frequency) == [1000], "the graphic EQ's 1 kHz band alone")
        #expect(settings.current.value(of: "pitch_median") == .off && engine.changer.voice.pitchMedian == nil)
    }

    /// Bypass hands the changer a voice that changes nothing, and the settings come back when it is off.
    @Test func bypassKeepsTheSettingsForLater() throws {
        var start = ConversionSettings()
        try start.set("pitch", to: "1.3")
        try start.set("eq", to: "peak:1000:6")
        let (engine, settings) = try voice(start)
        try settings.set([("bypass", "true")])
        block(engine)
        #expect(engine.changer.voice == VoiceSettings() && engine.changer.equalizer.isEmpty)
        #expect(settings.current.value(of: "pitch") == .number(1.3))
        try settings.set([("bypass", "false")])
        block(engine)
        #expect(engine.changer.voice.pitch == 1.3 && engine.changer.equalizer.count == 1)
    }

    /// A preset is a whole voice and keeps time live (giant's tempo is a file's).
    @Test func aPresetReplacesTheVoice() throws {
        let (engine, settings) = try voice()
        try settings.set([("vibrato_rate", "5"), ("preset", "giant")])
        block(engine)
        let giant = try #require(Preset.named("giant"))
        #expect(engine.changer.voice.pitch == giant.voice.pitch && engine.changer.voice.tempo == 1)
        #expect(engine.changer.voice.vibrato?.rate == 5, "set after the preset, in the table's order")
        #expect(settings.current.value(of: "preset") == .text("giant"))
    }

    /// A voice preset's ratios follow the speaker, so what is set is its target until a ratio is given; an effect
    /// and bypass aim at nothing.
    @Test func aVoicePresetIsDescribedByItsTarget() throws {
        let (_, settings) = try voice()
        var state = try settings.set([("preset", "female")])
        #expect(state.aims?.pitch == true && state.aims?.formant == true && state.aims?.f0MedianHz == 210)
        #expect(state.described("pitch") == "aim:210Hz" && state.described("formant") == "aim:14.5cm")
        state = try settings.set([("formant", "1.1")])
        #expect(state.aims?.pitch == true && state.aims?.formant == false)
        #expect(state.described("formant") == "1.1" && state.described("gain") == "0.0")
        state = try settings.set([("bypass", "true")])
        #expect(state.aims == nil && state.described("pitch") == "1.7")
        state = try settings.set([("bypass", "false"), ("preset", "chipmunk")])
        #expect(state.aims == nil && state.described("pitch") == "2.0")
    }

    /// Changes published faster than the callback runs: it takes the newest whole, and each change it took is
    /// freed on the publishing side.
    @Test func theCallbackTakesTheNewestChange() throws {
        let (engine, settings) = try voice()
        for pitch in [1.1, 1.2, 1.3] { try settings.set([("pitch", "\(pitch)")]) }
        block(engine)
        #expect(engine.changer.voice.pitch == 1.3)
        try settings.set([("pitch", "1.4")])
        try settings.set([("pitch", "1.5")])
        block(engine)
        #expect(engine.changer.voice.pitch == 1.5)
    }

    @Test func theArrowKeysMoveWithinTheRange() throws {
        let (engine, settings) = try voice()
        settings.nudge(pitch: 12)
        block(engine)
        #expect(abs(engine.changer.voice.pitch - 2) < 1e-12)
        settings.nudge(pitch: 12 * 10)
        #expect(settings.current.value(of: "pitch") == .number(16))
        settings.nudge(formant: -2)
        #expect(settings.current.value(of: "formant") == .number(pow(1.05, -2)))
    }
}

/// `koe live --set`'s words, checked before they are sent.
@Suite struct LiveControlTests {
    @Test func readsNamesWithDashesAndChecksNumbers() throws {
        let words = try LiveControl.parse("pitch=1.5 snap-strength=0.5 eq=peak:1000:6 bypass=true")
        #expect(words.map(\.name) == ["pitch", "snap_strength", "eq", "bypass"])
        for (line, said) in [("pitch=99", "pitch must be between 0.0625 and 16 (got 99)"), ("gain=loud", "gain must be a number"),
                             ("tempo=1.2", "'tempo=1.2' cannot change while koe live runs"), ("pitch", "'pitch' is not NAME=VALUE"),
                             ("", "nothing to set")] {
            #expect(throws: KoeError.self, "\(line)") { _ = try LiveControl.parse(line) }
            do { _ = try LiveControl.parse(line) } catch { #expect(error.description.contains(said), "\(line): \(error)") }
        }
    }
}
