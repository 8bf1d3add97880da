import Foundation
@testable import KoeIO
import Testing
import TestSupport

@Suite struct ConvertTests {
    let koe = CommandRunner()

    /// The flags that describe 16-bit signed mono raw PCM at 16 kHz.
    static let raw16 = ["--type", "raw", "--rate", "16000", "--encoding", "signed", "--bits", "16", "--channels", "1"]

    private func samples(of name: String) throws -> [Double] {
        try AudioFile(reading: koe.path(name)).readChannel(0)
    }

    private func convert(_ arguments: String...) throws {
        try convert(arguments)
    }

    private func convert(_ arguments: [String]) throws {
        let result = try koe.run(arguments)
        try #require(result.status == 0, "koe \(arguments.joined(separator: " ")): \(result.standardError)")
    }

    // MARK: Lengths and equivalence

    @Test func outputIsAsLongAsTheInput() throws {
        try koe.writeVowel()
        try convert("convert", "vowel.wav", "out.wav", "--pitch", "1.2", "--formant", "1.1")
        let output = try AudioFile(reading: koe.path("out.wav"))
        #expect(output.frames == 8000)
        #expect(output.sampleRate == 16000)
        #expect(output.channels == 1)
        #expect(try output.readChannel(0).map(abs).max() ?? 0 > 0.05)
    }

    @Test(arguments: [1.5, 0.8, 1.3])
    func tempoScalesTheLength(tempo: Double) throws {
        try koe.writeVowel()
        try convert("convert", "vowel.wav", "out.wav", "--tempo", String(tempo))
        #expect(try AudioFile(reading: koe.path("out.wav")).frames == Int((8000 / tempo).rounded()))
    }

    @Test func chunkSizesGiveIdenticalOutput() throws {
        try koe.writeVowel(duration: 0.3)
        try convert("convert", "vowel.wav", "default.wav", "--pitch", "1.2", "--formant", "1.1")
        let whole = try samples(of: "default.wav")
        for size in [1, 17, 4096] {
            try convert("convert", "vowel.wav", "chunked.wav", "--pitch", "1.2", "--formant", "1.1", "--chunk-size", String(size))
            #expect(try samples(of: "chunked.wav") == whole, "--chunk-size \(size)")
        }
    }

    @Test func threadCountsAndChunkSizesGiveIdenticalOutput() throws {
        let speech = Signals.vowel(f0: 140, sampleRate: 48000, duration: 0.4)
            + Signals.whiteNoise(count: 9600, amplitude: 0.05)
            + Signals.vowel(f0: 210, sampleRate: 48000, duration: 0.3, formants: [500, 1500, 2500])
        // 32-bit float output shows any difference; its header's PEAK chunk holds a time stamp, so samples are compared.
        try koe.writeAudio(speech, sampleRate: 48000, to: "speech.wav", encoding: .float32)
        let change = ["--pitch", "1.2", "--formant", "1.1"]
        for method in ["dio", "harvest"] {
            try convert(["speech.wav", "one.wav", "--f0-method", method, "--threads", "1"] + change)
            let reference = try samples(of: "one.wav")
            try #require(reference.count == speech.count)
            for threads in [2, 3] {
                try convert(["speech.wav", "more.wav", "--f0-method", method, "--threads", String(threads)] + change)
                let same = try samples(of: "more.wav") == reference
                #expect(same, "\(method), --threads \(threads)")
            }
            for size in [1, 17, 4096] where method == "dio" {
                try convert(["speech.wav", "more.wav", "--threads", "2", "--chunk-size", String(size)] + change)
                let same = try samples(of: "more.wav") == reference
                #expect(same, "--threads 2 --chunk-size \(size)")
            }
        }
        try koe.writeAudio(speech, sampleRate: 48000, to: "speech16.wav")
        try convert(["speech16.wav", "one16.wav", "--threads", "1"] + change)
        try convert(["speech16.wav", "two16.wav", "--threads", "2"] + change)
        let sameBytes = koe.bytes(of: "two16.wav") == koe.bytes(of: "one16.wav")
        #expect(sameBytes, "16-bit files, --threads 2 and 1")
        let raw48 = ["--type", "raw", "--rate", "48000", "--encoding", "signed", "--bits", "16", "--channels", "1"]
        let input = Self.int16Bytes(try samples(of: "speech16.wav"))
        let piped = try koe.run(["-", "-", "--threads", "2"] + change + raw48, standardInput: input)
        try #require(piped.status == 0, "\(piped.standardError)")
        let samePipe = piped.standardOutput == Self.int16Bytes(try samples(of: "one16.wav"))
        #expect(samePipe, "pipe with --threads 2")
    }

    @Test func pipeGivesWhatTheFileGives() throws {
        try koe.writeVowel()
        try convert("convert", "vowel.wav", "out.wav", "--pitch", "1.2")
        let input = Self.int16Bytes(try samples(of: "vowel.wav"))
        let piped = try koe.run(["-", "-", "--pitch", "1.2"] + Self.raw16, standardInput: input)
        try #require(piped.status == 0, "\(piped.standardError)")
        #expect(piped.standardOutput == Self.int16Bytes(try samples(of: "out.wav")))
    }

    @Test func eachChannelIsConvertedOnItsOwn() throws {
        let vowel = Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.3)
        let other = Signals.vowel(f0: 110, sampleRate: 16000, duration: 0.3, formants: [500, 1500, 2500])
        let stereo = try AudioFile(writing: koe.path("stereo.wav"), sampleRate: 16000, channels: 2, encoding: .float32)
        try stereo.write(channels: [vowel, other])
        try stereo.close()
        try koe.writeAudio(vowel, to: "left.wav", encoding: .float32)
        try koe.writeAudio(other, to: "right.wav", encoding: .float32)
        for name in ["stereo", "left", "right"] {
            try convert(name + ".wav", name + "-out.wav", "--pitch", "1.2")
        }
        let output = try AudioFile(reading: koe.path("stereo-out.wav"))
        #expect(output.channels == 2)
        #expect(try output.readChannel(0) == samples(of: "left-out.wav"))
        #expect(try AudioFile(reading: koe.path("stereo-out.wav")).readChannel(1) == samples(of: "right-out.wav"))
    }

    @Test func noOptionsCopiesTheSamples() throws {
        let signal = Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.5)
        try koe.writeAudio(signal, to: "vowel.wav", encoding: .float32)
        try convert("vowel.wav", "out.wav")
        #expect(try samples(of: "out.wav") == samples(of: "vowel.wav"))
    }

    @Test(.enabled(if: Self.sox != nil, "sox is not installed"))
    func equalizerAloneMatchesSox() throws {
        let noise = Signals.whiteNoise(count: 16000, amplitude: 0.2, seed: 3)
        try koe.writeAudio(noise, to: "noise.wav", encoding: .float32)
        let result = try koe.run("noise.wav", "koe.wav", "--eq", "peak:1000:6:1.4", "--json")
        try #require(result.status == 0, "\(result.standardError)")
        let stats = try Self.jsonObject(result.standardError)
        #expect(stats["latency_ms"] as? Double == 5, "EQ alone must leave the vocoder out: only the limiter's look-ahead")
        try Self.runSox(["-D", "-V1", koe.path("noise.wav"), "-e", "floating-point", "-b", "32", koe.path("sox.wav"),
                         "equalizer", "1000", "1.4q", "6"])
        let ours = try samples(of: "koe.wav")
        let theirs = try samples(of: "sox.wav")
        #expect(ours.count == theirs.count)
        #expect(Self.snr(ours, reference: theirs) >= 60)
        #expect(Self.snr(noise, reference: theirs) < 20, "the EQ must change the signal for the match to mean something")
    }

    // MARK: Reporting and the command line

    @Test func jsonIsOneObjectWithTheDocumentedKeys() throws {
        try koe.writeVowel()
        let result = try koe.run("convert", "vowel.wav", "out.wav", "--pitch", "1.5", "--json", "--threads", "1")
        try #require(result.status == 0, "\(result.standardError)")
        #expect(result.errorLines.count == 1)
        let stats = try Self.jsonObject(result.standardError)
        let keys: Set = [
            "input_seconds", "output_seconds", "sample_rate", "channels", "processing_seconds", "real_time_factor",
            "latency_ms", "latency_bound_ms", "live", "clipped_samples", "median_f0_in", "median_f0_out", "profile",
            "pitch_ratio", "formant_ratio", "clamped",
        ]
        #expect(Set(stats.keys) == keys)
        #expect(stats["sample_rate"] as? Int == 16000)
        #expect(stats["channels"] as? Int == 1)
        #expect(stats["input_seconds"] as? Double == 0.5)
        #expect(stats["output_seconds"] as? Double == 0.5)
        #expect(stats["clipped_samples"] as? Int == 0)
        let latency = try #require(stats["latency_ms"] as? Double)
        let bound = try #require(stats["latency_bound_ms"] as? Double)
        #expect(latency > 0 && latency <= bound, "held back \(latency) ms, bound \(bound) ms")
        let medianIn = try #require(stats["median_f0_in"] as? Double)
        let medianOut = try #require(stats["median_f0_out"] as? Double)
        #expect(abs(medianIn - 150) < 3)
        #expect(abs(medianOut / medianIn - 1.5) < 0.01)
    }

    /// The look-ahead moves the latency bound by itself; 300 ms is past both methods' defaults (DIO 80, Harvest 150).
    @Test(arguments: [("dio", 220.0), ("harvest", 150.0)])
    func lookAheadAddsItsLatency(method: String, added: Double) throws {
        try koe.writeVowel()
        func latencyBound(_ options: [String]) throws -> Double {
            let arguments = ["vowel.wav", "out.wav", "--pitch", "1.2", "--json", "--f0-method", method] + options
            let result = try koe.run(arguments)
            try #require(result.status == 0, "\(result.standardError)")
            return try #require(try Self.jsonObject(result.standardError)["latency_bound_ms"] as? Double)
        }
        let longer = try latencyBound(["--look-ahead", "300"]) - latencyBound([])
        #expect(abs(longer - added) < 0.1, "--look-ahead 300 added \(longer) ms")
    }

    @Test func convertIsTheDefaultSubcommand() throws {
        try koe.writeVowel()
        try convert("vowel.wav", "out.wav", "--pitch", "1.2")
        #expect(try AudioFile(reading: koe.path("out.wav")).frames == 8000)
    }

    @Test func presetsAreListed() throws {
        let result = try koe.run("presets")
        #expect(result.status == 0)
        let names = result.standardOutput.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        for name in ["kawaii", "deep", "child", "giant", "robot", "whisper"] {
            #expect(names.contains(name), "\(result.standardOutput)")
        }
    }

    /// Presets that take the other paths through the chain: tempo, monotone with EQ, noise excitation.
    @Test(arguments: ["giant", "robot", "whisper"])
    func presetConverts(name: String) throws {
        try koe.writeVowel()
        try convert("vowel.wav", "out.wav", "--preset", name)
        let output = try AudioFile(reading: koe.path("out.wav"))
        #expect(output.frames == (name == "giant" ? Int((8000 / 0.9).rounded()) : 8000))
        #expect(try output.readChannel(0).map(abs).max() ?? 0 > 0.01)
    }

    /// A preset is made for any recording: kawaii's 5 kHz shelf is left out at 8 kHz, where a `--eq` band
    /// at that frequency is refused.
    @Test func presetBandBeyondTheRateIsLeftOut() throws {
        try koe.writeVowel(sampleRate: 8000)
        // The ratios given, so that only the band can differ (the preset alone aims at its target).
        try convert("vowel.wav", "preset.wav", "--preset", "kawaii", "--pitch", "1.6", "--formant", "1.2")
        try convert("vowel.wav", "voice.wav", "--pitch", "1.6", "--formant", "1.2")
        #expect(try samples(of: "preset.wav") == samples(of: "voice.wav"))
        try koe.expectFailure("vowel.wav", "out.wav", "--preset", "kawaii", "--eq", "highshelf:5000:3", mentioning: "Nyquist")
    }

    // MARK: Bad flags

    @Test(arguments: [
        ["--pitch", "0"],
        ["--pitch=-1.2"],
        ["--pitch", "nan"],
        ["--pitch", "1.2", "--semitones", "3"],
        ["--formant", "0"],
        ["--tempo", "0"],
        ["--pitch-range=-1"],
        ["--preset", "banshee"],
        ["--eq", "notch:1000:3"],
        ["--eq", "peak"],
        ["--eq", "peak:1000:6:1:9"],
        ["--eq", "peak:loud:6"],
        ["--eq", "peak::6"],
        ["--eq", "lowpass:1000:6"],
        ["--eq", "peak:1000:6:0"],
        ["--geq", "1,2,3"],
        ["--chunk-size", "0"],
        ["--look-ahead=-1"],
        ["--look-ahead", "nan"],
        ["--look-ahead", "20000"],
        ["--progress", "--quiet"],
    ])
    func badVoiceAndEqualizerFlags(options: [String]) throws {
        try koe.writeVowel()
        try koe.expectFailure(["convert", "vowel.wav", "out.wav"] + options)
    }

    @Test(arguments: ["peak:8000:3", "highshelf:9000:3", "lowpass:8k"])
    func bandAtOrAboveNyquist(band: String) throws {
        try koe.writeVowel()
        try koe.expectFailure("convert", "vowel.wav", "out.wav", "--eq", band, mentioning: "Nyquist")
    }

    @Test(arguments: [
        ["-", "out.wav"],
        ["-", "out.wav", "--type", "raw", "--rate", "16000"],
        ["-", "out.wav", "--type", "wav", "--rate", "16000", "--encoding", "signed", "--bits", "16", "--channels", "1"],
        ["-", "out.wav", "--type", "raw", "--rate", "16000", "--encoding", "float", "--bits", "16", "--channels", "1"],
        ["-", "out.wav", "--type", "raw", "--rate", "16000", "--encoding", "signed", "--bits", "12", "--channels", "1"],
        ["-", "out.wav", "--type", "raw", "--rate", "0", "--encoding", "signed", "--bits", "16", "--channels", "1"],
        ["-", "out.wav", "--type", "raw", "--rate", "16000", "--encoding", "signed", "--bits", "16", "--channels", "0"],
        ["-", "out.wav", "--type", "raw", "--rate", "16000", "--encoding", "ulaw", "--bits", "8", "--channels", "1"],
        ["vowel.wav", "out.wav", "--rate", "16000"],
        ["vowel.wav", "-"],
        ["vowel.wav", "out.wav", "--out-bits", "16"],
    ])
    func rawFlagsMissingOrContradictory(arguments: [String]) throws {
        try koe.writeVowel()
        try expectFailure(arguments, standardInput: Self.int16Bytes(Array(repeating: 0.1, count: 1600)))
    }

    // MARK: Bad input and output

    @Test func oddByteCountAtTheEndOfARawStream() throws {
        let bytes = Self.int16Bytes(Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.5)) + [0x7F]
        try expectFailure(["-", "out.wav", "--pitch", "1.2"] + Self.raw16, standardInput: bytes, mentioning: "stray byte")
        try expectFailure(["-", "out.wav"] + Self.raw16, standardInput: bytes, mentioning: "stray byte")
    }

    @Test func emptyStandardInput() throws {
        try expectFailure(["-", "out.wav", "--pitch", "1.2"] + Self.raw16, standardInput: [], mentioning: "no audio")
        try expectFailure(["-", "-", "--pitch", "1.2"] + Self.raw16, standardInput: [], mentioning: "no audio")
    }

    @Test func unreadableOrNonAudioInput() throws {
        try koe.expectFailure("convert", "absent.wav", "out.wav", mentioning: "absent.wav")
        koe.write(Array("not a sound\n".utf8), to: "notes.wav")
        try koe.expectFailure("convert", "notes.wav", "out.wav", mentioning: "notes.wav")
        koe.write([], to: "empty.wav")
        try koe.expectFailure("convert", "empty.wav", "out.wav", mentioning: "empty.wav")
        try FileManager.default.createDirectory(atPath: koe.path("folder.wav"), withIntermediateDirectories: false)
        try koe.expectFailure("convert", "folder.wav", "out.wav", mentioning: "folder.wav")
    }

    /// 10 ms and a single sample, far shorter than one analysis window (1864 samples at 44.1 kHz): converted
    /// like any input, as long as it (or as the tempo makes it). Floats, so a non-finite sample would show.
    @Test(arguments: [441, 1])
    func inputShorterThanAnAnalysisWindow(length: Int) throws {
        let input = Array(Signals.vowel(f0: 150, sampleRate: 44100, duration: 0.01).prefix(length))
        try koe.writeAudio(input, sampleRate: 44100, to: "blip.wav", encoding: .float32)
        let variants: [([String], Double)] = [([], 1), (["--live"], 1), (["--f0-method", "harvest"], 1), (["--tempo", "0.8"], 0.8)]
        for (flags, tempo) in variants {
            try convert(["convert", "blip.wav", "out.wav", "--pitch", "1.2"] + flags)
            let output = try AudioFile(reading: koe.path("out.wav"))
            #expect(output.frames == Int((Double(length) / tempo).rounded()), "\(flags)")
            #expect(try output.readChannel(0).allSatisfy { $0.isFinite }, "\(flags)")
        }
    }

    @Test func unwritableOutput() throws {
        try koe.writeVowel()
        if let locked = koe.unwritableFolder() {
            try koe.expectFailure("convert", "vowel.wav", locked + "/out.wav", "--pitch", "1.2", mentioning: locked)
        }
        try koe.expectFailure("convert", "vowel.wav", "absent/out.wav", mentioning: "absent")
        try koe.expectFailure("convert", "vowel.wav", "out.unknown", mentioning: "out.unknown")
    }

    @Test func inputIsTheOutput() throws {
        try koe.writeVowel()
        try FileManager.default.createSymbolicLink(atPath: koe.path("link.wav"), withDestinationPath: "vowel.wav")
        let before = koe.bytes(of: "vowel.wav")
        for output in ["vowel.wav", "./vowel.wav", koe.path("vowel.wav"), "link.wav"] {
            try koe.expectFailure("convert", "vowel.wav", output, "--pitch", "1.2", mentioning: "same file")
            #expect(koe.bytes(of: "vowel.wav") == before, "the input was overwritten through \(output)")
        }
    }

    // MARK: Helpers

    /// Like `CommandRunner.expectFailure`, with bytes on standard input; standard output may hold nothing either.
    private func expectFailure(
        _ arguments: [String], standardInput: [UInt8], mentioning detail: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = koe.contents()
        let result = try koe.run(arguments, standardInput: standardInput)
        let lines = result.standardError.split(separator: "\n")
        #expect(result.status != 0, "exit status", sourceLocation: sourceLocation)
        #expect(lines.count == 1 && result.standardError.hasPrefix("koe: error: "), "stderr: \(result.standardError)",
                sourceLocation: sourceLocation)
        if let detail {
            #expect(result.standardError.contains(detail), "stderr: \(result.standardError)", sourceLocation: sourceLocation)
        }
        #expect(result.standardOutput.isEmpty, "standard output", sourceLocation: sourceLocation)
        #expect(koe.contents() == before, "files left behind", sourceLocation: sourceLocation)
    }

    static func int16Bytes(_ samples: [Double]) -> [UInt8] {
        samples.flatMap { sample -> [UInt8] in
            let value = UInt16(bitPattern: Int16(max(-32768, min(32767, (sample * 32768).rounded()))))
            return [UInt8(value & 0xFF), UInt8(value >> 8)]
        }
    }

    static func jsonObject(_ text: String) throws -> [String: Any] {
        let data = Data(text.utf8)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "not one JSON object: \(text)")
    }

    static func snr(_ candidate: [Double], reference: [Double]) -> Double {
        let signal = reference.reduce(0) { $0 + $1 * $1 }
        let noise = zip(reference, candidate).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
        return 10 * log10(signal / noise)
    }

    static let sox: String? = ProcessInfo.processInfo.environment["PATH"]?
        .split(separator: ":")
        .map { String($0) + "/sox" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static func runSox(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(sox))
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "sox \(arguments.joined(separator: " "))")
    }
}

/// What a run of koe with bytes on standard input left: its status, the bytes on standard output, its messages.
struct BinaryCommandResult {
    let status: Int32
    let standardOutput: [UInt8]
    let standardError: String
}

extension CommandRunner {
    /// Runs koe with `standardInput` on its standard input, collecting standard output as bytes.
    func run(_ arguments: [String], standardInput: [UInt8]) throws -> BinaryCommandResult {
        // koe may exit before reading everything: the write must then fail with EPIPE, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        let process = koeProcess(arguments)
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Fed from another thread, so that koe's output never waits on a pipe nobody is reading yet.
        let writer = input.fileHandleForWriting
        let feeding = Thread {
            try? writer.write(contentsOf: Data(standardInput))
            try? writer.close()
        }
        feeding.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return BinaryCommandResult(
            status: process.terminationStatus,
            standardOutput: [UInt8](outputData),
            standardError: String(decoding: errorData, as: UTF8.self))
    }
}

/// The command line's settings are the settings table's: convert's options for them, by name, and nothing else.
@Suite struct SettingsTableTests {
    let koe = CommandRunner()

    @Test func convertsOptionsAreTheTablesSettings() throws {
        let table = try koe.run("settings", "--json")
        try #require(table.status == 0)
        let settings = try #require(try JSONSerialization.jsonObject(with: Data(table.standardOutput.utf8)) as? [String: Any])
        let help = try koe.run("convert", "--help")
        let flags = Set(help.standardOutput.matches(of: /--([a-z0-9-]+)/).map { String($0.1) })
        // vibrato_rate and vibrato_depth are --vibrato RATE:DEPTH's two fields.
        let parts: Set = ["vibrato-rate", "vibrato-depth"]
        for name in settings.keys.map({ $0.replacingOccurrences(of: "_", with: "-") }) where !parts.contains(name) {
            #expect(flags.contains(name), "convert has no --\(name)")
        }
    }

    @Test func refusesBeyondTheRangeWithTheRange() throws {
        for (flag, value, range) in [("--pitch", "32", "0.0625 and 16"), ("--formant", "64", "0.0625 and 16"), ("--gain", "200", "-60 and 60 dB")] {
            let result = try koe.run("convert", "in.wav", "out.wav", flag, value)
            #expect(result.status == 2 && result.errorLines == ["koe: error: \(flag) must be between \(range) (got \(value))"])
        }
    }
}
