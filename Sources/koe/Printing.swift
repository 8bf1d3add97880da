import ArgumentParser
import Foundation

/// `object` as one line of JSON with its keys sorted, as every `--json` prints it ("{}" should a value not be
/// JSON's). `escapingSlashes: false` writes a path's slashes as they are.
func jsonLine(_ object: [String: Any], escapingSlashes: Bool = true) -> String {
    let options: JSONSerialization.WritingOptions = escapingSlashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: options) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
}

/// Prints `rows` as a table a person reads: cells two spaces apart, each column but the last padded to its widest.
func printColumns(_ rows: [[String]]) {
    let widths = rows.reduce(into: [Int]()) { widths, row in
        for (column, cell) in row.enumerated() {
            if column == widths.count { widths.append(0) }
            widths[column] = max(widths[column], cell.count)
        }
    }
    for row in rows {
        let padded = row.enumerated().map { column, cell in
            column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
        }
        print(padded.joined(separator: "  "))
    }
}

/// A command that lists a table (`koe presets`, `koe settings`): as columns, or with --json as one JSON object.
protocol TableListing: ParsableCommand {
    /// Set by the command's --json flag.
    var json: Bool { get }
    /// A row a line, a cell a column.
    static var rows: [[String]] { get }
    /// The table as one JSON object keyed by its rows' names.
    static var json: String { get }
}

extension TableListing {
    func run() {
        if json {
            print(Self.json)
        } else {
            printColumns(Self.rows)
        }
    }
}
