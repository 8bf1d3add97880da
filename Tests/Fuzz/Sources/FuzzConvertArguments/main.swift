import Foundation

// `koe convert` command lines built from fuzz input by a small grammar of its options, run through the built
// binary (KOE_BINARY) in a scratch folder. Every run must end in a success (warnings at most) or in exactly
// one `koe: error:` line and a non-zero status; never a signal, a hang, a temporary file left behind or an
// input file changed.

/// Stops the run with `message` when `condition` fails, in every build configuration.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

// MARK: Grammar

/// Reads fuzz bytes as choices; past the end every choice is the first.
private struct Choices {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> Int {
        defer { position += 1 }
        return position < bytes.count ? Int(bytes[position]) : 0
    }

    mutating func pick<T>(_ options: [T]) -> T { options[byte() % options.count] }

    mutating func double() -> Double {
        (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) }.bitsAsDouble
    }
}

private extension UInt64 {
    var bitsAsDouble: Double { Double(bitPattern: self) }
}

/// Values at and past every edge an option might have.
private let numbers = [
    "0", "-0", "1", "-1", "0.5", "2", "1.2", "16", "0.0625", "48", "-48", "100", "1e-300", "1e300", "1e308", "-1e308",
    "nan", "inf", "-inf", "4294967296", "9223372036854775807", "-9223372036854775808", "99999999999999999999",
    "", "abc", "0x10", "1e-5", "4096", "100000", "71", "800", "5", "8000", "192000", "1k", " 3",
]

private enum Value {
    case number, eqBand, graphic, pair, word([String]), none
}

private let options: [(String, Value)] = [
    ("--pitch", .number), ("--semitones", .number), ("--pitch-median", .number), ("--pitch-range", .number),
    ("--formant", .number), ("--tempo", .number), ("--preset", .word(["chipmunk", "robot", "giant", "nope", ""])),
    ("--vocoder", .none), ("--eq", .eqBand), ("--geq", .graphic), ("--gain", .number),
    ("--f0-method", .word(["dio", "harvest", "crepe"])), ("--frame-period", .number), ("--f0-floor", .number),
    ("--f0-ceil", .number), ("--type", .word(["raw", "wav"])), ("--rate", .number),
    ("--encoding", .word(["signed", "unsigned", "float", "ulaw"])), ("--bits", .number), ("--channels", .number),
    ("--endian", .word(["little", "big", "middle"])), ("--out-type", .word(["raw", "flac"])),
    ("--out-encoding", .word(["signed", "unsigned", "float"])), ("--out-bits", .number),
    ("--out-endian", .word(["little", "big"])), ("--json", .none), ("--quiet", .none), ("--chunk-size", .number),
    ("--threads", .number), ("--pitch-curve", .word(["curve.csv", "bad-curve.csv", "missing.csv", "notes.wav", "folder"])),
    ("--f0-file", .word(["f0.txt", "f0-short.txt", "curve.csv", "missing.npy", "folder"])),
    ("--snap", .word(["chromatic", "A:minor", "F#:dorian", "Bb:blues", "H:major", "C:", "major", ""])),
    ("--snap-strength", .number), ("--snap-speed", .number), ("--a4", .number), ("--vibrato", .pair),
    ("--no-limit", .none), ("--look-ahead", .number), ("--live", .none), ("--progress", .none),
]

private let inputs = ["in.wav", "stereo.wav", "silence.wav", "missing.wav", "-", "folder", "notes.wav"]
private let outputs = ["out.wav", "out.flac", "out.aiff", "out.raw", "-", "folder", "folder/out.wav", "in.wav", "./in.wav", "missing/out.wav"]

private extension Choices {
    mutating func number() -> String {
        let choice = byte() % (numbers.count + 2)
        switch choice {
        case numbers.count: return String(double())
        case numbers.count + 1: return String(byte() - 128)
        default: return numbers[choice]
        }
    }

    mutating func value(_ kind: Value) -> [String] {
        switch kind {
        case .none: return []
        case .number: return [number()]
        case .word(let words): return [pick(words)]
        case .eqBand:
            var fields = [pick(["peak", "lowshelf", "highshelf", "lowpass", "highpass", "PEAK", "notch"]), number()]
            for _ in 0..<(byte() % 4) { fields.append(number()) }
            return [fields.joined(separator: ":")]
        case .pair:
            return [number() + pick([":", "", "::"]) + number()]
        case .graphic:
            return [(0..<(byte() % 13)).map { _ in number() }.joined(separator: ",")]
        }
    }

    /// A command line, and the input it names.
    mutating func commandLine() -> (arguments: [String], input: String) {
        var arguments: [String] = []
        for _ in 0..<(byte() % 8) {
            let (name, kind) = pick(options)
            arguments += [name] + value(kind)
        }
        let positionals = [pick(inputs), pick(outputs)]
        let place = byte() % (arguments.count + 1)
        arguments.insert(contentsOf: positionals, at: place)
        if byte() % 8 == 0 { arguments.insert("convert", at: 0) }
        return (arguments, positionals[0])
    }
}

// MARK: Scratch folder

/// A 16-bit PCM WAV file of `channels` interleaved channels.
private func wave(_ samples: [Double], sampleRate: Int, channels: Int) -> [UInt8] {
    func little(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    let data = samples.flatMap { little(Int(($0 * 32767).rounded()), 2) }
    return Array("RIFF".utf8) + little(36 + data.count, 4) + Array("WAVEfmt ".utf8) + little(16, 4) + little(1, 2)
        + little(channels, 2) + little(sampleRate, 4) + little(sampleRate * channels * 2, 4) + little(channels * 2, 2)
        + little(16, 2) + Array("data".utf8) + little(data.count, 4) + data
}

private let scratch: String = {
    let folder = NSTemporaryDirectory() + "koe-fuzz-arguments-\(getpid())"
    let files = FileManager.default
    try? files.removeItem(atPath: folder)
    try! files.createDirectory(atPath: folder + "/folder", withIntermediateDirectories: true)
    let voice = (0..<1600).map { 0.5 * sin(2 * Double.pi * 150 * Double($0) / 16000) * (1 + 0.3 * sin(Double($0) / 40)) }
    let stereo = (0..<1600).flatMap { [0.4 * sin(Double($0) / 5), 0.4 * sin(Double($0) / 7)] }
    _ = files.createFile(atPath: folder + "/in.wav", contents: Data(wave(voice, sampleRate: 16000, channels: 1)))
    _ = files.createFile(atPath: folder + "/stereo.wav", contents: Data(wave(stereo, sampleRate: 8000, channels: 2)))
    _ = files.createFile(atPath: folder + "/silence.wav", contents: Data(wave(Array(repeating: 0, count: 800), sampleRate: 8000, channels: 1)))
    _ = files.createFile(atPath: folder + "/notes.wav", contents: Data("not audio\n".utf8))
    // Gone when the fuzzer exits; a finding leaves it for a look at what the run wrote.
    atexit { try? FileManager.default.removeItem(atPath: scratch) }
    // in.wav's 0.1 s at 16 kHz is 21 frames of 5 ms: f0.txt fits it, f0-short.txt does not.
    let f0 = (0..<21).map { $0 % 5 == 0 ? "0" : "150" }.joined(separator: "\n")
    _ = files.createFile(atPath: folder + "/f0.txt", contents: Data(f0.utf8))
    _ = files.createFile(atPath: folder + "/f0-short.txt", contents: Data("150\n0\n1e300\n".utf8))
    _ = files.createFile(atPath: folder + "/curve.csv", contents: Data("time,ratio\n0 1\n0.05 2\n# end\n0.1 0.5\n".utf8))
    _ = files.createFile(atPath: folder + "/bad-curve.csv", contents: Data("0 1\n0 2\nnan 17\n".utf8))
    return folder
}()

private let inputFiles = ["in.wav", "stereo.wav", "silence.wav", "notes.wav", "f0.txt", "f0-short.txt", "curve.csv", "bad-curve.csv"]
private let originals = inputFiles.map { FileManager.default.contents(atPath: scratch + "/" + $0) }

private let koe: String = {
    guard let path = ProcessInfo.processInfo.environment["KOE_BINARY"], FileManager.default.isExecutableFile(atPath: path) else {
        fatalError("set KOE_BINARY to the koe executable to fuzz")
    }
    return path
}()

/// Everything under the scratch folder, hidden files included.
private func listing() -> [String] {
    (FileManager.default.subpaths(atPath: scratch) ?? []).sorted()
}

private let initialListing = listing()

// MARK: One run

/// No conversion of these tiny inputs takes this long, even at a tempo of 1/16 with Harvest.
private let timeLimit: TimeInterval = 20

private struct Outcome {
    var status: Int32
    var endedNormally: Bool
    var timedOut: Bool
    var standardError: String
}

private func run(_ arguments: [String]) -> Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: koe)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: scratch)
    let errorPath = NSTemporaryDirectory() + "koe-fuzz-arguments-\(getpid()).err"
    _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: errorPath) }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle(forWritingAtPath: errorPath)
    do { try process.run() } catch { fatalError("cannot start \(koe): \(error)") }
    let deadline = Date(timeIntervalSinceNow: timeLimit)
    while process.isRunning && Date() < deadline { usleep(1000) }
    let timedOut = process.isRunning
    if timedOut { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return Outcome(
        status: process.terminationStatus, endedNormally: process.terminationReason == .exit, timedOut: timedOut,
        standardError: String(decoding: FileManager.default.contents(atPath: errorPath) ?? Data(), as: UTF8.self))
}

/// Removes what a run wrote and puts back input files it replaced as outputs, so every run starts alike.
private func restoreScratch() {
    for path in listing() where !initialListing.contains(path) {
        try? FileManager.default.removeItem(atPath: scratch + "/" + path)
    }
    for (name, original) in zip(inputFiles, originals) where FileManager.default.contents(atPath: scratch + "/" + name) != original {
        try? FileManager.default.removeItem(atPath: scratch + "/" + name)
        _ = FileManager.default.createFile(atPath: scratch + "/" + name, contents: original)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConvertArguments(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var choices = Choices(Array(UnsafeBufferPointer(start: data, count: size)))
    let (arguments, input) = choices.commandLine()
    let outcome = run(arguments)
    let shown = "koe " + arguments.map { "'\($0)'" }.joined(separator: " ")
    let lines = outcome.standardError.split(separator: "\n", omittingEmptySubsequences: false).dropLast()

    require(!outcome.timedOut, "\(shown): still running after \(Int(timeLimit)) s")
    require(outcome.endedNormally, "\(shown): killed by signal \(outcome.status)\n\(outcome.standardError)")
    // --progress draws its bar on standard error even when that is no terminal, each state after a carriage return.
    let showsProgress = arguments.contains("--progress")
    let messages = lines.filter { !(showsProgress && $0.hasPrefix("\r[")) }
    if outcome.status == 0 {
        require(messages.allSatisfy { $0.hasPrefix("koe: warning: ") || $0.hasPrefix("{") },
                "\(shown): succeeded with unexpected messages:\n\(outcome.standardError)")
    } else {
        require(messages.count == 1 && messages[0].hasPrefix("koe: error: "),
                "\(shown): failed (status \(outcome.status)) without exactly one error line:\n\(outcome.standardError)")
    }
    let leftovers = listing().filter { $0.split(separator: "/").last?.hasPrefix(".koe-") == true }
    require(leftovers.isEmpty, "\(shown): left temporary files \(leftovers)")
    if let index = inputFiles.firstIndex(of: input) {
        require(FileManager.default.contents(atPath: scratch + "/" + input) == originals[index], "\(shown): changed its input")
    }
    restoreScratch()
    return 0
}
