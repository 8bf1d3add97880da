import ArgumentParser
import Glibc
import KoeIO

@main
struct Koe: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "koe",
        abstract: "Analyze speech into WORLD vocoder parameters and synthesize speech from them.",
        discussion: "koe implements Masanori Morise's WORLD vocoder (DIO, StoneMask, Harvest, CheapTrick, D4C, synthesis).",
        version: version,
        subcommands: [Analyze.self, Synth.self]
    )

    /// Parses, validates and runs a subcommand. Every failure ends as one line on stderr,
    /// `koe: error: ...`, and a non-zero exit status; help and version go to stdout as usual.
    static func main() {
        AtomicOutput.removeTemporaryFilesOnSignals()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let status = exitCode(for: error)
            if status.isSuccess { exit(withError: error) }
            Report.error(message(for: error))
            Glibc.exit(status.rawValue)
        }
    }
}

/// Messages for the person at the shell, on stderr, one line each.
enum Report {
    static func error(_ message: String) {
        write("koe: error: " + oneLine(message))
    }

    static func warning(_ message: String) {
        write("koe: warning: " + oneLine(message))
    }

    /// The first line of `message`: argument-parser appends help lines to some of its messages.
    private static func oneLine(_ message: String) -> String {
        let line = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? "failed"
        return line.hasPrefix("Error: ") ? String(line.dropFirst("Error: ".count)) : line
    }

    private static func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var done = 0
        while done < bytes.count {
            let wrote = bytes[done...].withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { return }
            done += wrote
        }
    }
}
