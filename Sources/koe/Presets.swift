import ArgumentParser
import Foundation
import Koe

struct Presets: TableListing {
    static let configuration = CommandConfiguration(
        abstract: "List the named voices for `koe convert --preset`.",
        discussion: """
            A voice preset aims at a voice: a median F0 and a vocal-tract length from published measurements. \
            Converting a file measures the speaker first (koe profile) and computes the ratios that reach the \
            target: pitch = target F0 / the speaker's median, formant = the speaker's vocal-tract length (taken \
            within the adult 14.5 to 18 cm) / the target's, bounded to 0.4-4 and 0.75-1.35 (a warning says when a \
            bound bites). A stream, koe live and the plugins take the typical ratios shown in brackets. \
            --pitch or --formant given with a preset are ratios and win over its target.
            """)

    @Flag(help: "Print one JSON object keyed by preset name instead (f0_median_hz is null for an effect).")
    var json = false

    static var rows: [[String]] {
        Preset.all.map { preset in
            let aim = preset.target.map { "target \($0.f0Median.formatted) Hz, \($0.vocalTractLength.formatted) cm tract  " } ?? "effect  "
            return [preset.name, preset.summary, "\(aim)[\(settings(of: preset))]"]
        }
    }

    /// The preset as the options that would give the same voice: a typical speaker's, for a voice preset.
    private static func settings(of preset: Preset) -> String {
        let voice = preset.voice
        var parts: [String] = []
        if voice.pitch != 1 { parts.append("--pitch \(voice.pitch)") }
        if voice.pitchRange != 1 { parts.append("--pitch-range \(voice.pitchRange)") }
        if voice.formant != 1 { parts.append("--formant \(voice.formant)") }
        if voice.tempo != 1 { parts.append("--tempo \(voice.tempo)") }
        if voice.whisper { parts.append("whisper") }
        parts += preset.bands.map { "--eq \($0)" }
        return parts.joined(separator: " ")
    }

    /// `{"female": {"f0_median_hz": 210, "vocal_tract_length_cm": 14.5, "source": "...", "summary": "...",
    /// "pitch": 1.7, "formant": 1.15, ...}, ...}`, keys sorted; an effect's target fields are null.
    static var json: String {
        var table: [String: Any] = [:]
        for preset in Preset.all {
            let voice = preset.voice
            table[preset.name] = [
                "summary": preset.summary, "f0_median_hz": preset.target?.f0Median ?? NSNull(),
                "vocal_tract_length_cm": preset.target?.vocalTractLength ?? NSNull(), "source": preset.target?.source ?? NSNull(),
                "pitch": voice.pitch, "formant": voice.formant, "pitch_range": voice.pitchRange, "tempo": voice.tempo,
                "whisper": voice.whisper, "eq": preset.bands.map { "\($0)" },
            ] as [String: Any]
        }
        return jsonLine(table)
    }
}
