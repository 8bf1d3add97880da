import KoeIO
import KoeStages

extension PitchCurve {
    /// Reads a pitch curve file: one point a line, the time in input seconds and then the ratio, separated by a
    /// comma, a semicolon or spaces (CSV or whitespace); `#` comments, blank lines and a header line are skipped.
    /// Errors name the file and the line.
    public init(contentsOf path: String) throws(KoeError) {
        let table = try KoeError.wrapping { try NumberTable.read(from: path) }
        var points: [Point] = []
        for row in table.rows {
            guard row.values.count == 2 else {
                throw .badInput(source: path, reason: "line \(row.line): expected a time and a ratio, found \(row.values.count) values")
            }
            points.append(Point(time: row.values[0], ratio: row.values[1]))
        }
        if let problem = Self.firstProblem(in: points) {
            throw .badInput(source: path, reason: (problem.index.map { "line \(table.rows[$0].line): " } ?? "") + problem.reason)
        }
        self = try KoeError.wrapping { try PitchCurve(points: points) }
    }
}

extension F0Track {
    /// Reads F0 in Hz, one value an analysis frame, 0 where unvoiced: a 1-D float64 `.npy` as `koe analyze`
    /// writes `f0.npy` (and `numpy.save` of a float64 vector), or text with one value a line. Errors name the
    /// file and the frame or line.
    public init(contentsOf path: String) throws(KoeError) {
        let values: [Double]
        /// Where frame `i` is written, for messages.
        let place: (Int) -> String
        if path.lowercased().hasSuffix(".npy") {
            self = try F0Track(numPyFile: path)
            return
        } else {
            let table = try KoeError.wrapping { try NumberTable.read(from: path) }
            if let row = table.rows.first(where: { $0.values.count != 1 }) {
                throw .badInput(source: path, reason: "line \(row.line): expected one F0 value a line, found \(row.values.count)")
            }
            values = table.rows.map { $0.values[0] }
            place = { "line \(table.rows[$0].line)" }
        }
        if let problem = Self.firstProblem(in: values) {
            throw .badInput(source: path, reason: (problem.index.map { place($0) + ": " } ?? "") + problem.reason)
        }
        self = try KoeError.wrapping { try F0Track(values: values, name: path) }
    }

    /// Reads F0 from a 1-D float64 `.npy` file, one value an analysis frame, as `koe analyze` writes `f0.npy`.
    public init(numPyFile path: String) throws(KoeError) {
        let array = try KoeError.wrapping { try Npy.read(from: path) }
        guard array.isVector else {
            throw .badInput(source: path, reason: "expected a 1-D array of F0 values, found shape \(array.shapeText)")
        }
        if let problem = Self.firstProblem(in: array.values) {
            throw .badInput(source: path, reason: (problem.index.map { "frame \($0): " } ?? "") + problem.reason)
        }
        self = try KoeError.wrapping { try F0Track(values: array.values, name: path) }
    }
}
