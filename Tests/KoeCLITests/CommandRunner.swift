import Foundation
@testable import KoeIO
import TestSupport

/// What one run of the `koe` binary left: its exit status and what it printed.
struct CommandResult {
    let status: Int32
    let standardOutput: String
    let standardError: String

    var errorLines: [String] { standardError.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

/// Runs the `koe` executable built next to this test bundle, in a scratch folder of its own.
final class CommandRunner {
    private let scratch = TemporaryFolder(prefix: "koe-cli-test")

    var folder: String { scratch.path }

    /// The `koe` binary in the build products folder, beside the test bundle.
    static let executable: String = {
        let bundle = Bundle.main.bundleURL
        let candidates = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("koe").path }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            fatalError("koe executable not found beside the test bundle (looked at \(candidates))")
        }
        return found
    }()

    func run(_ arguments: String...) throws -> CommandResult {
        try run(arguments)
    }

    /// koe with `arguments`, to run in the scratch folder: not started, its standard streams not yet set.
    func koeProcess(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        return process
    }

    func run(_ arguments: [String]) throws -> CommandResult {
        let process = koeProcess(arguments)
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self))
    }

    // MARK: Scratch files

    func path(_ name: String) -> String { scratch.file(name) }

    /// Every name under the folder, hidden files and nested folders included, so leftovers show.
    func contents() -> [String] {
        (FileManager.default.subpaths(atPath: folder) ?? []).sorted()
    }

    @discardableResult
    func write(_ bytes: [UInt8], to name: String) -> String {
        _ = FileManager.default.createFile(atPath: path(name), contents: Data(bytes))
        return name
    }

    /// A mono sound file in the folder, in the format its name's extension picks.
    @discardableResult
    func writeAudio(_ samples: [Double], sampleRate: Int = 16000, to name: String, encoding: SampleEncoding? = nil) throws -> String {
        let file = try AudioFile(writing: path(name), sampleRate: sampleRate, channels: 1, encoding: encoding)
        try file.write(channels: [samples])
        try file.close()
        return name
    }

    /// A steady synthetic vowel at 150 Hz, long enough for every analysis.
    @discardableResult
    func writeVowel(to name: String = "vowel.wav", sampleRate: Int = 16000, duration: Double = 0.5) throws -> String {
        try writeAudio(Signals.vowel(f0: 150, sampleRate: sampleRate, duration: duration), sampleRate: sampleRate, to: name)
    }

    func bytes(of name: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: path(name)) ?? Data())
    }

    /// A folder this process cannot create files in, or nil if there is none.
    func unwritableFolder() -> String? {
        scratch.unwritableFolder()
    }
}
