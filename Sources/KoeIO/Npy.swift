/// A 1-D or 2-D array of float64 values in NumPy's .npy format (C order, little-endian),
/// as `numpy.save` writes it and `numpy.load` reads it.
package struct Npy: Equatable, Sendable {
    /// Length of each dimension: `[count]` or `[rows, columns]`.
    package let shape: [Int]
    /// The values, row after row.
    package let values: [Double]

    private static let magic: [UInt8] = [0x93] + Array("NUMPY".utf8)
    /// numpy pads the header so the data starts on this boundary.
    private static let alignment = 64
    private static let float64Descriptors: Set<String> = ["<f8"]

    package init(vector values: [Double]) {
        shape = [values.count]
        self.values = values
    }

    package init(rows: Int, columns: Int, values: [Double]) {
        precondition(rows >= 0 && columns >= 0 && rows * columns == values.count, "values do not fill \(rows) x \(columns)")
        shape = [rows, columns]
        self.values = values
    }

    package var isVector: Bool { shape.count == 1 }
    /// The shape as numpy prints it: `(3,)` or `(2, 3)`.
    package var shapeText: String {
        shape.count == 1 ? "(\(shape[0]),)" : "(" + shape.map(String.init).joined(separator: ", ") + ")"
    }
    package var rows: Int { shape[0] }
    /// Values a row; 1 for a vector.
    package var columns: Int { shape.count == 2 ? shape[1] : 1 }

    /// The number of values a shape holds, or nil if more than memory could address as float64.
    private static func valueCount(_ shape: [Int]) -> Int? {
        var count = 1
        for length in shape {
            let (product, overflow) = count.multipliedReportingOverflow(by: length)
            guard !overflow, product <= Int.max / 8 else { return nil }
            count = product
        }
        return count
    }

    // MARK: Files

    package static func read(from path: String) throws -> Npy {
        try Npy(decoding: Files.read(path), path: path)
    }

    package func write(to path: String) throws {
        try Files.write(encoded(), to: path)
    }

    // MARK: Encoding

    /// The file's bytes: version 1.0 header, then the values as little-endian float64.
    func encoded() -> [UInt8] {
        var header = "{'descr': '<f8', 'fortran_order': False, 'shape': \(shapeText), }"
        let unpadded = Self.magic.count + 2 + 2 + header.utf8.count + 1
        header += String(repeating: " ", count: (Self.alignment - unpadded % Self.alignment) % Self.alignment) + "\n"
        var bytes = Self.magic + [1, 0]
        let headerLength = UInt16(header.utf8.count)
        bytes += [UInt8(headerLength & 0xFF), UInt8(headerLength >> 8)]
        bytes += Array(header.utf8)
        bytes.reserveCapacity(bytes.count + values.count * 8)
        for value in values {
            withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 }
        }
        return bytes
    }

    /// Reads the bytes of a .npy file (versions 1.0 to 3.0); `path` only names the file in errors.
    init(decoding bytes: [UInt8], path: String) throws {
        func invalid(_ reason: String) -> IOError { IOError.invalidNpy(path: path, reason: reason) }
        guard bytes.count >= Self.magic.count + 2, Array(bytes[..<Self.magic.count]) == Self.magic else {
            throw invalid(bytes.isEmpty ? "the file is empty" : "it does not start with the .npy signature")
        }
        let (major, minor) = (bytes[6], bytes[7])
        let lengthBytes: Int
        switch major {
        case 1: lengthBytes = 2
        case 2, 3: lengthBytes = 4
        default: throw invalid("unsupported format version \(major).\(minor)")
        }
        let lengthStart = 8
        guard bytes.count >= lengthStart + lengthBytes else { throw invalid("the header is cut short") }
        let headerLength = bytes[lengthStart..<(lengthStart + lengthBytes)].reversed().reduce(0) { $0 << 8 | Int($1) }
        let headerStart = lengthStart + lengthBytes
        let dataStart = headerStart + headerLength
        guard bytes.count >= dataStart else { throw invalid("the header is cut short") }
        let header = try NpyHeader(parsing: String(decoding: bytes[headerStart..<dataStart], as: UTF8.self), invalid: invalid)

        guard Self.float64Descriptors.contains(header.descriptor) else {
            throw invalid("it holds '\(header.descriptor)' values; koe reads float64 ('<f8') only")
        }
        guard header.shape.count == 1 || header.shape.count == 2 else {
            throw invalid("it has \(header.shape.count) dimensions; koe reads 1-D and 2-D arrays")
        }
        if header.fortranOrder && header.shape.count == 2 && header.shape.allSatisfy({ $0 > 1 }) {
            throw invalid("it is stored in Fortran order; save a C-ordered array (numpy.ascontiguousarray)")
        }
        guard let count = Self.valueCount(header.shape) else { throw invalid("its shape is impossibly large") }
        let dataBytes = bytes.count - dataStart
        guard dataBytes == count * 8 else {
            throw invalid(dataBytes < count * 8
                ? "it is truncated: the header announces \(count) values but the file holds \(dataBytes / 8)"
                : "it has \(dataBytes - count * 8) bytes after the \(count) values its header announces")
        }
        shape = header.shape
        values = bytes.withUnsafeBytes { raw in
            (0..<count).map { index in
                Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: dataStart + index * 8, as: UInt64.self)))
            }
        }
    }
}

/// The Python dictionary literal at the head of a .npy file, such as
/// `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`.
private struct NpyHeader {
    var descriptor = ""
    var fortranOrder = false
    var shape: [Int] = []

    private enum Value {
        case text(String)
        case flag(Bool)
        case integers([Int])
    }

    init(parsing text: String, invalid: (String) -> IOError) throws {
        var scanner = Scanner(characters: Array(text))
        guard let entries = scanner.dictionary() else { throw invalid("its header is not a readable dictionary") }
        guard case .text(let descriptor)? = entries["descr"] else { throw invalid("its header gives no 'descr'") }
        guard case .flag(let fortranOrder)? = entries["fortran_order"] else {
            throw invalid("its header gives no 'fortran_order'")
        }
        guard case .integers(let shape)? = entries["shape"], shape.allSatisfy({ $0 >= 0 }) else {
            throw invalid("its header gives no valid 'shape'")
        }
        self.descriptor = descriptor
        self.fortranOrder = fortranOrder
        self.shape = shape
    }

    /// Just enough of Python literal syntax for a .npy header: strings, True/False and tuples of integers.
    private struct Scanner {
        let characters: [Character]
        var position = 0

        mutating func dictionary() -> [String: Value]? {
            guard take("{") else { return nil }
            var entries: [String: Value] = [:]
            while !take("}") {
                guard case .text(let key)? = value(), take(":"), let value = value() else { return nil }
                entries[key] = value
                guard take(",") || peek("}") else { return nil }
            }
            return entries
        }

        private mutating func value() -> Value? {
            skipSpaces()
            guard position < characters.count else { return nil }
            switch characters[position] {
            case "'", "\"": return quoted().map(Value.text)
            case "(": return tuple().map(Value.integers)
            default:
                if word("True") { return .flag(true) }
                if word("False") { return .flag(false) }
                return nil
            }
        }

        private mutating func quoted() -> String? {
            let quote = characters[position]
            position += 1
            guard let end = characters[position...].firstIndex(of: quote) else { return nil }
            defer { position = end + 1 }
            return String(characters[position..<end])
        }

        private mutating func tuple() -> [Int]? {
            position += 1
            var integers: [Int] = []
            while !take(")") {
                skipSpaces()
                let digits = characters[position...].prefix(while: \.isNumber)
                guard let integer = Int(String(digits)) else { return nil }
                position += digits.count
                integers.append(integer)
                guard take(",") || peek(")") else { return nil }
            }
            return integers
        }

        private mutating func word(_ word: String) -> Bool {
            let letters = Array(word)
            guard characters[position...].starts(with: letters) else { return false }
            position += letters.count
            return true
        }

        private mutating func take(_ character: Character) -> Bool {
            guard peek(character) else { return false }
            position += 1
            return true
        }

        private mutating func peek(_ character: Character) -> Bool {
            skipSpaces()
            return position < characters.count && characters[position] == character
        }

        private mutating func skipSpaces() {
            while position < characters.count && characters[position].isWhitespace { position += 1 }
        }
    }
}
