import Foundation
@testable import KoeIO
import Testing
import TestSupport

@Suite struct ProfileTests {
    let koe = CommandRunner()

    /// A vowel from a tube `length` cm long (formants (2i − 1) c / 4L), at `f0`.
    func writeVoice(f0: Double, length: Double, to name: String, sampleRate: Int = 16000, stereo: Bool = false) throws {
        let formants = (1...4).map { Double(2 * $0 - 1) * 35_000 / (4 * length) }
        let vowel = Signals.vowel(f0: f0, sampleRate: sampleRate, duration: 1.2, formants: formants)
        let file = try AudioFile(writing: koe.path(name), sampleRate: sampleRate, channels: stereo ? 2 : 1)
        try file.write(channels: stereo ? [vowel, vowel] : [vowel])
        try file.close()
    }

    @Test func jsonIsOneObjectWithTheContractsKeys() throws {
        try writeVoice(f0: 120, length: 17, to: "voice.wav")
        let result = try koe.run("profile", "voice.wav", "--json")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty)
        #expect(result.standardOutput.split(separator: "\n").count == 1)
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let median = try #require(object?["f0_median_hz"] as? Double)
        let spread = try #require(object?["f0_spread_semitones"] as? Double)
        let length = try #require(object?["vocal_tract_length_cm"] as? Double)
        let voiced = try #require(object?["voiced_seconds"] as? Double)
        #expect(abs(median - 120) < 1.2 && spread < 0.5 && abs(length - 17) < 0.6 && abs(voiced - 1.15) < 0.1,
                "\(result.standardOutput)")
    }

    @Test func textNamesEachFigure() throws {
        try writeVoice(f0: 220, length: 14.5, to: "voice.flac", sampleRate: 48000, stereo: true)
        let result = try koe.run("profile", "voice.flac")
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines.first?.hasPrefix("f0 median") == true && lines.first?.hasSuffix(" Hz") == true)
        #expect(lines.contains { $0.contains("semitones") } && lines.contains { $0.hasSuffix(" cm") })
    }

    @Test func refusesWhatItCannotMeasure() throws {
        try koe.writeAudio([Double](repeating: 0, count: 16000), to: "silence.wav")
        try koe.expectFailure("profile", "silence.wav", mentioning: "no voiced frame")
        try koe.expectFailure("profile", "missing.wav")
        try koe.expectFailure("profile")
    }
}
