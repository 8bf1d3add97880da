import Foundation
import Koe
import KoeLive

/// What the panel's page reads, as JSON: the settings it offers (the settings table's live ones, each as
/// `koe settings --json` gives it, and `bypass`) with what the controls of the text settings list, the values
/// now, and what the audio thread measured.
package enum PanelDocument {
    /// A setting as `koe settings --json` and the page describe it.
    static func entry(_ setting: Setting) -> [String: Any] {
        [
            "name": setting.name, "type": setting.type, "unit": setting.unit, "minimum": setting.range?.lowerBound ?? NSNull(),
            "maximum": setting.range?.upperBound ?? NSNull(), "default": setting.defaultValue ?? NSNull(),
            "logarithmic": setting.isLogarithmic, "live": setting.changesLive, "flag": setting.flag, "help": setting.summary,
        ]
    }

    /// The settings table as one JSON object keyed by name, keys sorted (`koe settings --json`).
    package static var table: String {
        text(Dictionary(uniqueKeysWithValues: Setting.all.map { ($0.name, entry($0).filter { $0.key != "name" }) }))
    }

    /// The page's description of the controls, for a voice at `sampleRate`.
    static func settings(sampleRate: Int) -> [UInt8] {
        var settings = Setting.all.filter(\.changesLive).map(entry)
        settings.append([
            "name": LiveSettings.bypass, "type": "flag", "unit": "", "minimum": NSNull(), "maximum": NSNull(), "default": 0,
            "logarithmic": false, "live": true, "flag": NSNull(), "help": LiveSettings.bypassSummary,
        ])
        let gains = EqualizerBand.gainRange
        let document: [String: Any] = [
            "settings": settings,
            "presets": Preset.all.map {
                [
                    "name": $0.name, "summary": $0.summary, "pitch": $0.voice.pitch, "formant": $0.voice.formant,
                    "f0MedianHz": $0.target.map { $0.f0Median as Any } ?? NSNull(),
                ]
            },
            "graphicEQ": [
                "frequencies": GraphicEqualizer.frequencies, "minimum": gains.lowerBound, "maximum": gains.upperBound,
            ],
            "eqKinds": EqualizerBand.Kind.allCases.map(\.rawValue),
            "snap": [
                "keys": MusicalScale.keyNames,
                "modes": MusicalScale.Mode.allCases.filter { $0 != .chromatic }.map(\.rawValue),
            ],
            "sampleRate": sampleRate,
            "off": LiveSettings.off,
        ]
        return Array(text(document).utf8)
    }

    /// The values now, by name.
    static func state(_ state: LiveSettings.State) -> String {
        var values: [String: Any] = [:]
        for name in LiveSettings.names {
            switch state.value(of: name) {
            case .number(let value): values[name] = value
            case .flag(let on): values[name] = on
            case .text(let text): values[name] = text
            case .off: values[name] = NSNull()
            }
        }
        let aims = state.aims
        let aiming: [String: Any] = [
            "pitch": aims?.pitch ?? false, "formant": aims?.formant ?? false,
            "f0MedianHz": aims.map { $0.f0MedianHz as Any } ?? NSNull(),
            "vocalTractLengthCm": aims.map { $0.vocalTractLengthCm as Any } ?? NSNull(),
        ]
        return text(["type": "state", "version": state.version, "values": values, "aiming": aiming])
    }

    /// A change refused: why, in one line.
    package static func error(_ message: String) -> String {
        text(["type": "error", "message": message])
    }

    /// The records since the last message, the ratios heard (`applied`: pitch and formant, which a voice preset
    /// aims from the speaker) and the counters: each record `[seconds, input peak, output peak, F0 in, F0 out]`
    /// (peaks as magnitudes, F0 in Hz, 0 unvoiced).
    static func telemetry(_ records: [LiveTelemetry.Record], engine: LiveEngine) -> String {
        let rate = Double(engine.changer.sampleRate)
        return text([
            "type": "telemetry",
            "records": records.map { [Double($0.frame) / rate, Double($0.inputPeak), Double($0.outputPeak), $0.inputF0, $0.outputF0] },
            "applied": [engine.applied.pitch, engine.applied.formant],
            "latencyMs": engine.reportedLatency * 1000,
            "xruns": engine.xruns.load(ordering: .relaxed),
            "refusedBlocks": engine.refusedBlocks.load(ordering: .relaxed),
            "busiestPercent": engine.busiestShare * 100,
            "busiestSecond": engine.busiestSecond,
            "mostWorkPercent": engine.mostWorkShare * 100,
        ])
    }

    private static func text(_ object: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
