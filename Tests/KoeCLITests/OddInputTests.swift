import CSndFile
import Foundation
@testable import KoeIO
import Testing
import TestSupport

/// `koe convert` on every odd input and every output fault that can be staged. Each run must end one of two
/// ways: a correct output (same sample rate, channel count and length as the input, finite samples) and
/// nothing else new in the folder, or exactly one line `koe: error: ...`, a non-zero status and the folder
/// as it was. Never a crash, a hang or a leftover temporary file.
@Suite struct OddInputTests {
    let koe = CommandRunner()

    /// What each conversion is asked to do: the vocoder path, the EQ-only path (no vocoder at all),
    /// analysis with resynthesis of an unchanged voice, and the vocoder path with `--live`.
    enum Mode: String, CaseIterable, CustomTestStringConvertible {
        case pitch, equalizerOnly, vocoder, livePitch

        var arguments: [String] {
            switch self {
            case .pitch: return ["--pitch", "1.2"]
            case .livePitch: return ["--live", "--pitch", "1.2"]
            case .equalizerOnly: return ["--eq", "peak:1000:6:1.4"]
            case .vocoder: return ["--vocoder"]
            }
        }

        var testDescription: String { rawValue }
    }

    // MARK: Files that are not usable audio

    @Test(arguments: [Mode.pitch, .equalizerOnly])
    func zeroLengthFile(mode: Mode) throws {
        koe.write([], to: "empty.wav")
        try koe.expectRefusal(["empty.wav", "out.wav"] + mode.arguments, mentioning: "empty.wav")
    }

    @Test(arguments: [Mode.pitch, .equalizerOnly])
    func headerOnlyWav(mode: Mode) throws {
        try koe.writeVowel(duration: 0.1)
        koe.write(Array(koe.bytes(of: "vowel.wav").prefix(44)), to: "header.wav")
        try koe.expectRefusal(["header.wav", "out.wav"] + mode.arguments, mentioning: "header.wav")
    }

    @Test(arguments: [Mode.pitch, .equalizerOnly])
    func truncatedWav(mode: Mode) throws {
        try koe.writeVowel(duration: 0.1)
        let bytes = koe.bytes(of: "vowel.wav")
        koe.write(Array(bytes.prefix(44 + (bytes.count - 44) / 2)), to: "cut.wav")
        try koe.expectRefusal(["cut.wav", "out.wav"] + mode.arguments, mentioning: "truncated")
    }

    @Test(arguments: [Mode.pitch, .equalizerOnly])
    func randomBytesNamedWav(mode: Mode) throws {
        let noise = Signals.whiteNoise(count: 4096, amplitude: 128, seed: 7)
        koe.write(noise.map { UInt8(truncatingIfNeeded: Int($0) + 128) }, to: "noise.wav")
        try koe.expectRefusal(["noise.wav", "out.wav"] + mode.arguments, mentioning: "noise.wav")
    }

    @Test(arguments: [Mode.pitch, .equalizerOnly])
    func textNamedWav(mode: Mode) throws {
        koe.write(Array(String(repeating: "not audio at all\n", count: 100).utf8), to: "notes.wav")
        try koe.expectRefusal(["notes.wav", "out.wav"] + mode.arguments, mentioning: "notes.wav")
    }

    @Test func folderAsInput() throws {
        try FileManager.default.createDirectory(atPath: koe.path("takes.wav"), withIntermediateDirectories: false)
        try koe.expectRefusal(["takes.wav", "out.wav", "--pitch", "1.2"], mentioning: "takes.wav")
    }

    @Test func missingInput() throws {
        try koe.expectRefusal(["absent.wav", "out.wav", "--pitch", "1.2"], mentioning: "absent.wav")
    }

    /// NaN or infinity cannot become sound on any path; the EQ-only path must not pass it on either.
    @Test(arguments: Mode.allCases, [Double.nan, .infinity, -.infinity])
    func nonFiniteFloatSamples(mode: Mode, bad: Double) throws {
        for encoding in [SampleEncoding.float32, .float64] {
            var samples = Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.1)
            samples[321] = bad
            try koe.writeAudio(samples, to: "bad.wav", encoding: encoding)
            try koe.expectRefusal(["bad.wav", "out.wav"] + mode.arguments, mentioning: "bad.wav: sample 321 ")
        }
    }

    // MARK: Signals and layouts that must convert

    @Test(arguments: Mode.allCases)
    func oneSampleFile(mode: Mode) throws {
        try koe.writeAudio([0.25], to: "one.wav")
        let outcome = try convert("one.wav", to: "out.wav", mode.arguments)
        if mode == .equalizerOnly {
            try koe.expectConverted(outcome, from: "one.wav", to: "out.wav")
        } else {
            try koe.expectConvertedOrRefused(outcome, from: "one.wav", to: "out.wav")
        }
    }

    @Test(arguments: Mode.allCases)
    func silence(mode: Mode) throws {
        try koe.writeAudio(Array(repeating: 0, count: 1600), to: "silence.wav")
        try koe.expectConverted(try convert("silence.wav", to: "out.wav", mode.arguments), from: "silence.wav", to: "out.wav")
        #expect(try AudioFile(reading: koe.path("out.wav")).readChannel(0).allSatisfy { $0 == 0 })
    }

    @Test(arguments: Mode.allCases)
    func fullScaleClippedNoise(mode: Mode) throws {
        let noise = Signals.whiteNoise(count: 1600, amplitude: 4, seed: 3).map { min(max($0, -1), 1) }
        try koe.writeAudio(noise, to: "loud.wav")
        try koe.expectConverted(try convert("loud.wav", to: "out.wav", mode.arguments), from: "loud.wav", to: "out.wav")
    }

    @Test(arguments: Mode.allCases)
    func directCurrent(mode: Mode) throws {
        try koe.writeAudio(Array(repeating: 0.5, count: 1600), to: "dc.wav")
        try koe.expectConverted(try convert("dc.wav", to: "out.wav", mode.arguments), from: "dc.wav", to: "out.wav")
    }

    @Test(arguments: Mode.allCases, [8000, 192_000])
    func extremeSampleRates(mode: Mode, sampleRate: Int) throws {
        try koe.writeVowel(to: "voice.wav", sampleRate: sampleRate, duration: 0.1)
        try koe.expectConverted(try convert("voice.wav", to: "out.wav", mode.arguments), from: "voice.wav", to: "out.wav")
    }

    @Test(arguments: Mode.allCases, [1, 6])
    func channelCounts(mode: Mode, channels: Int) throws {
        try writeVoices(to: "voices.wav", channels: channels, format: format(SF_FORMAT_WAV, SF_FORMAT_PCM_16))
        try koe.expectConverted(try convert("voices.wav", to: "out.wav", mode.arguments), from: "voices.wav", to: "out.wav")
    }

    /// Every sample encoding comes back in the same encoding.
    @Test(arguments: [Mode.pitch, .equalizerOnly], [
        SF_FORMAT_PCM_U8, SF_FORMAT_PCM_16, SF_FORMAT_PCM_24, SF_FORMAT_PCM_32, SF_FORMAT_FLOAT, SF_FORMAT_DOUBLE,
    ])
    func sampleEncodings(mode: Mode, encoding: Int) throws {
        try writeVoices(to: "voice.wav", channels: 1, format: format(SF_FORMAT_WAV, encoding))
        try koe.expectConverted(try convert("voice.wav", to: "out.wav", mode.arguments), from: "voice.wav", to: "out.wav")
        #expect(try AudioFile(reading: koe.path("out.wav")).format.encoding == Int32(encoding))
    }

    @Test(arguments: [Mode.pitch, .equalizerOnly])
    func rf64(mode: Mode) throws {
        try writeVoices(to: "voices.rf64", channels: 2, format: format(SF_FORMAT_RF64, SF_FORMAT_PCM_24))
        #expect(koe.bytes(of: "voices.rf64").prefix(4).elementsEqual("RF64".utf8))
        try koe.expectConverted(try convert("voices.rf64", to: "out.rf64", mode.arguments), from: "voices.rf64", to: "out.rf64")
        try koe.expectConverted(try convert("voices.rf64", to: "out.wav", mode.arguments), from: "voices.rf64", to: "out.wav")
    }

    @Test(arguments: [Mode.pitch, .equalizerOnly])
    func waveFormatExtensible(mode: Mode) throws {
        try writeVoices(to: "voices.wav", channels: 2, format: format(SF_FORMAT_WAVEX, SF_FORMAT_PCM_24))
        #expect(koe.bytes(of: "voices.wav")[20...21].elementsEqual([0xFE, 0xFF]), "format tag of WAVE_FORMAT_EXTENSIBLE")
        try koe.expectConverted(try convert("voices.wav", to: "out.wav", mode.arguments), from: "voices.wav", to: "out.wav")
    }

    @Test(arguments: [Mode.pitch, .equalizerOnly])
    func bigEndianAiff(mode: Mode) throws {
        try writeVoices(to: "voices.aiff", channels: 2, format: format(SF_FORMAT_AIFF, SF_FORMAT_PCM_16))
        let header = koe.bytes(of: "voices.aiff")
        #expect(header.prefix(4).elementsEqual("FORM".utf8) && header[8..<12].elementsEqual("AIFF".utf8))
        try koe.expectConverted(try convert("voices.aiff", to: "out.aiff", mode.arguments), from: "voices.aiff", to: "out.aiff")
        try koe.expectConverted(try convert("voices.aiff", to: "out.wav", mode.arguments), from: "voices.aiff", to: "out.wav")
    }

    // MARK: Outputs that cannot be written

    @Test func unwritableOutputFolder() throws {
        try koe.writeVowel(duration: 0.1)
        guard let locked = koe.unwritableFolder() else {
            Issue.record("no unwritable folder on this machine")
            return
        }
        try koe.expectRefusal(["vowel.wav", locked + "/out.wav", "--pitch", "1.2"], mentioning: "cannot write")
    }

    @Test(.enabled(if: MountNamespace.command != nil, "needs a private mount namespace (unshare) to mount a tmpfs"))
    func readOnlyOutputFolder() throws {
        try koe.writeVowel(duration: 0.1)
        let outcome = try convertOnTmpfs(options: "ro,size=64k", ["vowel.wav", "mount/out.wav", "--pitch", "1.2"])
        try koe.expectRefusal(outcome, mentioning: "cannot write")
        #expect(outcome.standardOutput.isEmpty, "left in the read-only folder: \(outcome.standardOutput)")
    }

    @Test(.enabled(if: MountNamespace.command != nil, "needs a private mount namespace (unshare) to mount a tmpfs"),
          arguments: [Mode.pitch, .equalizerOnly])
    func fullDisk(mode: Mode) throws {
        try koe.writeVowel(duration: 0.25)
        let outcome = try convertOnTmpfs(options: "size=4k", ["vowel.wav", "mount/out.wav"] + mode.arguments)
        try koe.expectRefusal(outcome, mentioning: "mount/out.wav: write failed: No space left on device")
        #expect(outcome.standardOutput.isEmpty, "left on the full disk: \(outcome.standardOutput)")
    }

    /// Raw PCM to a full device: the write error is reported, not a crash or a silent success.
    @Test func standardOutputOnFullDevice() throws {
        try koe.writeVowel(duration: 0.25)
        let outcome = try koe.runBounded(
            ["vowel.wav", "-", "--out-type", "raw", "--pitch", "1.2"], standardOutput: "/dev/full")
        try koe.expectRefusal(outcome, mentioning: "No space left on device")
    }

    @Test func folderAsOutput() throws {
        try koe.writeVowel(duration: 0.1)
        try FileManager.default.createDirectory(atPath: koe.path("out.wav"), withIntermediateDirectories: false)
        try koe.expectRefusal(["vowel.wav", "out.wav", "--pitch", "1.2"], mentioning: "out.wav")
    }

    /// However the output names the input (the same spelling, another spelling, a hard or symbolic link),
    /// the conversion is refused and the input is left as it was.
    @Test func inputAndOutputAreTheSameFile() throws {
        try koe.writeVowel(duration: 0.1)
        let original = koe.bytes(of: "vowel.wav")
        try FileManager.default.linkItem(atPath: koe.path("vowel.wav"), toPath: koe.path("hard.wav"))
        try FileManager.default.createSymbolicLink(atPath: koe.path("soft.wav"), withDestinationPath: "vowel.wav")
        for output in ["vowel.wav", "./vowel.wav", koe.path("vowel.wav"), "hard.wav", "soft.wav"] {
            try koe.expectRefusal(["vowel.wav", output, "--pitch", "1.2"], mentioning: "same file")
            let isUnchanged = koe.bytes(of: "vowel.wav") == original
            #expect(isUnchanged, "input changed by output \(output)")
        }
    }

    // MARK: Running

    private func convert(_ input: String, to output: String, _ options: [String]) throws -> Outcome {
        try koe.runBounded([input, output] + options)
    }

    // MARK: Inputs

    private func format(_ container: Int, _ encoding: Int) -> AudioFormat {
        AudioFormat(container: Int32(container), encoding: Int32(encoding))
    }

    /// 0.1 s of vowels, one a channel at its own F0, in exactly `format`.
    private func writeVoices(to name: String, channels: Int, format: AudioFormat) throws {
        let voices = (0..<channels).map { Signals.vowel(f0: 120 + 20 * Double($0), sampleRate: 16000, duration: 0.1) }
        let file = try AudioFile(writing: koe.path(name), sampleRate: 16000, channels: channels, format: format)
        try file.write(channels: voices)
        try file.close()
    }

    /// Runs koe in a private mount namespace with a fresh tmpfs (mounted with `options`) at `mount` in the
    /// scratch folder; standard output then lists what was left on it, as the mount vanishes with the namespace.
    private func convertOnTmpfs(options: String, _ arguments: [String]) throws -> Outcome {
        try FileManager.default.createDirectory(atPath: koe.path("mount"), withIntermediateDirectories: false)
        let script = #"mount -t tmpfs -o "$1" koe-test mount || exit 125; shift; "$@"; status=$?; ls -A mount; exit $status"#
        let command = try #require(MountNamespace.command)
        var outcome = try koe.runBounded(
            executable: command[0], Array(command.dropFirst()) + ["sh", "-c", script, "sh", options, CommandRunner.executable] + arguments)
        outcome.contentsBefore.removeAll { $0 == "mount" }
        try FileManager.default.removeItem(atPath: koe.path("mount"))
        return outcome
    }
}

/// How one bounded run of a program ended.
struct Outcome: CustomStringConvertible {
    var status: Int32
    /// False when the program was ended by a signal: a crash, or the kill after the time limit.
    var endedNormally: Bool
    var timedOut: Bool
    var standardOutput: String
    var standardError: String
    /// The scratch folder's contents before the run, to compare with after it.
    var contentsBefore: [String]

    var errorLines: [String] {
        standardError.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    var description: String {
        let ending = timedOut ? "timed out" : endedNormally ? "status \(status)" : "killed by signal \(status)"
        return "\(ending), stderr: \(standardError)"
    }
}

/// The command that runs a program in a private mount namespace, where mounting a tmpfs touches nothing
/// outside; nil when this machine allows none.
enum MountNamespace {
    private static let probeScript = #"point=$(mktemp -d) && mount -t tmpfs -o size=4k koe-probe "$point"; status=$?; umount "$point"; rmdir "$point"; exit $status"#

    static let command: [String]? = {
        let candidates = [["/usr/bin/env", "unshare", "--mount"], ["/usr/bin/env", "unshare", "--map-root-user", "--mount"]]
        return candidates.first { command in
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: command[0])
            probe.arguments = Array(command.dropFirst()) + ["sh", "-c", probeScript]
            probe.standardOutput = FileHandle.nullDevice
            probe.standardError = FileHandle.nullDevice
            guard (try? probe.run()) != nil else { return false }
            probe.waitUntilExit()
            return probe.terminationReason == .exit && probe.terminationStatus == 0
        }
    }()
}

/// What every run of koe on odd input must end in.
extension CommandRunner {
    /// A correct conversion: status 0, nothing on stderr but warnings, and beside what was there before only
    /// the output, which matches the input's rate, channels and length with finite samples throughout.
    func expectConverted(
        _ outcome: Outcome, from input: String, to output: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try #require(outcome.endedNormally, "\(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.status == 0, "\(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.errorLines.allSatisfy { $0.hasPrefix("koe: warning: ") }, "\(outcome)", sourceLocation: sourceLocation)
        #expect(Set(contents()) == Set(outcome.contentsBefore + [output]), "files left behind", sourceLocation: sourceLocation)
        let source = try AudioFile(reading: path(input))
        let result = try AudioFile(reading: path(output))
        #expect(result.sampleRate == source.sampleRate, sourceLocation: sourceLocation)
        #expect(result.channels == source.channels, sourceLocation: sourceLocation)
        #expect(result.frames == source.frames, sourceLocation: sourceLocation)
        #expect(try result.readAll().joined().allSatisfy(\.isFinite), "non-finite output", sourceLocation: sourceLocation)
    }

    func expectConvertedOrRefused(
        _ outcome: Outcome, from input: String, to output: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        if outcome.endedNormally && outcome.status == 0 {
            try expectConverted(outcome, from: input, to: output, sourceLocation: sourceLocation)
        } else {
            try expectRefusal(outcome, sourceLocation: sourceLocation)
        }
    }

    func expectRefusal(
        _ arguments: [String], mentioning detail: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try expectRefusal(try runBounded(arguments), mentioning: detail, sourceLocation: sourceLocation)
    }

    /// A clean failure: an ordinary non-zero exit, exactly one line `koe: error: ...`, and no file added,
    /// removed or left behind.
    func expectRefusal(
        _ outcome: Outcome, mentioning detail: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try #require(outcome.endedNormally, "\(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.status != 0, "\(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.errorLines.count == 1, "\(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.standardError.hasPrefix("koe: error: "), "\(outcome)", sourceLocation: sourceLocation)
        if let detail {
            #expect(outcome.standardError.contains(detail), "\(outcome)", sourceLocation: sourceLocation)
        }
        #expect(contents() == outcome.contentsBefore, "files left behind", sourceLocation: sourceLocation)
    }
}

extension CommandRunner {
    /// No single conversion here takes more than a few seconds; a run past this is a hang.
    static let timeLimit: TimeInterval = 60

    /// Runs koe (or `executable`) in the scratch folder, killed if it runs past the time limit.
    /// Output goes to files, not pipes, so a chatty crash cannot block it.
    func runBounded(executable: String = CommandRunner.executable, _ arguments: [String], standardOutput: String? = nil) throws -> Outcome {
        let before = contents()
        let capture = NSTemporaryDirectory() + "koe-odd-" + UUID().uuidString
        _ = FileManager.default.createFile(atPath: capture + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: capture + ".err", contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: capture + ".out")
            try? FileManager.default.removeItem(atPath: capture + ".err")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: standardOutput ?? capture + ".out")
        process.standardError = FileHandle(forWritingAtPath: capture + ".err")
        try process.run()
        let deadline = Date(timeIntervalSinceNow: Self.timeLimit)
        while process.isRunning && Date() < deadline { usleep(5000) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        // Through a file handle: FileManager.contents(atPath:) leaks its buffer on an empty file.
        let read = { (path: String) in
            String(decoding: (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).readToEnd()) ?? Data(), as: UTF8.self)
        }
        return Outcome(
            status: process.terminationStatus, endedNormally: process.terminationReason == .exit, timedOut: timedOut,
            standardOutput: standardOutput == nil ? read(capture + ".out") : "", standardError: read(capture + ".err"),
            contentsBefore: before)
    }
}
