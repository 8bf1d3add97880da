import ArgumentParser
import Glibc
import KoeIO

@main
struct KoeCommand: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "koe",
        abstract: "A voice changer for the shell, on the WORLD vocoder: pitch, formants, tempo and EQ; analysis and synthesis.",
        discussion: "koe implements Masanori Morise's WORLD vocoder (DIO, StoneMask, Harvest, CheapTrick, D4C, synthesis).",
        version: "\(version) (\(BuildInfo.commit))",
        subcommands: [Convert.self, Batch.self, Analyze.self, Synth.self, Plot.self, Profile.self, Presets.self, Settings.self, Live.self],
        defaultSubcommand: Convert.self
    )

    /// Parses, validates and runs a subcommand. Every failure ends as one line on stderr,
    /// `koe: error: ...`, and a non-zero exit status; help and version go to stdout as usual.
    static func main() {
        RawPCMWriter.ignoreBrokenPipeSignal()
        do {
            var command = try parseAsRoot()
            // koe live writes no file, and ends its session on these signals itself (LiveSignals).
            if !(command is Live) { AtomicOutput.removeTemporaryFilesOnSignals() }
            try command.run()
        } catch IOError.brokenPipe {
            // The reader of our output went away: nothing is left to say to anyone.
            Glibc.exit(0)
        } catch let status as ExitCode {
            // A command that has said what it had to say and chose its exit status (batch: some inputs failed).
            Glibc.exit(status.rawValue)
        } catch {
            let status = exitCode(for: error)
            if status.isSuccess { exit(withError: error) }
            Report.error(message(for: error))
            Glibc.exit(status == .validationFailure ? usageStatus : status.rawValue)
        }
    }

    /// The exit status of a usage error, as most Unix tools have it.
    static let usageStatus: Int32 = 2
}

/// Messages for the person at the shell, on stderr, one line each.
enum Report {
    static func error(_ message: String) {
        write("koe: error: " + oneLine(message))
    }

    static func warning(_ message: String) {
        write("koe: warning: " + oneLine(message))
    }

    /// A line for the person at the shell that is neither an error nor a warning, such as a summary.
    static func note(_ message: String) {
        write("koe: " + oneLine(message))
    }

    /// One JSON object on one line, for scripts reading stderr.
    static func json(_ object: String) {
        write(object)
    }

    /// The first line of `message`: argument-parser appends help lines to some of its messages. A list of the
    /// values an option takes, which it writes one a line, joins the line.
    static func oneLine(_ message: String) -> String {
        let lines = message.split(whereSeparator: \.isNewline).map(String.init)
        var line = lines.first ?? "failed"
        if line.hasSuffix("Please provide one of the following:") {
            let values = lines.dropFirst().map { $0.trimmingPrefix(while: { $0 == " " || $0 == "-" }) }
            line = line.dropLast("Please provide one of the following:".count) + "Known values: " + values.joined(separator: ", ")
        }
        return line.hasPrefix("Error: ") ? String(line.dropFirst("Error: ".count)) : line
    }

    private static func write(_ line: String) {
        try? Descriptors.writeAll(Array((line + "\n").utf8), to: STDERR_FILENO)
    }
}
