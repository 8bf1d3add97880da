import ArgumentParser
import Foundation
import Koe
import KoeIO

// The settings' options take their help and their range from the settings table (`Setting`). Numeric options
// are parsed unconditionally: a negative value is taken as the value (`--semitones -4`, or `--pitch -1`, which the
// range check then names) instead of as a flag.

/// The voice options a live changer takes too: pitch, formants, F0 median and range, a preset.
struct VoiceOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: .setting("pitch"))
    var pitch: Double?

    @Option(parsing: .unconditional, help: .setting("semitones"))
    var semitones: Double?

    @Option(name: .customLong("pitch-median"), parsing: .unconditional, help: .setting("pitch_median"))
    var pitchMedian: Double?

    @Option(name: .customLong("pitch-range"), parsing: .unconditional, help: .setting("pitch_range"))
    var pitchRange: Double?

    @Option(parsing: .unconditional, help: .setting("formant"))
    var formant: Double?

    @Option(help: .setting("preset"))
    var preset: Preset?

    @Flag(help: .setting("whisper"))
    var whisper = false

    @Option(help: ArgumentHelp(
        "The speaker's profile as koe profile --json writes it: a voice preset aims from it instead of measuring the input first (a file), or from the start until 0.5 s of voiced speech has been heard (a stream, --live, koe live).",
        valueName: "file"))
    var profile: String?

    func validate() throws {
        if pitch != nil && semitones != nil {
            throw ValidationError("give --pitch or --semitones, not both")
        }
        try requireWithin(
            [("pitch", pitch), ("semitones", semitones), ("pitch_median", pitchMedian), ("pitch_range", pitchRange), ("formant", formant)])
    }

    /// `base` (the preset's voice, when there is one) with every explicit option applied on top.
    func settings(over base: VoiceSettings) -> VoiceSettings {
        var voice = base
        if let pitch { voice.pitch = pitch }
        if let semitones { voice.semitones = semitones }
        if let pitchMedian { voice.pitchMedian = pitchMedian }
        if let pitchRange { voice.pitchRange = pitchRange }
        if let formant { voice.formant = formant }
        if whisper { voice.whisper = true }
        return voice
    }
}

/// The voice options of a conversion, which owns its timeline: the live ones, tempo and --vocoder.
struct ConversionVoiceOptions: ParsableArguments {
    @OptionGroup var voice: VoiceOptions

    @Option(parsing: .unconditional, help: .setting("tempo"))
    var tempo: Double?

    @Flag(name: .customLong("vocoder"), help: .setting("vocoder"))
    var forceVocoder = false

    func validate() throws {
        try requireWithin([("tempo", tempo)])
    }
}

/// Refuses the first value outside its setting's range (`Setting.validate`), naming the flag and the range.
func requireWithin(_ values: [(setting: String, value: Double?)]) throws {
    for case let (name, value?) in values {
        let setting = Setting.named(name)!
        do {
            try setting.validate(value, as: setting.flag)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

extension ArgumentHelp {
    /// The help of the setting `name` from the settings table: its line of help and its range, then `more`.
    static func setting(_ name: String, _ more: String = "") -> ArgumentHelp {
        let setting = Setting.named(name)!
        var text = setting.summary
        if let range = setting.range {
            let unit = ["", "ratio", "threads", "frames", "semitones"].contains(setting.unit) ? "" : " " + setting.unit
            text += " From \(range.lowerBound.formatted) to \(range.upperBound.formatted)\(unit)."
        }
        if !more.isEmpty { text += " " + more }
        switch setting.type {
        case "flag": return ArgumentHelp(text)
        case "text": return ArgumentHelp(text, valueName: setting.unit)
        default:
            let valueNames = ["ratio": "ratio", "Hz": "hz", "dB": "db", "ms": "ms", "cents": "cents", "frames": "frames"]
            return ArgumentHelp(text, valueName: valueNames[setting.unit] ?? "n")
        }
    }
}

extension Double {
    /// As a person writes it: 440, not 440.0; 1/16 as 0.0625.
    var formatted: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}

struct EqualizerOptions: ParsableArguments {
    @Option(name: .customLong("eq"), help: .setting("eq"), transform: parsed(EqualizerBand.init(parsing:)))
    var explicitBands: [EqualizerBand] = []

    /// Gains and the gain may be negative: taken as values even when they start with a minus sign.
    @Option(name: .customLong("geq"), parsing: .unconditional, help: .setting("geq"), transform: parsed(GraphicEqualizer.init(parsing:)))
    var graphicEQ: GraphicEqualizer?

    @Option(parsing: .unconditional, help: .setting("gain"))
    var gain: Double?

    func validate() throws {
        try requireWithin([("gain", gain)])
    }

    /// The explicit bands: the `--eq` ones, then the graphic EQ's. They follow the preset's.
    var bands: [EqualizerBand] {
        explicitBands + (graphicEQ?.bands ?? [])
    }
}

/// The analysis frame grid and F0 range, as `koe convert`, `koe batch` and `koe analyze` take them.
struct F0RangeOptions: ParsableArguments {
    @Option(name: .customLong("frame-period"), parsing: .unconditional, help: .setting("frame_period"))
    var framePeriod = AnalysisOptions().framePeriod

    @Option(name: .customLong("f0-floor"), parsing: .unconditional, help: .setting("f0_floor"))
    var f0Floor = AnalysisOptions().f0Floor

    @Option(name: .customLong("f0-ceil"), parsing: .unconditional, help: .setting("f0_ceil"))
    var f0Ceil = AnalysisOptions().f0Ceil

    /// The library's analysis options with these three set.
    var analysis: AnalysisOptions {
        var options = AnalysisOptions()
        options.framePeriod = framePeriod
        options.f0Floor = f0Floor
        options.f0Ceil = f0Ceil
        return options
    }
}

struct AnalysisFlags: ParsableArguments {
    @Option(name: .customLong("f0-method"), help: .setting("f0_method"))
    var f0Method = AnalysisOptions.F0Method.dio

    @OptionGroup var range: F0RangeOptions

    @Option(name: .customLong("look-ahead"), parsing: .unconditional, help: .setting("look_ahead"))
    var lookAhead: Double?

    @Flag(name: .customLong("live"), inversion: .prefixedNo, help: .setting("live", "Default: off for convert and batch, on for koe live."))
    var live: Bool?

    func validate() throws {
        if let problem = streamingOptions().problem(sampleRate: nil, name: Self.flag) {
            throw ValidationError(problem)
        }
    }

    /// The flag that sets an analysis setting.
    static func flag(_ setting: AnalysisOptions.Setting) -> String {
        switch setting {
        case .framePeriod: "--frame-period"
        case .f0Floor: "--f0-floor"
        case .f0Ceil: "--f0-ceil"
        case .lookAhead: "--look-ahead"
        case .live: "--live"
        case .harvestBlock, .lookBehind, .threads: setting.rawValue
        }
    }

    /// The analysis options; live unless `--no-live` when `liveByDefault`, else only with `--live`.
    func streamingOptions(liveByDefault: Bool = false) -> AnalysisOptions {
        var options = range.analysis
        options.f0Method = f0Method
        options.live = live ?? liveByDefault
        options.lookAhead = lookAhead
        return options
    }
}

extension AnalysisOptions.F0Method: ExpressibleByArgument {}

extension ConversionSettings {
    /// What the voice, equalizer and analysis options ask for: a preset's voice and bands first, the explicit
    /// options over them.
    init(voice: VoiceOptions, equalizer: EqualizerOptions, analysis: AnalysisFlags) throws {
        self.init()
        if let preset = voice.preset {
            try apply(preset: preset.name)
        }
        self.voice = voice.settings(over: self.voice)
        // `--preset NAME --pitch R` means the ratio R, not the target's.
        if voice.pitch != nil || voice.semitones != nil || voice.pitchMedian != nil { aimsPitch = false }
        if voice.formant != nil { aimsFormant = false }
        if let profile = voice.profile { speakerProfile = try SpeakerProfile(json: profile) }
        self.equalizer = equalizer.bands
        gainDB = equalizer.gain ?? 0
        self.analysis = analysis.streamingOptions()
    }

    /// The kinds of option these settings change from the defaults, as a person names them (empty: none), for a
    /// command that would otherwise ignore them.
    var changedParts: [String] {
        let unchanged = ConversionSettings()
        var given: [String] = []
        if voice != unchanged.voice { given.append("voice options (--pitch, --formant, --preset, ...)") }
        if equalizer != unchanged.equalizer { given.append("EQ options") }
        if gainDB != unchanged.gainDB { given.append("--gain") }
        if forceVocoder != unchanged.forceVocoder { given.append("--vocoder") }
        if limitsOutput != unchanged.limitsOutput { given.append("--no-limit") }
        if speakerProfile != nil { given.append("--profile") }
        return given
    }
}

/// The options of a conversion, as `koe convert` and `koe batch` take them: the voice, the F0 edits and the limiter,
/// the EQ and the analysis.
struct ConversionOptions: ParsableArguments {
    @OptionGroup(title: "Voice") var voice: ConversionVoiceOptions
    @OptionGroup(title: "F0 edits and output limiter") var curves: VoiceCurveOptions
    @OptionGroup(title: "Equalizer") var equalizer: EqualizerOptions
    @OptionGroup(title: "Analysis") var analysis: AnalysisFlags

    /// The conversion these options ask for, on up to `threads` threads; throws `KoeError` for a curve or F0 file
    /// that cannot be used.
    func settings(threads: Int) throws -> ConversionSettings {
        var settings = try ConversionSettings(voice: voice.voice, equalizer: equalizer, analysis: analysis)
        if let tempo = voice.tempo { settings.voice.tempo = tempo }
        settings.forceVocoder = voice.forceVocoder
        settings.threads = threads
        try curves.apply(to: &settings)
        return settings
    }
}

/// What convert and batch say while and after they work.
struct ReportingOptions: ParsableArguments {
    @Flag(help: "Print the statistics (convert) or the summary (batch) as one JSON object on stderr at the end.")
    var json = false

    @Flag(help: "Show a progress bar on stderr (the default when stderr is a terminal and the length known).")
    var progress = false

    @Flag(help: "No progress bar, and no summary line.")
    var quiet = false

    func validate() throws {
        if progress && quiet { throw ValidationError("--progress and --quiet exclude each other") }
    }
}

struct RawOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Type of the input stream: raw (needed for -).", valueName: "raw"))
    var type: String?

    @Option(help: ArgumentHelp("Sample rate of raw input, in Hz.", valueName: "hz"))
    var rate: Int?

    @Option(help: ArgumentHelp("Sample encoding of raw input.", valueName: "signed|unsigned|float"))
    var encoding: RawPCMFormat.Encoding?

    @Option(help: ArgumentHelp("Bits per raw input sample.", valueName: "8|16|24|32|64"))
    var bits: Int?

    @Option(help: ArgumentHelp("Channels of raw input (interleaved).", valueName: "n"))
    var channels: Int?

    @Option(help: ArgumentHelp("Byte order of raw input (default little).", valueName: "little|big"))
    var endian: RawPCMFormat.Endianness?

    @Option(name: .customLong("out-type"), help: ArgumentHelp("Type of the output stream: raw (needed for -).", valueName: "raw"))
    var outType: String?

    @Option(name: .customLong("out-encoding"), help: ArgumentHelp(
        "Sample encoding of raw output (default: the input's, or signed).", valueName: "signed|unsigned|float"))
    var outEncoding: RawPCMFormat.Encoding?

    @Option(name: .customLong("out-bits"), help: ArgumentHelp("Bits per raw output sample (default: the input's, or 16).", valueName: "n"))
    var outBits: Int?

    @Option(name: .customLong("out-endian"), help: ArgumentHelp("Byte order of raw output (default: the input's).", valueName: "little|big"))
    var outEndian: RawPCMFormat.Endianness?

    var inputIsRaw: Bool { type == "raw" }
    var outputIsRaw: Bool { (outType ?? type) == "raw" }

    func validate() throws {
        for (flag, value) in [("--type", type), ("--out-type", outType)] {
            if let value, value != "raw" {
                throw ValidationError("\(flag) \(value): only raw is a stream type; files are recognised by their contents and extension")
            }
        }
        let describesInput = rate != nil || encoding != nil || bits != nil || channels != nil || endian != nil
        if describesInput && !inputIsRaw {
            throw ValidationError("--rate, --encoding, --bits, --channels and --endian describe raw input: add --type raw")
        }
        if inputIsRaw {
            let missing = [("--rate", rate == nil), ("--encoding", encoding == nil), ("--bits", bits == nil), ("--channels", channels == nil)]
                .filter(\.1).map(\.0)
            if !missing.isEmpty {
                throw ValidationError("raw input needs \(missing.joined(separator: ", "))")
            }
            _ = try usage { try inputFormat() }
        }
        let describesOutput = outEncoding != nil || outBits != nil || outEndian != nil
        if describesOutput && !outputIsRaw {
            throw ValidationError("--out-encoding, --out-bits and --out-endian describe raw output: add --out-type raw")
        }
    }

    /// The input named on the command line: raw PCM on standard input for `-`, else an audio file.
    func input(_ path: String) throws -> ConversionInput {
        guard path == "-" else { return .file(path) }
        let reader = RawPCMReader(format: try inputFormat())
        return .stream(
            name: reader.name, sampleRate: reader.format.sampleRate, channels: reader.format.channels,
            read: reader.read(maxFrames:), mayWait: { !reader.hasInputWaiting })
    }

    /// The output named on the command line: raw PCM on standard output for `-`, with `input`'s rate and channels;
    /// else an audio file.
    func output(_ path: String, for input: ConversionInput) throws -> ConversionOutput {
        guard path == "-" else { return .file(path) }
        let sampleRate: Int, channels: Int
        switch input {
        case .file(let path):
            let file = try AudioFile(reading: path)
            (sampleRate, channels) = (file.sampleRate, file.channels)
        case .stream(_, let rate, let count, _, _):
            (sampleRate, channels) = (rate, count)
        }
        let writer = RawPCMWriter(format: try outputFormat(sampleRate: sampleRate, channels: channels))
        return .stream(fullScale: writer.format.fullScale) { interleaved in
            let clipped = writer.clippedSamples
            try writer.write(interleaved: interleaved)
            return writer.clippedSamples - clipped
        }
    }

    func inputFormat() throws -> RawPCMFormat {
        do {
            return try RawPCMFormat(
                sampleRate: rate ?? 0, channels: channels ?? 0, encoding: encoding ?? .signed, bits: bits ?? 0,
                endianness: endian ?? .little)
        } catch IOError.invalidRawFormat(.sampleRate(let rate)) {
            throw ValidationError("--rate must be positive (got \(rate))")
        } catch IOError.invalidRawFormat(.channels(let count)) {
            throw ValidationError("--channels must be between 1 and \(RawPCMFormat.maxChannels) (got \(count))")
        }
    }

    /// Raw output keeps the input's description unless told otherwise; from a file it is 16-bit signed.
    func outputFormat(sampleRate: Int, channels: Int) throws -> RawPCMFormat {
        let encoding = outEncoding ?? (inputIsRaw ? self.encoding : nil) ?? .signed
        let bits = outBits ?? (outEncoding == nil && inputIsRaw ? self.bits : nil) ?? (encoding == .float ? 32 : 16)
        return try usage {
            try RawPCMFormat(
                sampleRate: sampleRate, channels: channels, encoding: encoding, bits: bits,
                endianness: outEndian ?? endian ?? .little)
        }
    }

    /// Format errors found while parsing are usage errors.
    private func usage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as IOError {
            throw ValidationError(error.description)
        }
    }
}

/// A value argument-parser takes through a library initializer that throws: its reason becomes the usage error.
func parsed<Value>(
    _ initializer: @escaping @Sendable (String) throws(KoeError) -> Value
) -> @Sendable (String) throws -> Value {
    { argument in
        do {
            return try initializer(argument)
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

extension Preset: ExpressibleByArgument {
    public init?(argument: String) {
        guard let preset = Preset.named(argument) else { return nil }
        self = preset
    }

    public static var allValueStrings: [String] { all.map(\.name) }
}

extension RawPCMFormat.Encoding: ExpressibleByArgument {}
extension RawPCMFormat.Endianness: ExpressibleByArgument {}
