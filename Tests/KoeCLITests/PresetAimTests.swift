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
    /// Vowels of `seconds` at about `f0` from a 17 cm tract, 0.3 s of silence after each: speech-like, 16 kHz.
    private func writePhrases(f0: Double, parts: Int, seconds: Double = 0.6, to name: String = "phrases.wav") throws {
        let formants = (1...4).map { Double(2 * $0 - 1) * 35_000 / (4 * 17.0) }
        let silence = [Double](repeating: 0, count: 4800)
        var samples: [Double] = []
        for part in 0..<parts {
            samples += Signals.vowel(f0: f0 * (1 + 0.02 * Double(part % 3)), sampleRate: 16000, duration: seconds, formants: formants) + silence
        }
        try koe.writeAudio(samples, to: name)
    }

    /// --live plays a file as a stream would: the voice aims from the profile estimated as it runs, which --json
    /// reports with the ratios at the end; with too little voice, the typical ratios hold and it says why.
    @Test func liveAimsFromTheProfileEstimatedAsItRuns() throws {
        try writePhrases(f0: 110, parts: 4)
        let live = try koe.run("convert", "phrases.wav", "out.wav", "--live", "--preset", "female", "--json", "--quiet")
        #expect(live.status == 0 && live.errorLines.count == 1, "\(live.standardError)")
        let stats = try statistics(live)
        let profile = try #require(stats["profile"] as? [String: Any])
        let median = try #require(profile["f0_median_hz"] as? Double)
        #expect(abs(median / 110 - 1) < 0.03)
        let pitch = try #require(stats["pitch_ratio"] as? Double)
        #expect(abs(pitch / (210 / median) - 1) < 0.001, "\(pitch)")

        try writePhrases(f0: 110, parts: 1, seconds: 0.3, to: "short.wav")
        let short = try koe.run("convert", "short.wav", "out.wav", "--live", "--preset", "female", "--json", "--quiet")
        #expect(short.status == 0)
        #expect(short.errorLines.first?.contains("too little voice was heard") == true, "\(short.standardError)")
        #expect(try statistics(short)["pitch_ratio"] as? Double == 1.7)
    }

    /// --profile takes what koe profile --json wrote as the speaker's: a file is not measured again, the ratios
    /// follow it; a file that is not such a profile is refused, naming it.
    @Test func aProfileFileStandsForTheSpeakers() throws {
        try writePhrases(f0: 110, parts: 4)
        let measured = try koe.run("profile", "phrases.wav", "--json")
        try #require(measured.status == 0)
        _ = koe.write(Array(measured.standardOutput.utf8), to: "me.json")
        _ = koe.write(Array(#"{"f0_median_hz": 150, "vocal_tract_length_cm": null}"#.utf8), to: "other.json")
        let other = try statistics(try koe.run("convert", "phrases.wav", "out.wav", "--preset", "female", "--profile", "other.json", "--json", "--quiet"))
        #expect(other["pitch_ratio"] as? Double == 210.0 / 150 && other["formant_ratio"] as? Double == 1.15)
        let live = try statistics(try koe.run("convert", "phrases.wav", "out.wav", "--live", "--preset", "female", "--profile", "me.json", "--json", "--quiet"))
        #expect((live["profile"] as? [String: Any])?["voiced_seconds"] as? Double != nil)

        for (name, content, reason) in [
            ("none.json", nil, "cannot be read"), ("list.json", "[1, 2]", "is not a JSON object"),
            ("low.json", #"{"f0_median_hz": 3}"#, "f0_median_hz must be between 10 and 5000 Hz (got 3)"),
            ("tract.json", #"{"f0_median_hz": 150, "vocal_tract_length_cm": -2}"#, "vocal_tract_length_cm must be a positive number"),
        ] {
            if let content { _ = koe.write(Array(content.utf8), to: name) }
            let refused = try koe.run("convert", "phrases.wav", "out.wav", "--preset", "female", "--profile", name)
            #expect(refused.status != 0 && refused.errorLines.count == 1, "\(name): \(refused.standardError)")
            #expect(refused.errorLines.first?.contains(name) == true && refused.errorLines.first?.contains(reason) == true, "\(refused.standardError)")
        }
    }
}
