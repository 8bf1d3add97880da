import Foundation
import KoeIO
import KoeWorld
import Testing
import TestSupport

/// --pitch-curve, --f0-file, --snap, --vibrato and --no-limit as a user types them; the measured bars are
/// bench/curves.py's.
@Suite struct VoiceCurveTests {
    let koe = CommandRunner()

    private func convert(_ arguments: String...) throws -> CommandResult {
        let result = try koe.run(arguments)
        try #require(result.status == 0, "koe \(arguments.joined(separator: " ")): \(result.standardError)")
        return result
    }

    private func write(_ text: String, to name: String) -> String {
        koe.write(Array(text.utf8), to: name)
    }

    private func medianF0(of name: String) throws -> Double {
        let signal = try AudioFile(reading: koe.path(name)).readChannel(0)
        let f0 = try StoneMask(sampleRate: 16000).refine(signal, contour: Dio(sampleRate: 16000).estimate(signal)).f0
        let voiced = f0.filter { $0 > 0 }.sorted()
        return voiced.isEmpty ? 0 : voiced[voiced.count / 2]
    }

    @Test func aConstantCurveIsAPitchRatioAndComposesWithPitchAndTempo() throws {
        try koe.writeVowel(duration: 1)
        _ = write("time,ratio\n0,1.25\n", to: "curve.csv")
        _ = try convert("vowel.wav", "curved.wav", "--pitch-curve", "curve.csv", "--pitch", "1.2", "--tempo", "1.25")
        _ = try convert("vowel.wav", "pitched.wav", "--pitch", "1.5", "--tempo", "1.25")
        let same = koe.bytes(of: "curved.wav") == koe.bytes(of: "pitched.wav")
        #expect(same, "a curve held at 1.25 times --pitch 1.2 is --pitch 1.5")
        #expect(try AudioFile(reading: koe.path("curved.wav")).frames == 12800)
    }

    @Test func theF0FileSetsTheF0() throws {
        try koe.writeVowel(duration: 1)
        let frames = F0Contour.frameCount(samples: 16000, sampleRate: 16000, framePeriod: 5)
        _ = write(String(repeating: "200\n", count: frames), to: "f0.txt")
        _ = try convert("vowel.wav", "out.wav", "--f0-file", "f0.txt")
        #expect(abs(try medianF0(of: "out.wav") / 200 - 1) < 0.02)
        try Npy(vector: [Double](repeating: 200, count: frames)).write(to: koe.path("f0.npy"))
        _ = try convert("vowel.wav", "npy.wav", "--f0-file", "f0.npy")
        #expect(koe.bytes(of: "npy.wav") == koe.bytes(of: "out.wav"))
    }

    @Test func snapAndVibratoRun() throws {
        try koe.writeVowel(duration: 1)
        _ = try convert("vowel.wav", "snapped.wav", "--snap", "C:major", "--snap-strength", "0.8", "--snap-speed", "30", "--a4", "442")
        _ = try convert("vowel.wav", "vibrato.wav", "--vibrato", "5.5:50", "--snap", "chromatic")
        // 150 Hz is 37 cents above D3; C major holds D.
        _ = try convert("vowel.wav", "d3.wav", "--snap", "C:major")
        #expect(abs(1200 * log2(try medianF0(of: "d3.wav") / 146.832)) < 5)
    }

    /// The issue's tone: -0.5 dBFS at 150 Hz through --pitch 1.2.
    @Test func theLimiterIsOnUnlessToldOtherwise() throws {
        let tone = Signals.sine(frequency: 150, sampleRate: 16000, duration: 1, amplitude: pow(10, -0.5 / 20))
        try koe.writeAudio(tone, to: "tone.wav")
        let limited = try convert("tone.wav", "limited.wav", "--pitch", "1.2", "--json")
        #expect(try ConvertTests.jsonObject(limited.standardError)["clipped_samples"] as? Int == 0)
        let clipped = try convert("tone.wav", "clipped.wav", "--pitch", "1.2", "--json", "--no-limit")
        #expect(clipped.errorLines.first?.hasPrefix("koe: warning: ") == true && clipped.errorLines.first?.contains("clipped") == true)
        let count = try #require(try ConvertTests.jsonObject(clipped.errorLines.last ?? "")["clipped_samples"] as? Int)
        #expect(count > 1000)
    }

    @Test func speechWithHeadroomIsTheSameWithAndWithoutTheLimiter() throws {
        try koe.writeVowel(duration: 1)
        _ = try convert("vowel.wav", "limited.wav", "--pitch", "1.3", "--formant", "1.1", "--eq", "highpass:80")
        _ = try convert("vowel.wav", "plain.wav", "--pitch", "1.3", "--formant", "1.1", "--eq", "highpass:80", "--no-limit")
        let same = koe.bytes(of: "limited.wav") == koe.bytes(of: "plain.wav")
        #expect(same)
    }

    static let badArguments: [([String], String)] = [
        (["--pitch-curve", "backwards.txt"], "backwards.txt: line 3: time 0.5 s does not come after"),
        (["--pitch-curve", "negative.txt"], "negative.txt: line 2: ratio -1.5 is not positive"),
        (["--pitch-curve", "nan.txt"], "nan.txt: line 1: ratio nan is not a finite number"),
        (["--pitch-curve", "empty.txt"], "empty.txt: a pitch curve needs at least one point"),
        (["--pitch-curve", "absent.txt"], "absent.txt: no such file"),
        (["--f0-file", "short.txt"], "short.txt: has 3 F0 values but vowel.wav has 101 analysis frames"),
        (["--f0-file", "matrix.npy"], "matrix.npy: expected a 1-D array of F0 values, found shape (101, 2)"),
        (["--f0-file", "words.txt"], "words.txt: line 2: 'two' is not a number"),
        (["--snap", "H:major"], "unknown key 'H'"),
        (["--snap", "C:majestic"], "unknown scale 'majestic'"),
        (["--snap-strength", "0.5"], "--snap-strength tunes --snap"),
        (["--snap", "chromatic", "--snap-strength", "1.5"], "--snap-strength must be between 0 and 1 (got 1.5)"),
        (["--snap", "chromatic", "--a4", "4400"], "--a4 must be between 400 and 480 Hz (got 4400)"),
        (["--vibrato", "5.5"], "expected RATE_HZ:DEPTH_CENTS"),
        (["--vibrato", "50:20"], "--vibrato 50:20: vibrato's rate must be between 0 and 20 Hz (got 50)"),
    ]

    @Test(arguments: badArguments)
    func badInputIsOneLineAndNothingWritten(arguments: [String], message: String) throws {
        try koe.writeVowel()
        _ = write("0 1\n1 1.2\n0.5 1.3\n", to: "backwards.txt")
        _ = write("0 1\n1 -1.5\n", to: "negative.txt")
        _ = write("0 nan\n", to: "nan.txt")
        _ = write("", to: "empty.txt")
        _ = write("100\n100\n100\n", to: "short.txt")
        _ = write("100\ntwo\n", to: "words.txt")
        try Npy(rows: 101, columns: 2, values: [Double](repeating: 100, count: 202)).write(to: koe.path("matrix.npy"))
        try koe.expectFailure(["vowel.wav", "out.wav"] + arguments, mentioning: message)
    }

    /// A stream's length is known only at its end: the mismatch is an error then, and the exit status says so.
    @Test func aStreamLongerThanItsF0FileFailsAtTheEnd() throws {
        _ = write(String(repeating: "150\n", count: 50), to: "f0.txt")
        let input = ConvertTests.int16Bytes(Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.5))
        let result = try koe.run(["-", "-", "--f0-file", "f0.txt"] + ConvertTests.raw16, standardInput: input)
        #expect(result.status != 0)
        #expect(result.standardError.split(separator: "\n").count == 1)
        #expect(result.standardError.contains("f0.txt: has 50 F0 values but standard input has 101 analysis frames"))
    }

    @Test func batchRefusesABadCurveBeforeStarting() throws {
        try koe.writeVowel(to: "in.wav")
        _ = write("0 1\n1 0\n", to: "zero.txt")
        let result = try koe.run("batch", "-o", "out", "in.wav", "--pitch-curve", "zero.txt")
        #expect(result.status == 2)
        #expect(result.standardError.contains("zero.txt: line 2: ratio 0.0 is not positive"))
        #expect(!FileManager.default.fileExists(atPath: koe.path("out/in.wav")))
        _ = write("0 1\n1 1.2\n", to: "glide.txt")
        let converted = try koe.run("batch", "-o", "out", "in.wav", "--pitch-curve", "glide.txt", "--no-limit", "--quiet")
        #expect(converted.status == 0, "\(converted.standardError)")
        #expect(FileManager.default.fileExists(atPath: koe.path("out/in.wav")))
    }
}
