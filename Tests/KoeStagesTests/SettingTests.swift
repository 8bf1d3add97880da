import Foundation
import KoeStages
import Testing

@Suite struct SettingTests {
    @Test func namesAreUniqueAndFoundWithUnderscoresOrDashes() {
        let names = Setting.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Setting.named("pitch-median")?.name == Setting.pitchMedian.name)
        #expect(Setting.named("pitch_median")?.flag == "--pitch-median")
        #expect(Setting.named("pich") == nil)
    }

    @Test func numbersHaveTheirDefaultWithinTheirRange() {
        #expect(Set(Setting.all.map(\.type)) == ["number", "integer", "flag", "text"])
        for setting in Setting.all where setting.kind == .number || setting.kind == .count {
            if let range = setting.range, let value = setting.defaultValue {
                #expect(range.contains(value), "\(setting.name): default \(value) outside \(range)")
            }
            #expect(!setting.isLogarithmic || (setting.range?.lowerBound ?? 0) > 0, "\(setting.name): a log scale from 0")
        }
        for setting in Setting.all where setting.kind == .flag || setting.kind == .text {
            #expect(setting.range == nil && setting.defaultValue == nil && !setting.isLogarithmic, "\(setting.name)")
        }
    }

    @Test func refusesOutsideItsRangeWithTheRangeInTheMessage() throws {
        try Setting.pitch.validate(16)
        #expect(throws: KoeError.invalidArgument("pitch must be between 0.0625 and 16 (got 32)")) { try Setting.pitch.validate(32) }
        #expect(throws: KoeError.invalidArgument("--gain must be between -60 and 60 dB (got 200)")) {
            try Setting.gain.validate(200, as: "--gain")
        }
        #expect(throws: KoeError.invalidArgument("pitch must be between 0.0625 and 16 (got nan)")) { try Setting.pitch.validate(.nan) }
        #expect(throws: KoeError.invalidArgument("threads must be a whole number between 1 and 1024 threads (got 1.5)")) {
            try Setting.threads.validate(1.5)
        }
        #expect(throws: KoeError.invalidArgument("f0_floor must be a number (got inf)")) { try Setting.f0Floor.validate(.infinity) }
    }

    @Test func aLiveControlClampsToTheSameRange() {
        #expect(Setting.formant.clamped(64) == 16)
        #expect(Setting.gain.clamped(-100) == -60)
        #expect(Setting.pitchRange.clamped(0.5) == 0.5)
        #expect(Setting.pitch.clamped(.nan) == nil)
    }

    /// The semitone range is the pitch ratio's, four octaves either way.
    @Test func semitonesSpanThePitchRatios() throws {
        let ratios = try #require(Setting.pitch.range), semitones = try #require(Setting.semitones.range)
        #expect(exp2(semitones.lowerBound / 12) == ratios.lowerBound && exp2(semitones.upperBound / 12) == ratios.upperBound)
    }
}
