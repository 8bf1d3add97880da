import ArgumentParser
import Koe
import KoeBatch
import KoeIO

struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Analyze a recording into WORLD parameters.",
        discussion: """
            Writes into the output folder f0.npy and time.npy (float64, one value a frame), sp.npy (power \
            spectral envelope) and ap.npy (aperiodicity), both float64 frames x (fft_size/2+1) in C order, \
            and meta.json (sample rate, frame period, FFT size and every option used). The files appear only \
            when all of them are complete.
            """
    )

    @Argument(help: "Audio file to analyze (any format libsndfile reads: wav, flac, ogg, aiff, ...).")
    var input: String

    @Option(name: .customLong("output-dir"), help: ArgumentHelp("Folder for the analysis files; created if missing.", valueName: "dir"))
    var outputDirectory: String

    @OptionGroup var range: F0RangeOptions

    @Option(name: .customLong("f0-method"), help: ArgumentHelp(
        "F0 estimator; dio (DIO refined by StoneMask) unless told otherwise.", valueName: "method"))
    var f0Method: AnalysisOptions.F0Method?

    @Option(parsing: .unconditional, help: ArgumentHelp("Channel to analyze, counted from 0.", valueName: "n"))
    var channel = 0

    @Option(name: .customLong("f0-file"), help: ArgumentHelp(
        "Use this F0 instead of estimating it: a 1-D float64 .npy, one value a frame, frame i at i x frame period.",
        valueName: "f0.npy"))
    var f0File: String?

    @Flag(name: .customLong("live"), help: "The F0 live analysis decides as the signal streams (koe convert --live's).")
    var live = false

    func validate() throws {
        if let problem = analysis.problem(sampleRate: nil, framePeriods: WorldParameters.framePeriods, name: AnalysisFlags.flag) {
            throw ValidationError(problem)
        }
        guard channel >= 0 else { throw ValidationError("--channel counts from 0 (got \(channel))") }
        if f0File != nil && f0Method != nil {
            throw ValidationError("--f0-file and --f0-method exclude each other: the F0 comes from the file")
        }
        if f0File != nil && live {
            throw ValidationError("--f0-file and --live exclude each other: the F0 comes from the file")
        }
    }

    func run() throws {
        try FileAnalysis(options: analysis, channel: channel, f0File: f0File).write(input, to: outputDirectory)
    }

    private var analysis: AnalysisOptions {
        var options = range.analysis
        options.f0Method = f0Method ?? .dio
        options.live = live
        return options
    }

}

/// One recording analysed into the folder `koe analyze` writes; `koe batch --analyze` writes one per input.
struct FileAnalysis {
    let options: AnalysisOptions
    let channel: Int
    let f0File: String?

    /// Analyses `input` into `folder`, whose files appear only when all of them are complete; returns the
    /// recording's length in seconds.
    @discardableResult
    func write(_ input: String, to folder: String) throws -> Double {
        let recording = try AudioFile(reading: input)
        let signal = try recording.readChannel(channel)
        if let problem = WorldParameters.problem(
            with: options, sampleRate: recording.sampleRate, samples: signal.count, name: AnalysisFlags.flag) {
            throw KoeError.invalidArgument(problem + " for \(input)")
        }
        let f0 = try f0File.map { try readF0($0, samples: signal.count, sampleRate: recording.sampleRate) }
        let outputs = try AnalysisFolder.outputs(in: folder)

        var parameters = try KoeError.wrapping(source: input) {
            try WorldParameters(analyzing: signal, sampleRate: recording.sampleRate, options: options, f0: f0)
        }
        parameters.meta.channel = channel
        parameters.meta.channels = recording.channels
        parameters.meta.input = input
        parameters.meta.koeVersion = KoeCommand.version
        parameters.meta.options?.f0File = f0File
        try AnalysisFolder.write(parameters, to: outputs)
        return Double(signal.count) / Double(recording.sampleRate)
    }

    /// The F0 of a 1-D .npy file, one value an analysis frame of the input.
    private func readF0(_ path: String, samples: Int, sampleRate: Int) throws -> F0Track {
        let track = try F0Track(numPyFile: path)
        if let problem = WorldParameters.problem(with: track, samples: samples, sampleRate: sampleRate, framePeriod: options.framePeriod) {
            throw KoeError.badInput(source: path, reason: problem)
        }
        return track
    }
}
