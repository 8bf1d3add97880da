/// A dense row-major matrix of doubles: one row a frame, one column a frequency bin.
/// Stored flat so a whole spectrogram is one contiguous allocation.
public struct Matrix: Equatable, Sendable {
    public private(set) var rows: Int
    public private(set) var columns: Int
    /// The values, row after row; always `rows * columns` of them.
    public internal(set) var storage: [Double]

    /// An empty matrix: no rows, no columns.
    public init() {
        rows = 0
        columns = 0
        storage = []
    }

    /// Throws for a negative size or one larger than this machine's memory.
    public init(rows: Int, columns: Int, repeating value: Double = 0) throws(WorldError) {
        let count = try Self.valueCount(rows: rows, columns: columns)
        try SignalRequirements.requireRoom(rows: rows, columns: columns, for: "a matrix")
        self.rows = rows
        self.columns = columns
        storage = Array(repeating: value, count: count)
    }

    /// A `rows` × `columns` matrix of `storage`, which holds its values row after row.
    public init(rows: Int, columns: Int, storage: [Double]) throws(WorldError) {
        guard try Self.valueCount(rows: rows, columns: columns) == storage.count else {
            throw .invalidParameters("a \(rows) x \(columns) matrix needs \(rows * columns) values, not \(storage.count)")
        }
        self.rows = rows
        self.columns = columns
        self.storage = storage
    }

    /// `rows * columns`, when both are counts and their product fits in memory's address range.
    private static func valueCount(rows: Int, columns: Int) throws(WorldError) -> Int {
        guard rows >= 0, columns >= 0 else {
            throw .invalidParameters("a matrix cannot have \(rows) rows and \(columns) columns")
        }
        let (count, overflow) = rows.multipliedReportingOverflow(by: columns)
        guard !overflow, count <= Int.max / MemoryLayout<Double>.stride else {
            throw .invalidParameters("a matrix of \(rows) x \(columns) values is too large to hold")
        }
        return count
    }

    /// Makes this a `rows` × `columns` matrix of `value`, keeping the storage's capacity, so a matrix refilled
    /// call after call allocates only when it grows. Callers pass counts of frames and bins.
    mutating func reshape(rows: Int, columns: Int, repeating value: Double = 0) {
        assert(rows >= 0 && columns >= 0, "matrix dimensions must not be negative")
        self.rows = rows
        self.columns = columns
        let count = rows * columns
        // Appending a `repeatElement` fills element by element; a fresh array and `update(repeating:)` fill
        // at memory speed.
        guard count <= storage.capacity else {
            storage = [Double](repeating: value, count: count)
            return
        }
        storage.removeLast(max(0, storage.count - count))
        storage.withUnsafeMutableBufferPointer { $0.update(repeating: value) }
        storage.append(contentsOf: repeatElement(value, count: count - storage.count))
    }

    /// A `rows` × `columns` matrix of zeros, for sizes the vocoder computed itself.
    static func zeros(rows: Int, columns: Int) -> Matrix {
        var matrix = Matrix()
        matrix.reshape(rows: rows, columns: columns)
        return matrix
    }

    /// The value at `row`, `column`; both must be in range, as an array's index must.
    public subscript(row: Int, column: Int) -> Double {
        get { storage[row * columns + column] }
        set { storage[row * columns + column] = newValue }
    }

    /// A copy of one row; `index` must be in range, as an array's index must.
    public func row(_ index: Int) -> [Double] {
        Array(storage[(index * columns)..<((index + 1) * columns)])
    }

    /// Read one row in place, without copying.
    package func withRow<Result>(_ index: Int, _ body: (UnsafeBufferPointer<Double>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBufferPointer { buffer in
            try body(UnsafeBufferPointer(rebasing: buffer[(index * columns)..<((index + 1) * columns)]))
        }
    }
}
