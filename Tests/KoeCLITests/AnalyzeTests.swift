import Foundation
import KoeIO
@testable import KoeWorld
import Testing
import TestSupport

@Suite struct AnalyzeTests {
    let koe = CommandRunner()

    // MARK: Happy path

    @Test func analyzeThenSynthesizeAVowel() throws {
        try koe.writeVowel()
        let analysis = try koe.run("analyze", "vowel.wav", "--output-dir", "params")
        #expect(analysis.status == 0, "\(analysis.standardError)")
        #expect(analysis.standardError.isEmpty)
        #expect(koe.contents() == ["params", "params/ap.npy", "params/f0.npy", "params/meta.json", "params/sp.npy",
                                   "params/time.npy", "vowel.wav"])

        let frames = F0Contour.frameCount(samples: 8000, sampleRate: 16000, framePeriod: 5)
        let f0 = try Npy.read(from: koe.path("params/f0.npy"))
        let time = try Npy.read(from: koe.path("params/time.npy"))
        let sp = try Npy.read(from: koe.path("params/sp.npy"))
        let ap = try Npy.read(from: koe.path("params/ap.npy"))
        let fftSize = CheapTrick.fftSize(sampleRate: 16000, f0Floor: 71)
        #expect(f0.shape == [frames])
        #expect(time.values == F0Contour.timeAxis(frameCount: frames, framePeriod: 5))
        #expect(sp.shape == [frames, fftSize / 2 + 1])
        #expect(ap.shape == sp.shape)
        let middle = f0.values[(frames / 4)..<(3 * frames / 4)]
        #expect(middle.allSatisfy { abs($0 - 150) < 3 }, "F0 of a 150 Hz vowel: \(Array(middle))")

        let meta = try JSONSerialization.jsonObject(with: Data(koe.bytes(of: "params/meta.json"))) as? [String: Any]
        #expect(meta?["sample_rate"] as? Int == 16000)
        #expect(meta?["frame_period"] as? Double == 5)
        #expect(meta?["fft_size"] as? Int == fftSize)
        #expect(meta?["f0_method"] as? String == "dio")
        #expect(meta?["frames"] as? Int == frames)
        #expect(meta?["channels"] as? Int == 1)
        #expect(meta?["options"] is [String: Any])

        let synthesis = try koe.run("synth", "params", "again.wav")
        #expect(synthesis.status == 0, "\(synthesis.standardError)")
        let output = try AudioFile(reading: koe.path("again.wav"))
        #expect(output.sampleRate == 16000)
        #expect(output.frames == Synthesis.outputLength(frameCount: frames, sampleRate: 16000, framePeriod: 5))
        #expect(output.format.description.contains("16 bit PCM"))
        #expect(try output.readChannel(0).map(abs).max() ?? 0 > 0.05)
    }

    @Test func harvestAndGivenF0WriteTheSameFrames() throws {
        try koe.writeVowel()
        let frames = F0Contour.frameCount(samples: 8000, sampleRate: 16000, framePeriod: 5)
        try Npy(vector: Array(repeating: 150, count: frames)).write(to: koe.path("given.npy"))
        #expect(try koe.run("analyze", "vowel.wav", "--output-dir", "harvest", "--f0-method", "harvest").status == 0)
        #expect(try koe.run("analyze", "vowel.wav", "--output-dir", "given", "--f0-file", "given.npy").status == 0)
        #expect(try Npy.read(from: koe.path("harvest/f0.npy")).shape == [frames])
        #expect(try Npy.read(from: koe.path("given/f0.npy")).values == Array(repeating: 150, count: frames))
        #expect(String(decoding: koe.bytes(of: "given/meta.json"), as: UTF8.self).contains("\"f0_method\" : \"file\""))
    }

    // MARK: Bad input files

    @Test func missingFile() throws {
        try koe.expectFailure("analyze", "absent.wav", "--output-dir", "out", mentioning: "absent.wav")
    }

    @Test func notAnAudioFile() throws {
        koe.write(Array("just some text\n".utf8), to: "notes.wav")
        try koe.expectFailure("analyze", "notes.wav", "--output-dir", "out", mentioning: "notes.wav")
    }

    @Test func emptyFile() throws {
        koe.write([], to: "empty.wav")
        try koe.expectFailure("analyze", "empty.wav", "--output-dir", "out", mentioning: "no audio")
    }

    @Test func wavWithHeaderOnly() throws {
        try koe.writeVowel()
        koe.write(Array(koe.bytes(of: "vowel.wav").prefix(44)), to: "header.wav")
        try koe.expectFailure("analyze", "header.wav", "--output-dir", "out")
    }

    @Test func truncatedWav() throws {
        try koe.writeVowel()
        let bytes = koe.bytes(of: "vowel.wav")
        koe.write(Array(bytes.prefix(bytes.count / 2)), to: "cut.wav")
        try koe.expectFailure("analyze", "cut.wav", "--output-dir", "out", mentioning: "truncated")
    }

    @Test func signalShorterThanOneFrame() throws {
        try koe.writeAudio(Signals.sine(frequency: 200, sampleRate: 16000, duration: 0.01), to: "blip.wav")
        try koe.expectFailure("analyze", "blip.wav", "--output-dir", "out", mentioning: "too short")
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteSamples(bad: Double) throws {
        var samples = Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.5)
        samples[1234] = bad
        try koe.writeAudio(samples, to: "bad.wav", encoding: .float32)
        try koe.expectFailure("analyze", "bad.wav", "--output-dir", "out", mentioning: "sample 1234")
    }

    // MARK: Bad outputs

    @Test func unwritableOutputFolder() throws {
        try koe.writeVowel()
        guard let locked = koe.unwritableFolder() else { return }
        try koe.expectFailure("analyze", "vowel.wav", "--output-dir", locked, mentioning: "cannot write")
        try koe.expectFailure("analyze", "vowel.wav", "--output-dir", locked + "/params", mentioning: "cannot write")
    }

    @Test func outputFolderIsAFile() throws {
        try koe.writeVowel()
        try koe.expectFailure("analyze", "vowel.wav", "--output-dir", "vowel.wav", mentioning: "not a folder")
    }

    // MARK: Bad options

    @Test(arguments: [
        ["--f0-floor", "300", "--f0-ceil", "200"],
        ["--f0-floor", "200", "--f0-ceil", "200"],
        ["--frame-period", "0"],
        ["--frame-period=-5"],
        ["--frame-period", "nan"],
        ["--frame-period", "fast"],
        ["--channel", "1"],
        ["--channel=-1"],
        ["--f0-method", "crepe"],
        ["--f0-floor", "0"],
        ["--f0-ceil", "9000"],
        ["--frame-period", "0.00001"],
        ["--unknown-option"],
    ])
    func badOptionValues(options: [String]) throws {
        try koe.writeVowel()
        try koe.expectFailure(["analyze", "vowel.wav", "--output-dir", "out"] + options)
    }

    @Test func f0FileThatDoesNotFit() throws {
        try koe.writeVowel()
        try Npy(vector: [150, 150, 150]).write(to: koe.path("short.npy"))
        try koe.expectFailure("analyze", "vowel.wav", "--output-dir", "out", "--f0-file", "short.npy", mentioning: "short.npy")
        try Npy(rows: 2, columns: 2, values: [1, 2, 3, 4]).write(to: koe.path("matrix.npy"))
        try koe.expectFailure("analyze", "vowel.wav", "--output-dir", "out", "--f0-file", "matrix.npy", mentioning: "1-D")
        try koe.expectFailure("analyze", "vowel.wav", "--output-dir", "out", "--f0-file", "vowel.wav", mentioning: "NumPy")
        try koe.expectFailure("analyze", "vowel.wav", "--output-dir", "out", "--f0-file", "short.npy", "--f0-method", "dio")
    }

    @Test func missingArguments() throws {
        try koe.expectFailure("analyze")
        try koe.expectFailure("analyze", "vowel.wav")
        try koe.expectFailure("transmogrify")
    }
}
