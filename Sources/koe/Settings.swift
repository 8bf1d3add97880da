import ArgumentParser
import Foundation
import Koe
import KoePanel

struct Settings: TableListing {
    static let configuration = CommandConfiguration(
        abstract: "List the settings: each one's name, range, default and help, as every front end takes it.",
        discussion: """
            One table for the command line (--pitch-median), koe live --set, Python's koe.convert and C's \
            koe_convert (pitch_median), and the plugins' ports. A value outside its range is refused with the \
            range in the message; a live control clamps to it.
            """)

    @Flag(help: "Print one JSON object keyed by setting name instead.")
    var json = false

    static var rows: [[String]] {
        Setting.all.map { [$0.name, values(of: $0), $0.summary] }
    }

    /// What a setting takes, in a few words: `1/16 to 16 ratio (1)`, `flag`, `text: key:scale`.
    private static func values(of setting: Setting) -> String {
        switch setting.type {
        case "flag": return "flag"
        case "text": return "text: " + setting.unit
        default:
            var words = setting.range.map { "\($0.lowerBound.formatted) to \($0.upperBound.formatted)" } ?? "number"
            if !setting.unit.isEmpty { words += " " + setting.unit }
            if let value = setting.defaultValue { words += " (\(value.formatted))" }
            return words
        }
    }

    /// The table as one JSON object, keys sorted: `{"pitch": {"type": "number", "unit": "ratio", "minimum":
    /// 0.0625, "maximum": 16, "default": 1, "logarithmic": true, "live": true, "flag": "--pitch", "help": "..."},
    /// ...}`; `live` says whether `koe live --set` and the panel change it while the voice runs.
    static var json: String { PanelDocument.table }
}
