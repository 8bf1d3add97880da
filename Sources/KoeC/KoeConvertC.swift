// `koe convert` for C callers (koe_convert in include/koe.h): the CLI's long options as name/value text pairs,
// turned into `ConversionSettings` with the library's public API, then `convertFile`, the conversion the CLI
// runs. The preset goes first and explicit options over it, as on the command line.
import Koe

/// `count` C strings from `pointer`, refusing NULL ones; `name` says which in the error.
func strings(_ pointer: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32, _ name: String) throws -> [String] {
    guard count >= 0 else { throw CallError("\(name) cannot number \(count)") }
    guard count > 0 else { return [] }
    guard let pointer else { throw CallError("\(name) are NULL") }
    return try (0..<Int(count)).map { index in
        guard let text = pointer[index] else { throw CallError("\(name): entry \(index) is NULL") }
        return String(cString: text)
    }
}

/// The options of one conversion, by name, as the caller gave them.
private struct ConvertOptions {
    private var values: [String: [String]] = [:]

    /// The options a conversion takes: convert's long options, snake_case.
    static let names: Set<String> = [
        "pitch", "semitones", "pitch_median", "pitch_range", "formant", "preset", "tempo", "vocoder", "eq", "gain",
        "f0_method", "frame_period", "f0_floor", "f0_ceil", "look_ahead", "live", "threads", "chunk_size",
        "pitch_curve", "f0_file", "snap", "snap_strength", "snap_speed", "a4", "vibrato", "no_limit",
    ]

    init(names: [String], values: [String]) throws {
        for (name, value) in zip(names, values) {
            guard Self.names.contains(name) else {
                throw CallError("unknown option '\(name)' (options: \(Self.names.sorted().joined(separator: ", ")))")
            }
            guard self.values[name] == nil || name == "eq" else { throw CallError("option '\(name)' given twice") }
            self.values[name, default: []].append(value)
        }
    }

    func text(_ name: String) -> String? { values[name]?.last }

    func all(_ name: String) -> [String] { values[name] ?? [] }

    func number(_ name: String) throws -> Double? {
        guard let text = text(name) else { return nil }
        guard let value = Double(text) else { throw CallError("\(name) must be a number (got '\(text)')") }
        return value
    }

    func count(_ name: String) throws -> Int? {
        guard let text = text(name) else { return nil }
        guard let value = Int(text) else { throw CallError("\(name) must be a whole number (got '\(text)')") }
        return value
    }

    func flag(_ name: String) throws -> Bool? {
        guard let text = text(name) else { return nil }
        switch text {
        case "1", "true": return true
        case "0", "false": return false
        default: throw CallError("\(name) must be true or false (got '\(text)')")
        }
    }

    /// The settings these options ask for, built as `koe convert` builds them from its flags.
    func settings() throws -> ConversionSettings {
        var settings = ConversionSettings()
        if let preset = text("preset") { try settings.apply(preset: preset) }
        let pitch = try number("pitch"), semitones = try number("semitones")
        if pitch != nil && semitones != nil { throw CallError("give pitch or semitones, not both") }
        if let pitch { settings.voice.pitch = pitch }
        if let semitones {
            guard (-48...48).contains(semitones) else { throw CallError("semitones must be between -48 and 48 (got \(semitones))") }
            settings.voice.semitones = semitones
        }
        if let median = try number("pitch_median") { settings.voice.pitchMedian = median }
        if let range = try number("pitch_range") { settings.voice.pitchRange = range }
        if let formant = try number("formant") { settings.voice.formant = formant }
        if let tempo = try number("tempo") { settings.voice.tempo = tempo }
        settings.forceVocoder = try flag("vocoder") ?? false
        settings.equalizer = try all("eq").map { spec throws(KoeError) in try EqualizerBand(parsing: spec) }
        settings.gainDB = try number("gain") ?? 0
        if let method = text("f0_method") {
            guard let parsed = AnalysisOptions.F0Method(rawValue: method) else {
                throw CallError("f0_method must be dio or harvest (got '\(method)')")
            }
            settings.analysis.f0Method = parsed
        }
        if let period = try number("frame_period") { settings.analysis.framePeriod = period }
        if let floor = try number("f0_floor") { settings.analysis.f0Floor = floor }
        if let ceil = try number("f0_ceil") { settings.analysis.f0Ceil = ceil }
        settings.analysis.lookAhead = try number("look_ahead")
        settings.analysis.live = try flag("live") ?? false
        settings.threads = try count("threads") ?? 1
        settings.chunkFrames = try count("chunk_size") ?? settings.chunkFrames
        try applyCurves(to: &settings)
        settings.limitsOutput = !(try flag("no_limit") ?? false)
        return settings
    }

    /// The F0 edits beyond constant ratios: curve and F0 files, snap, vibrato (convert's VoiceCurveOptions).
    private func applyCurves(to settings: inout ConversionSettings) throws {
        settings.voice.pitchCurve = try text("pitch_curve").map { path throws(KoeError) in try PitchCurve(contentsOf: path) }
        settings.voice.f0Track = try text("f0_file").map { path throws(KoeError) in try F0Track(contentsOf: path) }
        let strength = try number("snap_strength"), speed = try number("snap_speed"), a4 = try number("a4")
        if let snap = text("snap") {
            let defaults = PitchSnap.Options()
            settings.voice.snap = PitchSnap.Options(
                scale: try MusicalScale(parsing: snap), strength: strength ?? defaults.strength,
                speed: speed ?? defaults.speed, a4: a4 ?? defaults.a4)
        } else if strength != nil || speed != nil || a4 != nil {
            throw CallError("snap_strength, snap_speed and a4 tune snap: give snap too")
        }
        if let vibrato = text("vibrato") {
            let fields = vibrato.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 2, let rate = Double(fields[0]), let depth = Double(fields[1]) else {
                throw CallError("vibrato '\(vibrato)': expected RATE_HZ:DEPTH_CENTS, such as 5.5:50")
            }
            settings.voice.vibrato = Vibrato.Options(rate: rate, depth: depth)
        }
    }
}

@_cdecl("koe_convert")
public func koe_convert(
    _ input: UnsafePointer<CChar>?, _ output: UnsafePointer<CChar>?, _ names: UnsafePointer<UnsafePointer<CChar>?>?,
    _ values: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let input, let output else { throw CallError("the input or output path is NULL") }
        let options = try ConvertOptions(names: strings(names, count, "option names"), values: strings(values, count, "option values"))
        let settings = try options.settings()
        do {
            _ = try convertFile(String(cString: input), to: String(cString: output), settings: settings)
        } catch KoeError.io(let reason) {
            throw CallError(reason, status: statusIO)
        }
    }
}
