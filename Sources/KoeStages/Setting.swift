import KoeWorld

/// One setting of a conversion or a live voice, as every front end names, ranges and checks it. `Setting.all` is
/// the table: the command line's options and their help, `koe live --set`, the C ABI's `koe_convert`, Python's
/// `koe.convert` and the plugins' ports are made from it or tested against it. One rule, one place: a front end
/// that takes a value from a person refuses one outside `range` with `validate`, whose message gives the range;
/// a live control (a changer's property, a plugin port, an arrow key) clamps to the same range.
public struct Setting: Sendable {
    /// What a setting's value is.
    package enum Kind: String, Sendable {
        /// A real number within `range` (where it has one).
        case number
        /// A whole number within `range`.
        case count = "integer"
        /// On or off; present or absent on a command line.
        case flag
        /// Words: a name, a file, a band's description, …; `unit` says which.
        case text
    }

    /// The name as `--set`, Python, C and the plugins' ports spell it (`pitch_median`); the command line writes
    /// it with dashes (`--pitch-median`).
    public let name: String
    package let kind: Kind
    /// What the value is: `number`, `integer` (both within `range` where there is one), `flag` (on or off) or
    /// `text` (a name, a file, a band's description, …: `unit` says which), as `koe settings --json` says it.
    public var type: String { kind.rawValue }
    /// A number's unit (`ratio`, `Hz`, `dB`, `ms`, `cents`, `semitones`, `frames`, `threads`; empty for a plain
    /// number or a flag), or what a text holds (`name`, `file`, `key:scale`, …).
    public let unit: String
    /// The values a number may take; nil where the rule is more than a range (the F0 floor and ceiling, checked
    /// against each other and the sample rate by `AnalysisOptions`) or for a flag or text.
    public let range: ClosedRange<Double>?
    /// The value when none is given; nil where there is none (a text, a median that is the voice's own).
    public let defaultValue: Double?
    /// Whether the number is a ratio a control moves on a logarithmic scale.
    public let isLogarithmic: Bool
    /// Whether a running voice takes a change to it (`koe live --set`, the live panel). Not live: tempo (a stream
    /// keeps time), the vocoder switch and the analysis (fixed when the changer is made, its latency with them),
    /// and the files (a new pitch curve's points would be freed on the audio thread; an F0 file is one input's).
    package let changesLive: Bool
    /// One line of help.
    public let summary: String

    /// The command line's spelling: `--pitch-median`.
    public var flag: String { "--" + name.replacingUnderscores }

    /// The setting called `name` (`pitch_median`, or the command line's `pitch-median`); nil for none.
    public static func named(_ name: String) -> Setting? {
        let name = name.replacingDashes
        return all.first { $0.name == name }
    }

    /// Throws `KoeError.invalidArgument` for a value outside `range`, or a count that is not whole, naming the
    /// setting as `spelling` (default: its name) and giving the range.
    public func validate(_ value: Double, as spelling: String? = nil) throws(KoeError) {
        if let problem = problem(value, as: spelling ?? name) { throw .invalidArgument(problem) }
    }

    /// `value` within `range`, as a live control takes it; nil for a value that is not a number, which a live
    /// control ignores.
    package func clamped(_ value: Double) -> Double? {
        guard value.isFinite else { return nil }
        guard let range else { return value }
        return min(max(value, range.lowerBound), range.upperBound)
    }

    /// What is wrong with `value` for this setting, said in words naming it `spelling`; nil when it is allowed.
    package func problem(_ value: Double, as spelling: String) -> String? {
        let unit = ["", "ratio"].contains(unit) ? "" : " " + unit
        guard let range else { return value.isFinite ? nil : "\(spelling) must be a number (got \(value))" }
        let bounds = "\(range.lowerBound.asWritten) and \(range.upperBound.asWritten)\(unit)"
        if kind == .count && value.rounded() != value {
            return "\(spelling) must be a whole number between \(bounds) (got \(value.asWritten))"
        }
        return range.contains(value) ? nil : "\(spelling) must be between \(bounds) (got \(value.asWritten))"
    }

    private init(
        _ name: String, _ kind: Kind, _ unit: String = "", range: ClosedRange<Double>? = nil, default defaultValue: Double? = nil,
        logarithmic: Bool = false, live: Bool = false, _ summary: String
    ) {
        self.name = name
        self.kind = kind
        self.unit = unit
        self.range = range
        self.defaultValue = defaultValue
        self.isLogarithmic = logarithmic
        self.changesLive = live
        self.summary = summary
    }

    /// Pitch, tempo and formant ratios reach four octaves either way: beyond that an F0 or an output length runs
    /// off towards infinity rather than towards a voice, and a formant leaves the band.
    private static let ratios = 1.0 / 16...16

    package static let preset = Setting("preset", .text, "name", live: true, "A named voice (see `koe presets`); explicit settings override it.")
    package static let pitch = Setting("pitch", .number, "ratio", range: ratios, default: 1, logarithmic: true, live: true, "F0 ratio: 2 is an octave up.")
    package static let semitones = Setting(
        "semitones", .number, "semitones", range: -48...48, default: 0, live: true, "The pitch as a shift in semitones (instead of pitch).")
    package static let pitchMedian = Setting(
        "pitch_median", .number, "Hz", range: 10...5000, live: true,
        "Move the median F0 of voiced frames to this, as Praat's \"new pitch median\".")
    package static let pitchRange = Setting(
        "pitch_range", .number, "ratio", range: 0...10, default: 1, live: true,
        "Scale F0 excursions around the median in log-F0: 0 monotone, 1 unchanged. A file's median comes from a first pass over it; a stream uses the running median.")
    package static let formant = Setting(
        "formant", .number, "ratio", range: ratios, default: 1, logarithmic: true, live: true,
        "Scale the spectral envelope's frequency axis: above 1 moves formants up.")
    package static let tempo = Setting(
        "tempo", .number, "ratio", range: ratios, default: 1, logarithmic: true,
        "Speed (2 = twice as fast) with pitch and formants kept; a file's setting, not a stream's.")
    package static let whisper = Setting("whisper", .flag, "", live: true, "Replace the voice's excitation by noise: breath only.")
    package static let vocoder = Setting("vocoder", .flag, "", "Run the vocoder even when the voice is unchanged (analysis and resynthesis).")
    package static let pitchCurve = Setting(
        "pitch_curve", .text, "file",
        "Pitch ratio over time: a file of lines 'time ratio' (seconds of input, CSV or whitespace), linear between points, held past the ends; multiplies pitch.")
    package static let f0File = Setting(
        "f0_file", .text, "file",
        "F0 in Hz for each analysis frame (0 = unvoiced), replacing the analysed F0: a float64 .npy as `koe analyze` writes f0.npy, or text with one value a line. Its length must be the input's frame count.")
    package static let snap = Setting(
        "snap", .text, "key:scale", live: true,
        "Pull voiced F0 to the nearest note: chromatic, or KEY:SCALE such as C:major, A:minor, F#:dorian (\(MusicalScale.modeNames)).")
    package static let snapStrength = Setting(
        "snap_strength", .number, range: 0...1, default: 1, live: true, "How far snap moves F0 to its note: 0 not at all, 1 all the way.")
    package static let snapSpeed = Setting(
        "snap_speed", .number, "ms", range: 0...10_000, default: 0, live: true,
        "Time constant with which snap reaches a note (0: at once; up to 10 s: slower than that a note never arrives).")
    package static let a4 = Setting(
        "a4", .number, "Hz", range: 400...480, default: 440, live: true, "Tuning of snap: A4, from baroque's 415 Hz to the highest orchestras'.")
    package static let vibrato = Setting(
        "vibrato", .text, "hz:cents", live: true, "Sinusoidal vibrato on voiced frames: vibrato_rate:vibrato_depth, such as 5.5:50.")
    package static let vibratoRate = Setting(
        "vibrato_rate", .number, "Hz", range: 0...20, default: 0, live: true,
        "Vibrato's oscillations a second, from none (0) or a slow swell to a fast trill; well below half the frame rate.")
    package static let vibratoDepth = Setting(
        "vibrato_depth", .number, "cents", range: 0...1200, default: 50, live: true, "Vibrato's peak deviation from F0, up to an octave either way.")
    package static let eq = Setting(
        "eq", .text, "type:freq[:gain-db[:q]]", live: true,
        "An EQ band, repeatable; TYPE is peak, lowshelf, highshelf, lowpass or highpass (e.g. peak:1000:6:1.4).")
    package static let geq = Setting("geq", .text, "g1,...,g10", live: true, "10-band graphic EQ: gains in dB at 31.25 Hz ... 16 kHz (octaves).")
    /// Beyond ±60 dB a gain only amplifies rounding noise, and far beyond, a band's amplitude 10^(dB/40) overflows.
    package static let gain = Setting("gain", .number, "dB", range: -60...60, default: 0, live: true, "Output gain.")
    package static let noLimit = Setting(
        "no_limit", .flag, "", live: true, "Turn off the output limiter: samples beyond full scale are clipped and counted instead.")
    package static let f0Method = Setting("f0_method", .text, "dio|harvest", "F0 estimator.")
    package static let framePeriod = Setting(
        "frame_period", .number, "ms", range: AnalysisOptions.streamingFramePeriods, default: AnalysisOptions().framePeriod,
        "Time between analysis frames.")
    package static let f0Floor = Setting(
        "f0_floor", .number, "Hz", default: AnalysisOptions().f0Floor,
        "Lowest F0 searched, at least 10 Hz and below f0_ceil; also sets CheapTrick's FFT size.")
    package static let f0Ceil = Setting(
        "f0_ceil", .number, "Hz", default: AnalysisOptions().f0Ceil, "Highest F0 searched, below half the sample rate.")
    package static let lookAhead = Setting(
        "look_ahead", .number, "ms", range: 0...AnalysisOptions.longestContext,
        "Input the analysis waits for past a frame before settling its F0 (default: DIO 80, Harvest 150, live as little as the windows allow). Longer agrees with whole-file WORLD on more frames and adds as much latency.")
    package static let live = Setting(
        "live", .flag, "",
        "The lowest-latency analysis and synthesis (about 47 ms at the default F0 floor): DIO decides each F0 as soon as its windows' samples have come.")
    /// More threads than a machine has cores only cost, and each is a thread.
    package static let threads = Setting(
        "threads", .count, "threads", range: 1...1024,
        "Threads to use: the channels at once, and each channel's vocoder on its share of them. The output is the same for any count.")
    /// A chunk's buffers are allocated whole, channels times over: past 2^20 frames a chunk is memory, not speed.
    package static let chunkSize = Setting(
        "chunk_size", .count, "frames", range: 1...Double(1 << 20), default: 4096,
        "Frames read and processed at a time; the output is the same for any size.")

    /// Matches a setting in a `switch` by name (`case .pitch:`).
    package static func ~= (pattern: Setting, value: Setting) -> Bool {
        pattern.name == value.name
    }

    /// Every setting, in the order a conversion applies them: a preset first, explicit settings over it.
    public static let all: [Setting] = [
        preset, pitch, semitones, pitchMedian, pitchRange, formant, tempo, whisper, vocoder, pitchCurve, f0File, snap,
        snapStrength, snapSpeed, a4, vibrato, vibratoRate, vibratoDepth, eq, geq, gain, noLimit, f0Method, framePeriod,
        f0Floor, f0Ceil, lookAhead, live, threads, chunkSize,
    ]
}

extension String {
    fileprivate var replacingUnderscores: String { String(map { $0 == "_" ? "-" : $0 }) }
    fileprivate var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }
}
