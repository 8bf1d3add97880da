import Foundation
import KoeIO
import Testing

@Suite struct SynthTests {
    let koe = CommandRunner()

    /// A parameter folder as `koe analyze` writes it, made by the binary itself from a vowel.
    private func analyzedVowel(into folder: String = "params") throws {
        try koe.writeVowel()
        let result = try koe.run("analyze", "vowel.wav", "--output-dir", folder)
        try #require(result.status == 0, "\(result.standardError)")
    }

    private func replace(_ name: String, with array: Npy) throws {
        try array.write(to: koe.path("params/" + name))
    }

    @Test func writesTheFormatTheExtensionNames() throws {
        try analyzedVowel()
        for (name, format) in [("out.flac", "FLAC"), ("out.aiff", "AIFF"), ("out.ogg", "OGG")] {
            let result = try koe.run("synth", "params", name)
            #expect(result.status == 0, "\(result.standardError)")
            #expect(try AudioFile(reading: koe.path(name)).format.description.hasPrefix(format))
        }
    }

    @Test func warnsAboutClippedSamples() throws {
        try analyzedVowel()
        let sp = try Npy.read(from: koe.path("params/sp.npy"))
        try replace("sp.npy", with: Npy(rows: sp.rows, columns: sp.columns, values: sp.values.map { $0 * 10_000 }))
        let result = try koe.run("synth", "params", "loud.wav")
        #expect(result.status == 0)
        #expect(result.errorLines.count == 1)
        #expect(result.standardError.hasPrefix("koe: warning: "))
        #expect(result.standardError.contains("clipped"))
        #expect(FileManager.default.fileExists(atPath: koe.path("loud.wav")))
    }

    @Test func missingFolder() throws {
        try koe.expectFailure("synth", "absent", "out.wav", mentioning: "absent")
    }

    @Test func missingOrBrokenMeta() throws {
        try analyzedVowel()
        let meta = koe.bytes(of: "params/meta.json")
        try FileManager.default.removeItem(atPath: koe.path("params/meta.json"))
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "meta.json")
        koe.write(Array("{ not json".utf8), to: "params/meta.json")
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "JSON")
        koe.write(Array(#"{"frame_period": 5}"#.utf8), to: "params/meta.json")
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "sample_rate")
        koe.write(Array(#"{"sample_rate": 16000, "frame_period": 0}"#.utf8), to: "params/meta.json")
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "frame_period")
        koe.write(Array(#"{"sample_rate": 16000, "frame_period": 1e300}"#.utf8), to: "params/meta.json")
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "too long")
        koe.write(meta, to: "params/meta.json")
        #expect(try koe.run("synth", "params", "out.wav").status == 0)
    }

    @Test func arraysThatDoNotFitTogether() throws {
        try analyzedVowel()
        let sp = try Npy.read(from: koe.path("params/sp.npy"))
        try replace("sp.npy", with: Npy(rows: sp.rows - 1, columns: sp.columns, values: Array(sp.values.dropLast(sp.columns))))
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "sp.npy")
        try replace("sp.npy", with: Npy(vector: sp.values))
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "2-D")
        try replace("sp.npy", with: Npy(rows: sp.rows, columns: sp.columns, values: sp.values.map { $0 - $0 }))
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "above 0")
        koe.write(Array(koe.bytes(of: "params/ap.npy").dropLast(100)), to: "params/ap.npy")
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "truncated")
    }

    @Test func badF0Values() throws {
        try analyzedVowel()
        var f0 = try Npy.read(from: koe.path("params/f0.npy")).values
        f0[3] = .nan
        try replace("f0.npy", with: Npy(vector: f0))
        try koe.expectFailure("synth", "params", "out.wav", mentioning: "frame 3")
    }

    @Test func unknownOutputFormat() throws {
        try analyzedVowel()
        try koe.expectFailure("synth", "params", "out.xyz", mentioning: "format")
    }

    @Test func unwritableOrMissingOutputFolder() throws {
        try analyzedVowel()
        try koe.expectFailure("synth", "params", "nowhere/out.wav", mentioning: "nowhere")
        guard let locked = koe.unwritableFolder() else { return }
        try koe.expectFailure("synth", "params", locked + "/out.wav", mentioning: "cannot write")
    }
}
