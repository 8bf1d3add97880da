import Foundation
import KoeIO
import Testing
import TestSupport

/// `koe batch` on corpora made from the project's sample speech, with bad files mixed in: what is converted,
/// what the manifest says, what a rerun skips, how shards split the work, and the usage errors.
@Suite struct BatchTests {
    let koe = CommandRunner()

    /// Kinds of deliberately bad input, each with what its manifest error must say.
    enum BadInput: CaseIterable {
        case empty, truncated, randomBytes

        var reason: String {
            switch self {
            case .empty: return "holds no audio"
            case .truncated: return "truncated"
            case .randomBytes: return "not an audio file"
            }
        }
    }

    @Test func twoHundredFilesWithBadOnesThenRerun() throws {
        var good: [String] = []
        var bad: [String: BadInput] = [:]
        for index in 0..<200 {
            let name = String(format: "corpus/speaker%d/take%03d.wav", index % 8, index)
            if index % 8 == 3 {
                let kind = BadInput.allCases[index / 8 % BadInput.allCases.count]
                try koe.writeBadInput(kind, to: name)
                bad[name] = kind
            } else {
                try koe.writeSpeechSnippet(to: name, seconds: 0.1, index: index)
                good.append(name)
            }
        }
        #expect(bad.count >= 20)

        let first = try koe.run("batch", "-o", "out", "-r", "corpus", "--pitch", "1.2")
        #expect(first.status == 1, "\(first.standardError)")
        #expect(first.standardError.contains("\(good.count) ok, \(bad.count) failed, 0 skipped of 200 inputs"), "\(first.standardError)")
        let records = try koe.manifest("out/koe-manifest.jsonl")
        #expect(records.count == 200)
        for name in good {
            let output = "out/" + name.dropFirst("corpus/".count)
            #expect(records.last(for: name)?.status == "ok", "\(name)")
            try koe.expectComplete(output, sameLengthAs: name)
        }
        for (name, kind) in bad {
            let record = records.last(for: name)
            #expect(record?.status == "failed", "\(name)")
            #expect(record?.error?.contains(kind.reason) == true, "\(name): \(record?.error ?? "no error")")
            #expect(!FileManager.default.fileExists(atPath: koe.path("out/" + name.dropFirst("corpus/".count))))
        }
        #expect(koe.hiddenFiles(under: "out").isEmpty)

        let converted = try good.map { try koe.identity(of: "out/" + $0.dropFirst("corpus/".count)) }
        let second = try koe.run("batch", "-o", "out", "-r", "corpus", "--pitch", "1.2")
        #expect(second.status == 1)
        #expect(second.standardError.contains("0 ok, \(bad.count) failed, \(good.count) skipped of 200 inputs"), "\(second.standardError)")
        let rerun = Array(try koe.manifest("out/koe-manifest.jsonl").dropFirst(200))
        #expect(rerun.count == 200)
        #expect(good.allSatisfy { rerun.last(for: $0)?.status == "skipped" })
        #expect(bad.keys.allSatisfy { rerun.last(for: $0)?.status == "failed" })
        #expect(try good.map { try koe.identity(of: "out/" + $0.dropFirst("corpus/".count)) } == converted, "a skipped output was rewritten")
    }

    @Test func shardsCoverEveryInputExactlyOnce() throws {
        var inputs: [String] = []
        for index in 0..<30 {
            let name = "in/\(index % 3)/clip\(index).wav"
            if index % 10 == 7 {
                try koe.writeBadInput(.randomBytes, to: name)
            } else {
                try koe.writeSpeechSnippet(to: name, seconds: 0.05, index: index)
            }
            inputs.append(name)
        }
        let shards = try (1...3).map { shard in
            try koe.start(["batch", "-o", "out", "-r", "in", "--gain", "-3", "--shard", "\(shard)/3", "--quiet"])
        }
        for shard in shards { shard.waitUntilExit() }
        #expect(shards.allSatisfy { [0, 1].contains($0.terminationStatus) })

        let recorded = try (1...3).flatMap { try koe.manifest("out/koe-manifest.shard-\($0)-of-3.jsonl") }
        #expect(recorded.map(\.input).sorted() == inputs.sorted())
        for shard in 1...3 {
            #expect(try koe.manifest("out/koe-manifest.shard-\(shard)-of-3.jsonl").count == 10)
        }

        // Unsharded, the same batch finds the shards' manifests and redoes only what failed.
        let whole = try koe.run("batch", "-o", "out", "-r", "in", "--gain=-3")
        #expect(whole.standardError.contains("0 ok, 3 failed, 27 skipped of 30 inputs"), "\(whole.standardError)")
    }

    @Test func listOnStandardInputWithOutputType() throws {
        try koe.writeSpeechSnippet(to: "a/one.wav", seconds: 0.05, index: 1)
        try koe.writeSpeechSnippet(to: "b/two.aiff", seconds: 0.05, index: 2)
        try FileManager.default.createDirectory(atPath: koe.path("folder"), withIntermediateDirectories: true)
        let list = "a/one.wav\r\n\n./b/two.aiff\nfolder\n../escape.wav\nmissing.wav\n"
        let result = try koe.run(["batch", "-o", "out", "--list", "-", "--out-type", "flac", "--gain=-3"], input: Data(list.utf8))
        #expect(result.status == 1)
        #expect(try AudioFile(reading: koe.path("out/a/one.flac")).format.description.hasPrefix("FLAC"))
        try koe.expectComplete("out/a/one.flac", sameLengthAs: "a/one.wav")
        try koe.expectComplete("out/b/two.flac", sameLengthAs: "b/two.aiff")
        let records = try koe.manifest("out/koe-manifest.jsonl")
        #expect(records.last(for: "folder")?.error?.contains("--recursive") == true)
        #expect(records.last(for: "../escape.wav")?.error?.contains("..") == true)
        #expect(records.last(for: "missing.wav")?.error?.contains("no such file") == true)
        #expect(records.count == 5)
    }

    @Test func unrecordedOutputIsRedoneAndForceRedoesAll() throws {
        try koe.writeSpeechSnippet(to: "in/a.wav", seconds: 0.05, index: 1)
        try koe.writeSpeechSnippet(to: "in/b.wav", seconds: 0.05, index: 2)
        try FileManager.default.createDirectory(atPath: koe.path("out/in"), withIntermediateDirectories: true)
        koe.write(Array("left by a crash".utf8), to: "out/in/a.wav")
        #expect(try koe.run("batch", "-o", "out", "in/a.wav", "in/b.wav", "--gain=-3").status == 0)
        try koe.expectComplete("out/in/a.wav", sameLengthAs: "in/a.wav")

        let before = try koe.identity(of: "out/in/b.wav")
        let forced = try koe.run("batch", "-o", "out", "in/a.wav", "in/b.wav", "--gain=-3", "--force")
        #expect(forced.standardError.contains("2 ok, 0 failed, 0 skipped"), "\(forced.standardError)")
        #expect(try koe.identity(of: "out/in/b.wav") != before)
    }

    /// A manifest whose last line a crash cut short still works: the line is passed over and the next
    /// record starts on a line of its own.
    @Test func manifestCutShortMidLine() throws {
        try koe.writeSpeechSnippet(to: "in/a.wav", seconds: 0.05, index: 1)
        try koe.writeSpeechSnippet(to: "in/b.wav", seconds: 0.05, index: 2)
        #expect(try koe.run("batch", "-o", "out", "-r", "in", "--gain=-3").status == 0)
        let lines = String(decoding: koe.bytes(of: "out/koe-manifest.jsonl"), as: UTF8.self).split(separator: "\n")
        koe.write(Array((lines[0] + "\n" + lines[1].prefix(30)).utf8), to: "out/koe-manifest.jsonl")
        let rerun = try koe.run("batch", "-o", "out", "-r", "in", "--gain=-3")
        #expect(rerun.standardError.contains("1 ok, 0 failed, 1 skipped"), "\(rerun.standardError)")
        let after = String(decoding: koe.bytes(of: "out/koe-manifest.jsonl"), as: UTF8.self).split(separator: "\n")
        #expect(after.count == 4)
        #expect(after[1] == lines[1].prefix(30))
        #expect(after[2...].allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    @Test func usageErrorsExitWithTwoAndLeaveNothing() throws {
        try koe.writeSpeechSnippet(to: "in/a.wav", seconds: 0.05, index: 1)
        try koe.writeSpeechSnippet(to: "in/a.flac", seconds: 0.05, index: 2)
        let cases: [([String], String)] = [
            (["batch", "-o", "out"], "--list"),
            (["batch", "in/a.wav"], "--output-dir"),
            (["batch", "-o", "out", "--shard", "4/3", "in/a.wav"], "share 4/3 does not exist: N must be at least 1 and I from 1 to N"),
            (["batch", "-o", "out", "--shard", "0/3", "in/a.wav"], "share 0/3 does not exist"),
            (["batch", "-o", "out", "--shard", "2-of-3", "in/a.wav"], "malformed share '2-of-3': expected I/N"),
            (["batch", "-o", "out", "--jobs", "0", "in/a.wav"], "--jobs"),
            (["batch", "-o", "out", "--out-type", "xyz", "in/a.wav"], "xyz"),
            (["batch", "-o", "out", "--pitch", "0", "in/a.wav"], "--pitch"),
            (["batch", "-o", "out", "--list", "absent.txt"], "absent.txt"),
            (["batch", "-o", "out", "-r", "in", "--out-type", "wav"], "would both be written to out/a.wav"),
            (["batch", "-o", "in/a.wav/out", "in/a.wav"], "in/a.wav"),
        ]
        for (arguments, detail) in cases {
            let before = koe.contents()
            let result = try koe.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.errorLines.count == 1 && result.standardError.hasPrefix("koe: error: "), "\(result.standardError)")
            #expect(result.standardError.contains(detail), "\(arguments): \(result.standardError)")
            #expect(koe.contents() == before, "\(arguments) left files")
        }
        let help = try koe.run("batch", "--help")
        #expect(help.standardOutput.contains("Exit status: 0"))
    }
}

// MARK: - Helpers shared by the batch suites

/// One manifest line, as the tests read it.
struct ManifestRecord {
    let input: String
    let output: String?
    let status: String
    let error: String?
}

/// `koe batch --analyze`: per input, the folder `koe analyze` writes.
@Suite struct BatchAnalyzeTests {
    let koe = CommandRunner()

    @Test func eachFolderIsWhatAnalyzeWrites() throws {
        let inputs = ["in/a.wav", "in/deep/b.flac", "in/deep/er/c.wav"]
        for (index, name) in inputs.enumerated() { try koe.writeSpeechSnippet(to: name, seconds: 0.3, index: index) }
        let options = ["--f0-method", "harvest", "--frame-period", "10", "--f0-floor", "50", "--f0-ceil", "1100"]
        let batch = try koe.run(["batch", "--analyze", "-o", "feats", "-r", "in", "--quiet"] + options)
        #expect(batch.status == 0, "\(batch.standardError)")
        for (name, folder) in zip(inputs, ["feats/a", "feats/deep/b", "feats/deep/er/c"]) {
            let alone = try koe.run(["analyze", name, "--output-dir", "alone/" + folder] + options)
            #expect(alone.status == 0, "\(alone.standardError)")
            for file in ["f0.npy", "time.npy", "sp.npy", "ap.npy", "meta.json"] {
                let written = koe.bytes(of: folder + "/" + file)
                #expect(!written.isEmpty && written == koe.bytes(of: "alone/" + folder + "/" + file), "\(folder)/\(file)")
            }
        }
        let records = try koe.manifest("feats/koe-manifest.jsonl")
        #expect(records.map(\.status) == ["ok", "ok", "ok"])
        #expect(koe.hiddenFiles(under: "feats").isEmpty)

        let rerun = try koe.run(["batch", "--analyze", "-o", "feats", "-r", "in"] + options)
        #expect(rerun.status == 0 && rerun.standardError.contains("0 ok, 0 failed, 3 skipped"), "\(rerun.standardError)")
    }

    @Test func refusesWhatDoesNotApply() throws {
        try koe.writeSpeechSnippet(to: "in/a.wav", seconds: 0.1, index: 0)
        try koe.expectFailure("batch", "--analyze", "-o", "feats", "in/a.wav", "--pitch", "1.2", mentioning: "--pitch")
        try koe.expectFailure("batch", "--analyze", "-o", "feats", "in/a.wav", "--out-type", "flac", mentioning: "--out-type")
        try koe.expectFailure("batch", "-o", "out", "in/a.wav", "--channel", "1", mentioning: "--channel")
        #expect(!FileManager.default.fileExists(atPath: koe.path("feats/a")))
    }

    @Test func aChannelThatIsNotThereFailsThatInput() throws {
        try koe.writeSpeechSnippet(to: "in/a.wav", seconds: 0.1, index: 0)
        let batch = try koe.run("batch", "--analyze", "-o", "feats", "in/a.wav", "--channel", "1")
        #expect(batch.status == 1)
        #expect(try koe.manifest("feats/koe-manifest.jsonl").last(for: "in/a.wav")?.error?.contains("channel") == true)
    }
}

extension Array where Element == ManifestRecord {
    func last(for input: String) -> ManifestRecord? { last { $0.input == input } }
}

/// Sample speech from the repository's samples folder, read once.
enum SampleSpeech {
    static let sampleRate = 16000
    static let clips: [[Double]] = ["en-m-16k.wav", "ja-f-16k.wav"].map { name in
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples")
        // The samples are part of the repository; without them there is nothing to test on.
        return try! AudioFile(reading: folder.appendingPathComponent(name).path).readChannel(0)
    }
}

extension CommandRunner {
    /// A mono 16 kHz snippet of sample speech, different for each index, in the format the name's extension picks.
    func writeSpeechSnippet(to name: String, seconds: Double, index: Int) throws {
        let clip = SampleSpeech.clips[index % SampleSpeech.clips.count]
        let length = Int(seconds * Double(SampleSpeech.sampleRate))
        let start = (index * 997) % (clip.count - length)
        try makeFolder(for: name)
        try writeAudio(Array(clip[start..<start + length]), sampleRate: SampleSpeech.sampleRate, to: name)
    }

    func writeBadInput(_ kind: BatchTests.BadInput, to name: String) throws {
        try makeFolder(for: name)
        switch kind {
        case .empty:
            write([], to: name)
        case .truncated:
            try writeSpeechSnippet(to: name, seconds: 0.1, index: 0)
            let bytes = bytes(of: name)
            write(Array(bytes.prefix(44 + (bytes.count - 44) / 2)), to: name)
        case .randomBytes:
            let noise = Signals.whiteNoise(count: 3000, amplitude: 128, seed: UInt64(name.utf8.count))
            write(noise.map { UInt8(truncatingIfNeeded: Int($0) + 128) }, to: name)
        }
    }

    private func makeFolder(for name: String) throws {
        let folder = URL(fileURLWithPath: path(name)).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// Every record of a manifest; a line that is not JSON fails the test.
    func manifest(_ name: String) throws -> [ManifestRecord] {
        let text = String(decoding: bytes(of: name), as: UTF8.self)
        return try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            return ManifestRecord(
                input: object["input"] as? String ?? "", output: object["output"] as? String,
                status: object["status"] as? String ?? "", error: object["error"] as? String)
        }
    }

    /// The output is a complete audio file: readable to its end, at the input's rate and length.
    func expectComplete(_ output: String, sameLengthAs input: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let original = try AudioFile(reading: path(input))
        let converted = try AudioFile(reading: path(output))
        #expect(converted.sampleRate == original.sampleRate, sourceLocation: sourceLocation)
        #expect(converted.frames == original.frames, "\(output)", sourceLocation: sourceLocation)
        let samples = try converted.readChannel(0)
        #expect(samples.count == original.frames, sourceLocation: sourceLocation)
        #expect(samples.allSatisfy { $0.isFinite }, sourceLocation: sourceLocation)
    }

    /// Inode and modification time: a file rewritten, even by rename, shows a different identity.
    func identity(of name: String) throws -> [Int] {
        var status = stat()
        try #require(stat(path(name), &status) == 0, "\(name) missing")
        return [Int(status.st_ino), Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec)]
    }

    /// Hidden files under a folder: temporary files left behind would show here.
    func hiddenFiles(under folder: String) -> [String] {
        (FileManager.default.subpaths(atPath: path(folder)) ?? []).filter { $0.split(separator: "/").last?.hasPrefix(".") == true }
    }

    /// Runs koe with `input` on its standard input.
    func run(_ arguments: [String], input: Data) throws -> CommandResult {
        let process = koeProcess(arguments)
        let standardInput = Pipe()
        let standardError = Pipe()
        process.standardInput = standardInput
        process.standardOutput = FileHandle.nullDevice
        process.standardError = standardError
        try process.run()
        standardInput.fileHandleForWriting.write(input)
        try standardInput.fileHandleForWriting.close()
        let errorData = standardError.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, standardOutput: "", standardError: String(decoding: errorData, as: UTF8.self))
    }

    /// Starts koe without waiting for it; its output goes nowhere.
    func start(_ arguments: [String]) throws -> Process {
        let process = koeProcess(arguments)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }
}
