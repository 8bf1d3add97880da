/// A dense row-major matrix of doubles: one row a frame, one column a frequency bin.
/// Stored flat so a whole spectrogram is one contiguous allocation.
public struct Matrix: Equatable, Sendable {
    public private(set) var rows: Int
    public private(set) var columns: Int
    public var storage: [Double]

    public init(rows: Int, columns: Int, repeating value: Double = 0) {
        precondition(rows >= 0 && columns >= 0, "matrix dimensions must not be negative")
        self.rows = rows
        self.columns = columns
        storage = Array(repeating: value, count: rows * columns)
    }

    public init(rows: Int, columns: Int, storage: [Double]) {
        precondition(storage.count == rows * columns, "storage does not match \(rows) x \(columns)")
        self.rows = rows
        self.columns = columns
        self.storage = storage
    }

    /// Makes this a `rows` × `columns` matrix of `value`, keeping the storage's capacity, so a matrix refilled
    /// call after call allocates only when it grows.
    public mutating func reshape(rows: Int, columns: Int, repeating value: Double = 0) {
        precondition(rows >= 0 && columns >= 0, "matrix dimensions must not be negative")
        self.rows = rows
        self.columns = columns
        storage.removeAll(keepingCapacity: true)
        storage.append(contentsOf: repeatElement(value, count: rows * columns))
    }

    public subscript(row: Int, column: Int) -> Double {
        get { storage[row * columns + column] }
        set { storage[row * columns + column] = newValue }
    }

    /// A copy of one row.
    public func row(_ index: Int) -> [Double] {
        Array(storage[(index * columns)..<((index + 1) * columns)])
    }

    /// Read one row in place, without copying.
    public func withRow<Result>(_ index: Int, _ body: (UnsafeBufferPointer<Double>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBufferPointer { buffer in
            try body(UnsafeBufferPointer(rebasing: buffer[(index * columns)..<((index + 1) * columns)]))
        }
    }

    /// Write one row in place, without copying.
    public mutating func withMutableRow<Result>(
        _ index: Int, _ body: (UnsafeMutableBufferPointer<Double>) throws -> Result
    ) rethrows -> Result {
        let columns = columns
        return try storage.withUnsafeMutableBufferPointer { buffer in
            try body(UnsafeMutableBufferPointer(rebasing: buffer[(index * columns)..<((index + 1) * columns)]))
        }
    }
}
