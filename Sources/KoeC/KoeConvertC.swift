// `koe convert` for C callers (koe_convert in include/koe.h): the settings table's names with text values,
// turned into `ConversionSettings` by `ConversionSettings.set`, then `convert`, the conversion the CLI runs.
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

/// The settings `names` and `values` ask for, applied in the settings table's order (a preset first, explicit
/// settings over it), as `koe convert` applies its flags; each name given once but `eq`.
private func conversionSettings(names: [String], values: [String]) throws -> ConversionSettings {
    var given: [String: [String]] = [:]
    for (name, value) in zip(names, values) {
        guard let setting = Setting.named(name) else {
            throw CallError("unknown option '\(name)' (options: \(Setting.all.map(\.name).joined(separator: ", ")))")
        }
        guard given[setting.name] == nil || setting.name == "eq" else { throw CallError("option '\(name)' given twice") }
        given[setting.name, default: []].append(value)
    }
    if given["pitch"] != nil && given["semitones"] != nil { throw CallError("give pitch or semitones, not both") }
    var settings = ConversionSettings()
    for setting in Setting.all {
        for value in given[setting.name] ?? [] { try settings.set(setting.name, to: value) }
    }
    return settings
}

@_cdecl("koe_convert")
public func koe_convert(
    _ input: UnsafePointer<CChar>?, _ output: UnsafePointer<CChar>?, _ names: UnsafePointer<UnsafePointer<CChar>?>?,
    _ values: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let input, let output else { throw CallError("the input or output path is NULL") }
        let settings = try conversionSettings(
            names: strings(names, count, "option names"), values: strings(values, count, "option values"))
        do {
            _ = try convert(.file(String(cString: input)), to: .file(String(cString: output)), settings: settings)
        } catch KoeError.io(let reason) {
            throw CallError(reason, status: statusIO)
        }
    }
}

/// What `koe_profile` fills: koe.h's `koe_profile_result`.
struct CProfile {
    var f0MedianHz: Double
    var f0SpreadSemitones: Double
    var vocalTractLengthCm: Double
    var voicedSeconds: Double
}

@_cdecl("koe_profile")
public func koe_profile(
    _ samples: UnsafePointer<Double>?, _ frames: Int, _ sampleRate: Int32, _ result: UnsafeMutableRawPointer?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let result else { throw CallError("the result is NULL") }
        let signal = try values(samples, frames, "the samples")
        let profile = try SpeakerProfile(analyzing: signal, sampleRate: Int(sampleRate))
        result.assumingMemoryBound(to: CProfile.self).pointee = CProfile(
            f0MedianHz: profile.f0Median, f0SpreadSemitones: profile.f0Spread,
            vocalTractLengthCm: profile.vocalTractLength, voicedSeconds: profile.voicedSeconds)
    }
}
