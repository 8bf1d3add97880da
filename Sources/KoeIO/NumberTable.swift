/// Numbers in a text file, a row a line, as spreadsheets and scripts write them: fields separated by commas,
/// semicolons, tabs or spaces. Blank lines and `#` comments are skipped, and a first line without a single
/// number (`time,ratio`) is taken as a header.
package struct NumberTable: Equatable, Sendable {
    package struct Row: Equatable, Sendable {
        /// The line of the file, counted from 1, for messages.
        package let line: Int
        package let values: [Double]
    }

    package let rows: [Row]

    package static func read(from path: String) throws -> NumberTable {
        try NumberTable(parsing: Files.read(path), path: path)
    }

    /// Reads the bytes of a text file; `path` names the file in errors, which name the line too.
    init(parsing bytes: [UInt8], path: String) throws {
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            throw IOError.invalidText(path: path, line: nil, reason: "not a text file")
        }
        var rows: [Row] = []
        var sawContent = false
        // "\r\n" is one Character in Swift, and a newline.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let content = rawLine.prefix { $0 != "#" }
            let fields = content.split { $0 == "," || $0 == ";" || $0 == " " || $0 == "\t" }
            guard !fields.isEmpty else { continue }
            let numbers = fields.map { Double($0) }
            defer { sawContent = true }
            if !sawContent && numbers.allSatisfy({ $0 == nil }) { continue }
            if let bad = numbers.firstIndex(of: nil) {
                throw IOError.invalidText(path: path, line: index + 1, reason: "'\(fields[bad])' is not a number")
            }
            rows.append(Row(line: index + 1, values: numbers.compactMap { $0 }))
        }
        self.rows = rows
    }
}
