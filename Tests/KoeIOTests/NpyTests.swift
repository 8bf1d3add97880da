import Testing
@testable import KoeIO
import TestSupport

@Suite struct NpyTests {
    let folder = TemporaryFolder()

    private func header(of bytes: [UInt8]) -> String {
        let length = Int(bytes[8]) | Int(bytes[9]) << 8
        return String(decoding: bytes[10..<(10 + length)], as: UTF8.self)
    }

    /// A version 1.0 file around `header`, padded as numpy pads it, followed by `payload`.
    private func npyBytes(header: String, payload: [UInt8] = [], version: UInt8 = 1) -> [UInt8] {
        var text = header
        let lengthBytes = version == 1 ? 2 : 4
        let unpadded = 8 + lengthBytes + text.utf8.count + 1
        text += String(repeating: " ", count: (64 - unpadded % 64) % 64) + "\n"
        let length = text.utf8.count
        let lengthField = (0..<lengthBytes).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) }
        return [0x93] + Array("NUMPY".utf8) + [version, 0] + lengthField + Array(text.utf8) + payload
    }

    private func float64Bytes(_ values: [Double]) -> [UInt8] {
        values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
    }

    @Test func headerIsWhatNumpyWrites() {
        let vector = Npy(vector: [1, 2, 3]).encoded()
        #expect(header(of: vector).hasPrefix("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"))
        let matrix = Npy(rows: 2, columns: 3, values: [1, 2, 3, 4, 5, 6]).encoded()
        #expect(header(of: matrix).hasPrefix("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"))
        for bytes in [vector, matrix] {
            #expect(Array(bytes[0..<8]) == [0x93] + Array("NUMPY".utf8) + [1, 0])
            #expect((10 + header(of: bytes).utf8.count) % 64 == 0)
            #expect(header(of: bytes).hasSuffix("\n"))
        }
    }

    @Test func valuesFollowTheHeaderAsLittleEndianFloat64InRowOrder() {
        let bytes = Npy(rows: 2, columns: 2, values: [1.5, -2, .pi, 0]).encoded()
        #expect(Array(bytes.suffix(32)) == float64Bytes([1.5, -2, .pi, 0]))
    }

    @Test func fileRoundTripKeepsShapeAndValues() throws {
        let vector = Npy(vector: [0, 1e-300, -.greatestFiniteMagnitude, 440.25])
        let matrix = Npy(rows: 3, columns: 4, values: (0..<12).map { Double($0) / 7 })
        let empty = Npy(rows: 0, columns: 513, values: [])
        for (index, array) in [vector, matrix, empty].enumerated() {
            let path = folder.file("array\(index).npy")
            try array.write(to: path)
            #expect(try Npy.read(from: path) == array)
        }
    }

    @Test func readsVersionTwoAndPythonSpellings() throws {
        let bytes = npyBytes(header: "{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<f8\"}",
                             payload: float64Bytes([1, 2, 3, 4, 5, 6]), version: 2)
        let array = try Npy(decoding: bytes, path: "v2.npy")
        #expect(array.shape == [2, 3])
        #expect(array.values == [1, 2, 3, 4, 5, 6])
    }

    @Test func oneDimensionalFortranOrderIsTheSameArray() throws {
        let bytes = npyBytes(header: "{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", payload: float64Bytes([1, 2]))
        #expect(try Npy(decoding: bytes, path: "f.npy").values == [1, 2])
    }

    private static let signature: [UInt8] = [0x93] + Array("NUMPY".utf8)
    private static let malformedFiles: [(bytes: [UInt8], reason: String)] = [
        ([], "empty"),
        (Array("PK\u{3}\u{4} a zip file".utf8), "signature"),
        (signature + [9, 0, 10, 0], "version 9.0"),
        (signature + [1, 0, 200, 0] + Array("{'descr'".utf8), "cut short"),
    ]

    @Test(arguments: malformedFiles)
    func malformedFilesAreRejected(bytes: [UInt8], reason: String) {
        expectInvalid(bytes, mentioning: reason)
    }

    /// Headers of a file whose payload is four float64s: each wrong for it in one way, and what the error names.
    private static let wrongHeaders: [(header: String, reason: String)] = [
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", "'<f4'"),
        ("{'descr': '>f8', 'fortran_order': False, 'shape': (4,), }", "float64"),
        ("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 2), }", "3 dimensions"),
        ("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", "0 dimensions"),
        ("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", "Fortran"),
        ("{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }", "truncated"),
        ("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", "after"),
        ("{'descr': '<f8', 'shape': (4,), }", "fortran_order"),
        ("{'descr': '<f8', 'fortran_order': False, 'shape': (4,)", "dictionary"),
        ("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", "large"),
    ]

    @Test(arguments: wrongHeaders)
    func wrongContentIsRejectedWithItsReason(header: String, reason: String) {
        expectInvalid(npyBytes(header: header, payload: float64Bytes([1, 2, 3, 4])), mentioning: reason)
    }

    @Test func missingFileIsReported() {
        let path = folder.file("absent.npy")
        #expect(throws: IOError.fileNotFound(path: path)) { try Npy.read(from: path) }
    }

    private func expectInvalid(_ bytes: [UInt8], mentioning reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try Npy(decoding: bytes, path: "x.npy")
            Issue.record("accepted an invalid file; expected an error mentioning \(reason)", sourceLocation: sourceLocation)
        } catch let error as IOError {
            guard case .invalidNpy(path: "x.npy", let message) = error else {
                Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
                return
            }
            #expect(message.contains(reason), "\(message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }
}
