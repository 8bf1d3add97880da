import ArgumentParser
import Koe
import Foundation
import Glibc
import KoeBatch
import KoeIO

struct Batch: ParsableCommand {
    static let name = "batch"

    static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "Convert or analyze many files with the same options: in parallel, resumable, sharded for clusters.",
        usage: """
            koe batch -o <dir> [<convert options>] [--jobs <n>] [--threads <n>] [--shard <i/n>]
                      [--manifest <file>] [--force] [--recursive] <input> ...
            koe batch -o <dir> [<convert options>] [...] --list <file>
            koe batch --analyze -o <dir> [<analysis options>] [...] <input> ...
            """,
        discussion: """
            Each input is converted as `koe convert` would, with the same voice, EQ and analysis options, to a \
            path under --output-dir that mirrors the input's: a file's path as given (without a leading / or \
            ./), a file found under a folder given with --recursive by its path inside that folder (hidden \
            files, and names without an audio extension, are left out). The output keeps the input's name, so \
            its format follows the input's, unless --out-type names another. Outputs appear only complete \
            (temporary file and rename). Inputs are sorted by path, so --shard I/N takes the same share on \
            every machine: the I-th of every N inputs.

            With --analyze, each input is analyzed as `koe analyze` would (its channel 0, or --channel), with \
            the analysis options (--f0-method, --frame-period, --f0-floor, --f0-ceil, --live), into a folder \
            under --output-dir named as the input's path without its extension: f0.npy, time.npy, sp.npy, \
            ap.npy and meta.json, which appear only when all are complete. Voice, EQ and limiter options do \
            not apply.

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
    @OptionGroup var conversion: ConversionOptions
    @OptionGroup(title: "Reporting") var reporting: ReportingOptions

    /// Set on the worker processes the batch starts; see `BatchWorkerPool`.
    @Flag(name: .customLong("worker"), help: .private)
    var isWorker = false

    func validate() throws {
        if inputs.isEmpty && batch.list == nil { throw ValidationError("give input files or folders, or --list FILE") }
    }

    func run() throws {
        if isWorker {
            // Made once for the worker's life: the curve and F0 files are read once, not for every input.
            let settings = Result { try conversion.settings(threads: batch.threads) }
            // Under --analyze, `koe analyze`'s options (--look-ahead is refused there).
            let analysis = FileAnalysis(options: conversion.analysis.streamingOptions(), channel: batch.channel, f0File: nil)
            do {
                return try BatchWorker.serve({ order in
                    if batch.analyze {
                        return BatchWorker.Outcome(audioSeconds: try analysis.write(order.input, to: order.output))
                    }
                    let statistics = try convert(.file(order.input), to: .file(order.output), settings: settings.get())
                    return BatchWorker.Outcome(audioSeconds: statistics.inputSeconds, clippedSamples: statistics.clippedSamples)
                }, describe: { Report.oneLine(Self.message(for: $0)) })
            } catch KoeError.misuse {
                throw KoeError.misuse("--worker is for the processes koe batch starts itself")
            }
        }
        try conversion.curves.checkFiles()
        if batch.analyze { try requireAnalysisOnly() }
        let folder = BatchInputs.trimmingTrailingSlashes(batch.outputFolder)
        let share = try shareOfInputs(outputFolder: folder)
        let earlier = batch.force ? [:] : BatchManifest.lastRecords(in: batch.manifest.map { [$0] } ?? BatchManifest.defaultPaths(in: folder))
        let manifestPath = batch.manifest ?? BatchManifest.defaultPath(in: folder, shard: batch.shard)
        let manifest = try usage { try BatchManifest(path: manifestPath) }
        BatchOutputs.removeStaleTemporaryFiles(besides: share.compactMap(\.output).flatMap { output in
            batch.analyze ? AnalysisFolder.names.map { output + "/" + $0 } : [output]
        })

        let progress = BatchProgress(total: share.count, drawsBar: showsProgress)
        let record = { (record: BatchRecord) throws in
            try manifest.append(record, durable: record.status != .skipped)
            progress.count(record)
        }
        let toConvert = try BatchOutputs.recordKnownOutcomes(of: share, earlier: earlier, record: record)
        try manifest.synchronize()
        progress.expect(toProcess: toConvert.count)
        try convertAll(toConvert, record: record, progress: progress)
        progress.finishBar()

        if reporting.json {
            Report.json(progress.jsonSummary(manifest: manifestPath))
        } else if !reporting.quiet {
            Report.note(progress.summary(manifest: manifestPath))
        }
        if progress.failed > 0 { throw ExitCode.failure }
    }

    // MARK: Steps

    /// This run's inputs: all of them, or its shard's share; the output folder is made ready for them.
    private func shareOfInputs(outputFolder folder: String) throws -> [BatchItem] {
        let listed = try batch.list.map { file in try usage { try BatchListFile.paths(in: file) } } ?? []
        let inputs = BatchInputs(
            outputFolder: folder, outputType: batch.outputType, recursive: batch.recursive, writesFolders: batch.analyze)
        let items = try usage { try inputs.items(for: self.inputs + listed) }
        if items.isEmpty { Report.warning("no audio files among the inputs") }
        if let problem = BatchOutputs.makeFolder(folder) { throw ValidationError(problem) }
        return batch.shard.map { $0.share(of: items) } ?? items
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

    /// --analyze writes WORLD's parameters of the input itself: an option that changes the voice would be
    /// silently ignored, so it is refused.
    private func requireAnalysisOnly() throws {
        var given = try conversion.settings(threads: batch.threads).changedParts
        if conversion.analysis.lookAhead != nil { given.append("--look-ahead") }
        guard given.isEmpty else {
            throw ValidationError("--analyze writes the inputs' WORLD parameters, so these options do not apply: \(given.joined(separator: ", "))")
        }
    }

    private var showsProgress: Bool {
        !reporting.quiet && (reporting.progress || isatty(STDERR_FILENO) != 0)
    }

    /// This program, run as a worker with this batch's own arguments.
    private func workerCommand() throws -> [String] {
        let arguments = CommandLine.arguments
        guard arguments.count > 1, arguments[1] == Self.name,
              let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw KoeError.io("koe batch: cannot find its own executable to start workers")
        }
        return [executable, Self.name, "--worker"] + arguments.dropFirst(2)
    }

    /// Errors before anything is converted are usage errors: the batch as given cannot start.
    private func usage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as IOError {
            throw ValidationError(error.description)
        } catch KoeError.invalidArgument(let message) {
            throw ValidationError(message)
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

    @Option(name: [.customShort("j"), .long], parsing: .unconditional, help: ArgumentHelp(
        "Files converted at once (default: the number of cores / --threads).", valueName: "n"))
    var jobs: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Threads for each file, shared as convert's --threads shares them: the channels at once, and each channel's vocoder on its share.",
        valueName: "n"))
    var threads = 1

    @Option(
        help: ArgumentHelp("Convert only the I-th of N shares of the sorted inputs (I from 1 to N).", valueName: "i/n"),
        transform: parsed(BatchShard.init(parsing:)))
    var shard: BatchShard?

    @Option(help: ArgumentHelp(
        "Manifest file (default: DIR/koe-manifest.jsonl; DIR/koe-manifest.shard-I-of-N.jsonl with --shard).", valueName: "file"))
    var manifest: String?

    @Flag(help: "Convert every input again, even those recorded done.")
    var force = false

    @Flag(help: "Analyze each input into WORLD's parameters (the folder koe analyze writes) instead of converting it.")
    var analyze = false

    @Option(parsing: .unconditional, help: ArgumentHelp("With --analyze: the channel to analyze, counted from 0.", valueName: "n"))
    var channel = 0

    func validate() throws {
        if outputFolder.isEmpty { throw ValidationError("--output-dir must name a folder") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1 (got \(jobs))") }
        try requireWithin([("threads", Double(threads))])
        if let outputType, outputType.isEmpty || outputType.contains("/") || !AudioExtensions.isKnown(outputType) {
            throw ValidationError("--out-type \(outputType): not an audio file extension libsndfile knows (wav, flac, aiff, ogg, ...)")
        }
        if let manifest, manifest.isEmpty { throw ValidationError("--manifest must name a file") }
        if analyze && outputType != nil { throw ValidationError("--analyze writes folders of .npy files, so --out-type does not apply") }
        if channel < 0 { throw ValidationError("--channel counts from 0 (got \(channel))") }
        if channel != 0 && !analyze { throw ValidationError("--channel is for --analyze: a conversion converts every channel") }
    }

    /// Jobs as asked, or as many as the cores hold with each job's threads: never more threads than cores
    /// unless asked for.
    var jobCount: Int {
        jobs ?? max(1, ProcessInfo.processInfo.activeProcessorCount / threads)
    }
}

