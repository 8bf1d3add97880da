import KoeStages
import KoeWorld

/// The `geq` setting's gains, for koe's own front ends below the door (the live voice keeps them apart from the
/// explicit bands).
package typealias GraphicEqualizer = KoeStages.GraphicEqualizer

/// Settings by name, from text: how the C ABI's `koe_convert`, Python's `koe.convert` and the command line's
/// text options reach a conversion's settings, checked by the settings table.
extension ConversionSettings {
    /// Sets the setting `name` (`Setting.all`'s name, or the command line's with dashes) from its text: a number,
    /// a flag's `true`/`false`/`1`/`0`, or the text the command line takes (a preset's name, an EQ band, a file).
    /// A number outside its setting's range is refused with the range in the message. `eq` adds a band each time;
    /// `snap_strength`, `snap_speed` and `a4` tune a snap set before them, and a preset replaces the voice, so
    /// settings are applied in `Setting.all`'s order.
    public mutating func set(_ name: String, to text: String) throws(KoeError) {
        guard let setting = Setting.named(name) else {
            throw .invalidArgument("unknown setting '\(name)' (settings: \(Setting.all.map(\.name).joined(separator: ", ")))")
        }
        switch setting.kind {
        case .flag:
            set(setting, try Self.flag(text, named: setting.name))
        case .number, .count:
            guard let value = Double(text) else { throw .invalidArgument("\(setting.name) must be a number (got '\(text)')") }
            try setting.validate(value)
            try set(setting, value)
        case .text:
            try set(setting, text: text)
        }
    }

    /// A flag's text, `true` or `1`, `false` or `0` (any case), as every setting's and a live switch's.
    package static func flag(_ text: String, named name: String) throws(KoeError) -> Bool {
        switch text.lowercased() {
        case "1", "true": true
        case "0", "false": false
        default: throw .invalidArgument("\(name) must be true or false (got '\(text)')")
        }
    }

    private mutating func set(_ setting: Setting, _ on: Bool) {
        switch setting {
        case .whisper: voice.whisper = on
        case .vocoder: forceVocoder = on
        case .noLimit: limitsOutput = !on
        default: analysis.live = on
        }
    }

    private mutating func set(_ setting: Setting, _ value: Double) throws(KoeError) {
        switch setting {
        case .pitch, .semitones, .pitchMedian:
            // An explicit pitch, or a median asked for in Hz, is what the preset's target would have decided.
            aimsPitch = false
            switch setting {
            case .pitch: voice.pitch = value
            case .semitones: voice.semitones = value
            default: voice.pitchMedian = value
            }
        case .pitchRange: voice.pitchRange = value
        case .formant:
            aimsFormant = false
            voice.formant = value
        case .tempo: voice.tempo = value
        case .gain: gainDB = value
        case .snapStrength, .snapSpeed, .a4:
            guard var snap = voice.snap else { throw .invalidArgument("\(setting.name) tunes snap: give snap too") }
            switch setting {
            case .snapStrength: snap.strength = value
            case .snapSpeed: snap.speed = value
            default: snap.a4 = value
            }
            voice.snap = snap
        case .vibratoRate: voice.vibrato = Vibrato.Options(rate: value, depth: voice.vibrato?.depth ?? Vibrato.Options().depth)
        case .vibratoDepth: voice.vibrato = Vibrato.Options(rate: voice.vibrato?.rate ?? Vibrato.Options().rate, depth: value)
        case .framePeriod: analysis.framePeriod = value
        case .f0Floor: analysis.f0Floor = value
        case .f0Ceil: analysis.f0Ceil = value
        case .lookAhead: analysis.lookAhead = value
        case .threads: threads = Int(value)
        default: chunkFrames = Int(value)
        }
    }

    private mutating func set(_ setting: Setting, text: String) throws(KoeError) {
        switch setting {
        case .preset: try apply(preset: text)
        case .pitchCurve: voice.pitchCurve = try PitchCurve(contentsOf: text)
        case .f0File: voice.f0Track = try F0Track(contentsOf: text)
        case .snap: voice.snap = PitchSnap.Options(scale: try MusicalScale(parsing: text))
        case .vibrato:
            let fields = text.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 2, let rate = Double(fields[0]), let depth = Double(fields[1]) else {
                throw .invalidArgument("vibrato '\(text)': expected RATE_HZ:DEPTH_CENTS, such as 5.5:50")
            }
            try Setting.vibratoRate.validate(rate, as: "vibrato's rate")
            try Setting.vibratoDepth.validate(depth, as: "vibrato's depth")
            voice.vibrato = Vibrato.Options(rate: rate, depth: depth)
        case .eq: equalizer.append(try EqualizerBand(parsing: text))
        case .geq: equalizer += try GraphicEqualizer(parsing: text).bands
        default:
            guard let method = AnalysisOptions.F0Method(rawValue: text) else {
                throw .invalidArgument("f0_method must be dio or harvest (got '\(text)')")
            }
            analysis.f0Method = method
        }
    }
}
