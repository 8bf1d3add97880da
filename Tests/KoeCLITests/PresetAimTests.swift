import Foundation
import Testing
import TestSupport

/// `koe presets` names each voice preset's target; `koe convert --preset` aims a file's voice at it and says so.
@Suite struct PresetAimTests {
    let koe = CommandRunner()

    private func writeVoice(f0: Double, length: Double = 17) throws {
        let formants = (1...4).map { Double(2 * $0 - 1) * 35_000 / (4 * length) }
        try koe.writeAudio(Signals.vowel(f0: f0, sampleRate: 16000, duration: 1.5, formants: formants), to: "voice.wav")
    }

    /// The JSON object `--json` printed last on stderr.
    private func statistics(_ result: CommandResult) throws -> [String: Any] {
        let line = try #require(result.errorLines.last)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func presetsListTheirTargets() throws {
        let text = try koe.run("presets")
        #expect(text.status == 0)
        #expect(text.standardOutput.split(separator: "\n").contains { $0.hasPrefix("female") && $0.contains("target 210 Hz, 14.5 cm") })
        let result = try koe.run("presets", "--json")
        let table = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: [String: Any]])
        #expect(Set(table.keys) == ["kawaii", "child", "female", "male", "deep", "giant", "chipmunk", "robot", "whisper"])
        #expect(table["female"]?["f0_median_hz"] as? Double == 210 && table["male"]?["f0_median_hz"] as? Double == 120)
        for effect in ["chipmunk", "robot", "whisper"] {
            #expect(table[effect]?["f0_median_hz"] is NSNull, "\(effect)")
        }
    }

    @Test func convertAimsAndReportsTheRatiosItApplied() throws {
        try writeVoice(f0: 110)
        let aimed = try koe.run("convert", "voice.wav", "out.wav", "--preset", "female", "--json", "--quiet")
        #expect(aimed.status == 0, "\(aimed.standardError)")
        #expect(aimed.errorLines.count == 1, "no warning: \(aimed.standardError)")
        let stats = try statistics(aimed)
        let profile = try #require(stats["profile"] as? [String: Any])
        let median = try #require(profile["f0_median_hz"] as? Double)
        #expect(abs(median - 110) < 1.5 && profile["vocal_tract_length_cm"] is Double && profile["voiced_seconds"] is Double)
        let pitch = try #require(stats["pitch_ratio"] as? Double)
        #expect(abs(pitch - 210 / median) < 0.01, "\(pitch)")
        #expect(stats["formant_ratio"] is Double && stats["clamped"] as? Bool == false)

        let explicit = try statistics(try koe.run("voice.wav", "out.wav", "--preset", "female", "--pitch", "1.3", "--json", "--quiet"))
        #expect(explicit["pitch_ratio"] as? Double == 1.3)
        let plain = try statistics(try koe.run("voice.wav", "out.wav", "--pitch", "1.3", "--json", "--quiet"))
        #expect(plain["profile"] is NSNull && plain["clamped"] as? Bool == false && plain["formant_ratio"] as? Double == 1)
    }

    @Test func aBoundThatBitesIsSaid() throws {
        // A child's 13 cm tract from a 19 cm one (taken as the adult span's 18 cm) asks 1.38 of the formants.
        try writeVoice(f0: 110, length: 19)
        let child = try koe.run("voice.wav", "out.wav", "--preset", "child", "--json", "--quiet")
        #expect(child.status == 0, "\(child.standardError)")
        #expect(child.errorLines.first?.hasPrefix("koe: warning: --preset child: the formant ratio 1.38") == true, "\(child.standardError)")
        let stats = try statistics(child)
        #expect(stats["clamped"] as? Bool == true && stats["formant_ratio"] as? Double == 1.35)
    }
}
