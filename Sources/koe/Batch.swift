import ArgumentParser
import Koe
import Foundation
import Glibc
import KoeIO

struct Batch: ParsableCommand {
    static let name = "batch"

    static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "Convert many files with the same options: in parallel, resumable, sharded for clusters.",
        usage: """
            koe batch -o <dir> [<convert options>] [--jobs <n>] [--threads <n>] [--shard <i/n>]
                      [--manifest <file>] [--force] [--recursive] <input> ...
            koe batch -o <dir> [<convert options>] [...] --list <file>
            """,
        discussion: """
            Each input is converted as `koe convert` would, with the same voice, EQ and analysis options, to a \
            path under --output-dir that mirrors the input's: a file's path as given (without a leading / or \
            ./), a file found under a folder given with --recursive by its path inside that folder (hidden \
            files, and names without an audio extension, are left out). The output keeps the input's name, so \
            its format follows the input's, unless --out-type names another. Outputs appear only complete \
            (temporary file and rename). Inputs are sorted by path, so --shard I/N takes the same share on \
            every machine: the I-th of every N inputs.

            The manifest gets one JSON line per input as it completes, flushed to disk: input, output, status \
            (ok, failed or skipped), error, audio_seconds, processing_seconds, real_time_factor, clipped_samples. \
            Its default is DIR/koe-manifest.jsonl, or DIR/koe-manifest.shard-I-of-N.jsonl with --shard, so \
            shards never share a file. A rerun skips each output that exists and is recorded ok in the \
            manifest (any manifest in DIR by default), and converts everything else again: failed inputs, and \
            outputs a killed run left unrecorded. A temporary file a killed run left beside an output is removed.

            Each job is a worker process converting one file at a time (one core, or --threads shared as \
            convert shares them); a file that crashes its worker is reported failed and the batch goes on.

            Exit status: 0 every input ok or skipped; 1 some inputs failed (the others are done); 2 usage \
            error, or the batch could not start (output folder or manifest unusable), nothing converted.
            """
    )

    @Argument(help: ArgumentHelp("Audio files, or folders with --recursive.", valueName: "input"))
    var inputs: [String] = []

    @OptionGroup(title: "Batch") var batch: BatchOptions
    @OptionGroup(title: "Voice") var voice: VoiceOptions
    @OptionGroup(title: "Equalizer") var equalizer: EqualizerOptions
    @OptionGroup(title: "Analysis") var analysis: AnalysisOptions

    /// Set on the worker processes the batch starts; see `BatchWorkerPool`.
    @Flag(name: .customLong("worker"), help: .private)
    var isWorker = false

    func validate() throws {
        if inputs.isEmpty && batch.list == nil { throw ValidationError("give input files or folders, or --list FILE") }
    }

    func run() throws {
        if isWorker { return try BatchWorker.serve(convert) }
        let folder = BatchInputs.trimmingTrailingSlashes(batch.outputFolder)
        let share = try shareOfInputs(outputFolder: folder)
        let earlier = batch.force ? [:] : BatchManifest.lastRecords(in: batch.manifest.map { [$0] } ?? BatchManifest.defaultPaths(in: folder))
        let manifestPath = batch.manifest ?? BatchManifest.defaultPath(in: folder, shard: batch.shard)
        let manifest = try usage { try BatchManifest(path: manifestPath) }
        BatchOutputs.removeStaleTemporaryFiles(besides: share.compactMap(\.output))

        let progress = BatchProgress(total: share.count, drawsBar: showsProgress)
        let record = { (record: BatchRecord) throws in
            try manifest.append(record, durable: record.status != .skipped)
            progress.count(record)
        }
        let toConvert = try settleWithoutConverting(share, earlier: earlier, record: record)
        try manifest.synchronize()
        progress.expect(toProcess: toConvert.count)
        try convertAll(toConvert, record: record, progress: progress)
        progress.finishBar()

        if batch.json {
            Report.json(progress.jsonSummary(manifest: manifestPath))
        } else if !batch.quiet {
            Report.note(progress.summary(manifest: manifestPath))
        }
        if progress.failed > 0 { throw ExitCode.failure }
    }

    // MARK: Steps

    /// This run's inputs: all of them, or its shard's share; the output folder is made ready for them.
    private func shareOfInputs(outputFolder folder: String) throws -> [BatchItem] {
        let listed = try batch.list.map { file in try usage { try BatchListFile.paths(in: file) } } ?? []
        let inputs = BatchInputs(outputFolder: folder, outputType: batch.outputType, recursive: batch.recursive)
        let items = try inputs.items(for: self.inputs + listed)
        if items.isEmpty { Report.warning("no audio files among the inputs") }
        if let problem = BatchOutputs.makeFolder(folder) { throw ValidationError(problem) }
        return batch.shard.map { $0.share(of: items) } ?? items
    }

    /// Records the inputs whose fate is known without converting: outputs done earlier are skipped, inputs
    /// that cannot be converted fail. Returns the rest.
    private func settleWithoutConverting(
        _ items: [BatchItem], earlier: [String: BatchRecord], record: (BatchRecord) throws -> Void
    ) throws -> [BatchItem] {
        var toConvert: [BatchItem] = []
        for item in items {
            if let done = BatchOutputs.completedRecord(of: item, in: earlier) {
                try record(BatchRecord(item: item, status: .skipped, audioSeconds: done.audioSeconds))
            } else if let problem = item.problem ?? BatchOutputs.problem(writing: item) {
                try record(BatchRecord(item: item, status: .failed, error: problem))
            } else {
                toConvert.append(item)
            }
        }
        return toConvert
    }

    private func convertAll(_ items: [BatchItem], record: (BatchRecord) throws -> Void, progress: BatchProgress) throws {
        guard !items.isEmpty else { return }
        let pool = try BatchWorkerPool(jobs: min(batch.jobCount, items.count), command: try workerCommand())
        try pool.run(items, finished: { item, answer in
            try record(BatchRecord(
                item: item, status: answer.error == nil ? .ok : .failed, error: answer.error, audioSeconds: answer.audioSeconds,
                processingSeconds: answer.processingSeconds, clippedSamples: answer.clippedSamples))
        }, tick: { progress.redraw() })
    }

    /// One file, in a worker: the same conversion `koe convert` makes.
    private func convert(_ order: BatchOrder) throws -> ConversionStatistics {
        var settings = try ConversionSettings(voice: voice, equalizer: equalizer, analysis: analysis)
        settings.threads = batch.threads
        return try convertFile(order.input, to: order.output, settings: settings)
    }

    private var showsProgress: Bool {
        !batch.quiet && (batch.progress || isatty(STDERR_FILENO) != 0)
    }

    /// This program, run as a worker with this batch's own arguments.
    private func workerCommand() throws -> [String] {
        let arguments = CommandLine.arguments
        guard arguments.count > 1, arguments[1] == Self.name,
              let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw CommandError.badOption("koe batch: cannot find its own executable to start workers")
        }
        return [executable, Self.name, "--worker"] + arguments.dropFirst(2)
    }

    /// Errors before anything is converted are usage errors: the batch as given cannot start.
    private func usage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as IOError {
            throw ValidationError(error.description)
        }
    }
}

/// The options of a batch as a whole; the conversion options are convert's.
struct BatchOptions: ParsableArguments {
    @Option(name: [.customShort("o"), .customLong("output-dir")], help: ArgumentHelp(
        "Folder the outputs go to, mirroring the inputs' paths (created if missing).", valueName: "dir"))
    var outputFolder: String

    @Option(help: ArgumentHelp("File of input paths, one a line; - for standard input.", valueName: "file"))
    var list: String?

    @Flag(name: [.customShort("r"), .long], help: "Convert the audio files in the folders given, and in their subfolders.")
    var recursive = false

    @Option(name: .customLong("out-type"), help: ArgumentHelp(
        "Write every output in this format, named by its extension (wav, flac, aiff, ogg, caf, ...).", valueName: "ext"),
        transform: { ($0.hasPrefix(".") ? String($0.dropFirst()) : $0).lowercased() })
    var outputType: String?

    @Option(name: [.customShort("j"), .long], help: ArgumentHelp(
        "Files converted at once (default: the number of cores / --threads).", valueName: "n"))
    var jobs: Int?

    @Option(help: ArgumentHelp(
        "Threads for each file, shared as convert's --threads shares them: the channels at once, and each channel's vocoder on its share.",
        valueName: "n"))
    var threads = 1

    @Option(help: ArgumentHelp("Convert only the I-th of N shares of the sorted inputs (I from 1 to N).", valueName: "i/n"))
    var shard: BatchShard?

    @Option(help: ArgumentHelp(
        "Manifest file (default: DIR/koe-manifest.jsonl; DIR/koe-manifest.shard-I-of-N.jsonl with --shard).", valueName: "file"))
    var manifest: String?

    @Flag(help: "Convert every input again, even those recorded done.")
    var force = false

    @Flag(help: "Show a progress bar on stderr (the default when stderr is a terminal).")
    var progress = false

    @Flag(help: "No progress bar and no summary line.")
    var quiet = false

    @Flag(help: "Print the summary as one JSON object on stderr.")
    var json = false

    func validate() throws {
        if outputFolder.isEmpty { throw ValidationError("--output-dir must name a folder") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1 (got \(jobs))") }
        if threads < 1 { throw ValidationError("--threads must be at least 1 (got \(threads))") }
        if let outputType, outputType.isEmpty || outputType.contains("/") || !AudioExtensions.isKnown(outputType) {
            throw ValidationError("--out-type \(outputType): not an audio file extension libsndfile knows (wav, flac, aiff, ogg, ...)")
        }
        if let manifest, manifest.isEmpty { throw ValidationError("--manifest must name a file") }
        if progress && quiet { throw ValidationError("--progress and --quiet exclude each other") }
    }

    /// Jobs as asked, or as many as the cores hold with each job's threads: never more threads than cores
    /// unless asked for.
    var jobCount: Int {
        jobs ?? max(1, ProcessInfo.processInfo.activeProcessorCount / threads)
    }
}

/// `--shard I/N`: the inputs at positions I-1, I-1+N, I-1+2N, ... of the sorted list.
struct BatchShard: ExpressibleByArgument {
    let index: Int
    let count: Int

    init?(argument: String) {
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, (1...count).contains(index) else {
            return nil
        }
        self.index = index
        self.count = count
    }

    func share(of items: [BatchItem]) -> [BatchItem] {
        stride(from: index - 1, to: items.count, by: count).map { items[$0] }
    }
}

/// `--list FILE`: one path a line; blank lines are passed over, a carriage return before the newline dropped.
enum BatchListFile {
    static func paths(in path: String) throws -> [String] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard FileIdentity(path: path)?.isRegularFile == true, let contents = FileManager.default.contents(atPath: path) else {
                throw IOError.fileNotFound(path: path)
            }
            data = contents
        }
        return data.split(separator: UInt8(ascii: "\n")).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }.filter { !$0.isEmpty }
    }
}

/// The batch's outputs on disk.
enum BatchOutputs {
    /// The earlier record saying `item`'s output was completed, if there is one and the output is still there.
    static func completedRecord(of item: BatchItem, in records: [String: BatchRecord]) -> BatchRecord? {
        guard let output = item.output, let record = records[output], record.status != .failed,
              FileIdentity(path: output)?.isRegularFile == true else { return nil }
        return record
    }

    /// Why `item`'s output cannot be written, when that shows before converting.
    static func problem(writing item: BatchItem) -> String? {
        guard let output = item.output else { return nil }
        if let existing = FileIdentity(path: output), existing.isSameFile(as: FileIdentity(path: item.input)) {
            return "\(item.input): input and output are the same file"
        }
        return makeFolder(folder(of: output))
    }

    /// Creates `folder` and its missing parents; nil when done, else why not.
    static func makeFolder(_ folder: String) -> String? {
        if FileIdentity(path: folder)?.isFolder == true { return nil }
        let parent = self.folder(of: folder)
        if parent != folder, let problem = makeFolder(parent) { return problem }
        guard mkdir(folder, 0o777) == 0 || (errno == EEXIST && FileIdentity(path: folder)?.isFolder == true) else {
            return "\(folder): cannot create this folder (\(String(cString: strerror(errno))))"
        }
        return nil
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Removes the temporary files a killed run left beside these outputs: `.koe-<random>.<name>`, as
    /// `AtomicOutput` names them. Only names of this batch's own outputs are touched, so a shard running at
    /// the same time in the same folder keeps its files.
    static func removeStaleTemporaryFiles(besides outputs: [String]) {
        let namesByFolder = Dictionary(grouping: outputs, by: folder(of:))
            .mapValues { Set($0.map { $0.split(separator: "/").last.map(String.init) ?? $0 }) }
        for (folder, names) in namesByFolder {
            for entry in (try? BatchInputs.entries(of: folder)) ?? [] where entry.hasPrefix(".koe-") {
                let rest = entry.dropFirst(".koe-".count)
                guard let dot = rest.firstIndex(of: "."),
                      rest[..<dot].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }),
                      names.contains(String(rest[rest.index(after: dot)...])) else { continue }
                unlink(folder + "/" + entry)
            }
        }
    }
}
