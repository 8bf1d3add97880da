import ArgumentParser
import KoeIO
import KoeWorld

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

    /// The lowest --f0-floor accepted: below it no voice has a pitch, and CheapTrick's FFT size grows without bound.
    static let lowestF0Floor = 10.0
    /// Values an output matrix may hold (2 GiB of float64), so absurd settings fail instead of exhausting memory.
    static let largestMatrix = 1 << 28

    @Argument(help: "Audio file to analyze (any format libsndfile reads: wav, flac, ogg, aiff, ...).")
    var input: String

    @Option(name: .customLong("output-dir"), help: ArgumentHelp("Folder for the analysis files; created if missing.", valueName: "dir"))
    var outputDirectory: String

    @Option(name: .customLong("f0-method"), help: ArgumentHelp(
        "F0 estimator; dio (DIO refined by StoneMask) unless told otherwise.", valueName: "method"))
    var f0Method: StreamingAnalyzer.F0Method?

    @Option(name: .customLong("frame-period"), help: ArgumentHelp("Milliseconds between frames.", valueName: "ms"))
    var framePeriod = Dio.Options().framePeriod

    @Option(name: .customLong("f0-floor"), help: ArgumentHelp("Lowest F0 searched, in Hz; also sets CheapTrick's FFT size.", valueName: "hz"))
    var f0Floor = Dio.Options().f0Floor

    @Option(name: .customLong("f0-ceil"), help: ArgumentHelp("Highest F0 searched, in Hz.", valueName: "hz"))
    var f0Ceil = Dio.Options().f0Ceil

    @Option(help: ArgumentHelp("Channel to analyze, counted from 0.", valueName: "n"))
    var channel = 0

    @Option(name: .customLong("f0-file"), help: ArgumentHelp(
        "Use this F0 instead of estimating it: a 1-D float64 .npy, one value a frame, frame i at i x frame period.",
        valueName: "f0.npy"))
    var f0File: String?

    func validate() throws {
        guard framePeriod.isFinite && framePeriod > 0 else {
            throw ValidationError("--frame-period must be a positive number of milliseconds (got \(framePeriod))")
        }
        guard f0Floor.isFinite && f0Floor >= Self.lowestF0Floor else {
            throw ValidationError("--f0-floor must be at least \(Int(Self.lowestF0Floor)) Hz (got \(f0Floor))")
        }
        guard f0Ceil.isFinite && f0Floor < f0Ceil else {
            throw ValidationError("--f0-floor (\(f0Floor) Hz) must be below --f0-ceil (\(f0Ceil) Hz)")
        }
        guard channel >= 0 else { throw ValidationError("--channel counts from 0 (got \(channel))") }
        if f0File != nil && f0Method != nil {
            throw ValidationError("--f0-file and --f0-method exclude each other: the F0 comes from the file")
        }
    }

    func run() throws {
        let recording = try AudioFile(reading: input)
        let signal = try recording.readChannel(channel)
        let sampleRate = recording.sampleRate
        try requireUsable(signal, sampleRate: sampleRate)
        let givenContour = try f0File.map { try readF0($0, samples: signal.count, sampleRate: sampleRate) }
        let outputs = try AtomicOutputSet(folder: outputDirectory, names: AnalysisFolder.fileNames)

        let contour = givenContour ?? estimateF0(signal, sampleRate: sampleRate)
        let cheapTrick = CheapTrick(sampleRate: sampleRate, options: cheapTrickOptions)
        let d4c = D4C(sampleRate: sampleRate, fftSize: cheapTrick.fftSize)
        let parameters = WorldParameters(
            contour: contour,
            spectrogram: cheapTrick.estimate(signal, contour: contour),
            aperiodicity: d4c.estimate(signal, contour: contour))

        let meta = meta(sampleRate: sampleRate, channels: recording.channels, samples: signal.count,
                        frames: contour.frameCount, cheapTrick: cheapTrick, d4c: d4c)
        try AnalysisFolder.write(parameters, meta: meta, to: outputs)
    }

    // MARK: Steps

    /// Checks what the vocoder needs and what these options need of this input, before any work is done.
    private func requireUsable(_ signal: [Double], sampleRate: Int) throws {
        do {
            try SignalRequirements.validate(signal, sampleRate: sampleRate, f0Floor: f0Floor)
        } catch let error as WorldError {
            throw CommandError.badInput(path: input, reason: error.description)
        }
        let nyquist = Double(sampleRate) / 2
        guard f0Ceil < nyquist else {
            throw CommandError.badOption("--f0-ceil (\(f0Ceil) Hz) must be below half the sample rate of \(input) (\(nyquist) Hz)")
        }
        let frames = F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: framePeriod)
        let bins = CheapTrick.fftSize(sampleRate: sampleRate, f0Floor: f0Floor) / 2 + 1
        guard frames.multipliedReportingOverflow(by: bins).partialValue <= Self.largestMatrix, frames <= Self.largestMatrix else {
            throw CommandError.badOption(
                "\(frames) frames of \(bins) bins are too many to hold; raise --frame-period or --f0-floor")
        }
    }

    private func estimateF0(_ signal: [Double], sampleRate: Int) -> F0Contour {
        switch f0Method ?? .dio {
        case .dio:
            let raw = Dio(sampleRate: sampleRate, options: dioOptions).estimate(signal)
            return StoneMask(sampleRate: sampleRate).refine(signal, contour: raw)
        case .harvest:
            return Harvest(sampleRate: sampleRate, options: harvestOptions).estimate(signal)
        }
    }

    /// F0 from a file, on WORLD's time axis for this signal; it must have exactly one value a frame.
    private func readF0(_ path: String, samples: Int, sampleRate: Int) throws -> F0Contour {
        let f0 = try Npy.read(from: path)
        let frames = F0Contour.frameCount(samples: samples, sampleRate: sampleRate, framePeriod: framePeriod)
        guard f0.isVector else {
            throw CommandError.badInput(path: path, reason: "expected a 1-D array of F0 values, found shape \(f0.shapeText)")
        }
        guard f0.rows == frames else {
            throw CommandError.badInput(path: path, reason:
                "has \(f0.rows) values but \(input) at \(framePeriod) ms frames has \(frames) frames")
        }
        if let index = f0.values.firstIndex(where: { !$0.isFinite || $0 < 0 }) {
            throw CommandError.badInput(path: path, reason: "value \(f0.values[index]) at frame \(index) is not an F0 in Hz (0 or more)")
        }
        return F0Contour(f0: f0.values, framePeriod: framePeriod)
    }

    private var dioOptions: Dio.Options {
        var options = Dio.Options()
        options.framePeriod = framePeriod
        options.f0Floor = f0Floor
        options.f0Ceil = f0Ceil
        return options
    }

    private var harvestOptions: Harvest.Options {
        var options = Harvest.Options()
        options.framePeriod = framePeriod
        options.f0Floor = f0Floor
        options.f0Ceil = f0Ceil
        return options
    }

    private var cheapTrickOptions: CheapTrick.Options {
        var options = CheapTrick.Options()
        options.f0Floor = f0Floor
        return options
    }

    private func meta(
        sampleRate: Int, channels: Int, samples: Int, frames: Int, cheapTrick: CheapTrick, d4c: D4C
    ) -> AnalysisMeta {
        let method = f0File == nil ? (f0Method ?? .dio).rawValue : "file"
        var options = AnalysisMeta.AlgorithmOptions(
            cheaptrick: .init(q1: cheapTrick.options.q1, f0Floor: cheapTrick.options.f0Floor, fftSize: cheapTrick.fftSize),
            d4c: .init(threshold: d4c.options.threshold, fftSize: d4c.fftSize),
            f0File: f0File)
        switch method {
        case StreamingAnalyzer.F0Method.dio.rawValue:
            let dio = dioOptions
            options.dio = .init(framePeriod: dio.framePeriod, f0Floor: dio.f0Floor, f0Ceil: dio.f0Ceil,
                                channelsInOctave: dio.channelsInOctave, speed: dio.speed, allowedRange: dio.allowedRange)
        case StreamingAnalyzer.F0Method.harvest.rawValue:
            let harvest = harvestOptions
            options.harvest = .init(framePeriod: harvest.framePeriod, f0Floor: harvest.f0Floor, f0Ceil: harvest.f0Ceil)
        default:
            break
        }
        return AnalysisMeta(
            sampleRate: sampleRate, framePeriod: framePeriod, fftSize: cheapTrick.fftSize, f0Method: method,
            f0Floor: f0Floor, f0Ceil: f0Ceil, channel: channel, channels: channels, frames: frames, samples: samples,
            input: input, koeVersion: KoeCommand.version, options: options)
    }
}
