import ArgumentParser
import Foundation
import Koe
import KoeIO

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change a voice: pitch, formants, tempo and EQ, file to file or through a pipe.",
        discussion: """
            Files: any format libsndfile reads; the output's format follows its extension, with the input's \
            sample rate, channel count and (where the format holds it) sample encoding. Each channel is \
            processed on its own. Use - for raw PCM on standard input or output, described with sox's flags \
            (--type raw --rate --encoding --bits --channels [--endian]); output is written as it is produced. \
            Everything flows through one chunked pipeline, so a pipe gives the same result as a file.
            """
    )

    @Argument(help: ArgumentHelp("Input audio file, or - for raw PCM on standard input.", valueName: "in"))
    var input: String

    @Argument(help: ArgumentHelp("Output audio file, or - for raw PCM on standard output.", valueName: "out"))
    var output: String

    @OptionGroup var conversion: ConversionOptions
    @OptionGroup(title: "Raw PCM (sox's names)") var raw: RawOptions
    @OptionGroup(title: "Reporting") var reporting: ReportingOptions

    @Option(parsing: .unconditional, help: .setting("threads", "Default: all cores."))
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .customLong("chunk-size"), parsing: .unconditional, help: .setting("chunk_size"))
    var chunkSize = ConversionSettings().chunkFrames

    func validate() throws {
        try requireWithin([("threads", Double(threads)), ("chunk_size", Double(chunkSize))])
        if input == "-" && !raw.inputIsRaw {
            throw ValidationError("reading standard input needs --type raw with --rate, --encoding, --bits and --channels")
        }
        if output == "-" && !raw.outputIsRaw {
            throw ValidationError("writing standard output needs raw PCM: --type raw or --out-type raw")
        }
        if input != "-" && output != "-" && (input == output || Self.areOneFile(input, output)) {
            throw ValidationError("input and output are the same file: \(input)")
        }
    }

    /// True when two names lead to one existing file (`x.wav` and `./x.wav`, a symbolic or hard link):
    /// writing the output would replace the input.
    private static func areOneFile(_ first: String, _ second: String) -> Bool {
        var firstStatus = stat()
        var secondStatus = stat()
        guard stat(first, &firstStatus) == 0, stat(second, &secondStatus) == 0 else { return false }
        return firstStatus.st_dev == secondStatus.st_dev && firstStatus.st_ino == secondStatus.st_ino
    }

    func run() throws {
        var settings = try conversion.settings(threads: threads)
        settings.chunkFrames = chunkSize
        let progress = reporting.progressBar()
        let source = try raw.input(input)
        let stats = try convert(source, to: try raw.output(output, for: source), settings: settings, progress: progress?.update)
        progress?.finish()

        reportAim(settings, stats)
        if stats.clippedSamples > 0 {
            Report.warning("\(stats.clippedSamples) samples clipped at full scale in \(output == "-" ? "standard output" : output)")
        }
        if reporting.json { Report.json(stats.json) }
    }
}

extension Convert {
    /// Says on stderr when a voice preset's target could not be reached within the ratios' bounds, or could not
    /// be aimed at (a stream, a file with no voice): the output then misses the target by that much.
    private func reportAim(_ settings: ConversionSettings, _ stats: ConversionStatistics) {
        guard let preset = settings.preset, let target = preset.target else { return }
        let (aimsPitch, aimsFormant) = settings.aimedRatios
        guard aimsPitch || aimsFormant else { return }
        guard let aim = stats.aim, let profile = stats.profile else {
            let why = input == "-" || settings.analysis.live
                ? "too little voice was heard to estimate the speaker (it takes 0.5 s of voiced speech)"
                : "no voice was found in \(input)"
            Report.warning("--preset \(preset.name): \(why), so it takes a typical speaker's ratios (pitch \(preset.voice.pitch.formatted), formant \(preset.voice.formant.formatted)) instead of aiming at \(target.f0Median.formatted) Hz")
            return
        }
        func f(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
        if aim.pitchClamped {
            Report.warning(
                "--preset \(preset.name): the target's \(target.f0Median.formatted) Hz asks a pitch ratio of \(f(aim.wantedPitch)) "
                    + "of this voice (median F0 \(f(profile.f0Median, 1)) Hz); it is clamped to \(f(aim.pitch)) "
                    + "(bounds \(Preset.pitchBounds.lowerBound.formatted) to \(Preset.pitchBounds.upperBound.formatted))")
        }
        if aim.formantClamped {
            Report.warning(
                "--preset \(preset.name): the formant ratio \(f(aim.wantedFormant)) the target's \(target.vocalTractLength.formatted) cm "
                    + "vocal tract asks of this voice is clamped to \(f(aim.formant)) "
                    + "(bounds \(Preset.formantBounds.lowerBound.formatted) to \(Preset.formantBounds.upperBound.formatted))")
        }
    }
}

extension ConversionStatistics {
    /// One line of JSON with sorted keys, as `--json` prints it.
    var json: String {
        let object: [String: Any] = [
            "input_seconds": inputSeconds, "output_seconds": outputSeconds, "sample_rate": sampleRate,
            "channels": channels, "processing_seconds": processingSeconds, "real_time_factor": realTimeFactor,
            "latency_ms": latencyMilliseconds, "latency_bound_ms": latencyBoundMilliseconds, "live": live,
            "clipped_samples": clippedSamples, "median_f0_in": medianF0In ?? NSNull(), "median_f0_out": medianF0Out ?? NSNull(),
            "profile": profile?.jsonObject ?? NSNull(), "pitch_ratio": pitchRatio, "formant_ratio": formantRatio,
            "clamped": aim?.clamped ?? false,
        ]
        return jsonLine(object)
    }
}
