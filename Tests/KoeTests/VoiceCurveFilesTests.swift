import Foundation
import Koe
@testable import KoeIO
import Testing
import TestSupport

@Suite struct VoiceCurveFilesTests {
    let folder = TemporaryFolder()

    private func write(_ text: String, to name: String) -> String {
        folder.write(Array(text.utf8), to: name)
    }

    @Test func readsACurveFromCSVOrWhitespace() throws {
        let csv = try PitchCurve(contentsOf: write("time,ratio\n0,1.0\n2.5,1.5\n", to: "glide.csv"))
        let spaced = try PitchCurve(contentsOf: write("# glide\n0   1.0\n2.5\t1.5\n", to: "glide.txt"))
        #expect(csv == spaced)
        #expect(csv.points == [.init(time: 0, ratio: 1), .init(time: 2.5, ratio: 1.5)])
    }

    static let badCurves: [(String, String)] = [
        ("0 1\n1 1.2\n0.5 1.3\n", "line 3: time 0.5 s does not come after the previous point's 1.0 s"),
        ("0 1\n\n1 -1.2\n", "line 3: ratio -1.2 is not positive"),
        ("0 1\n1 nan\n", "line 2: ratio nan is not a finite number"),
        ("0 1\n1 1.2 7\n", "line 2: expected a time and a ratio, found 3 values"),
        ("0 1\n1 x\n", "line 2: 'x' is not a number"),
        ("", "a pitch curve needs at least one point"),
        ("# only a comment\n", "a pitch curve needs at least one point"),
    ]

    @Test(arguments: badCurves)
    func namesTheLineOfABadCurve(text: String, message: String) {
        let path = write(text, to: "curve.txt")
        #expect(throws: KoeError.self) { try PitchCurve(contentsOf: path) }
        do {
            _ = try PitchCurve(contentsOf: path)
        } catch {
            #expect(error.description == "\(path): \(message)")
        }
    }

    @Test func readsF0FromNpyOrText() throws {
        let npy = folder.file("f0.npy")
        try Npy(vector: [0, 200, 201.5, 0]).write(to: npy)
        #expect(try F0Track(contentsOf: npy).values == [0, 200, 201.5, 0])
        #expect(try F0Track(contentsOf: npy).name == npy)
        #expect(try F0Track(contentsOf: write("0\n200\n201.5\n0\n", to: "f0.txt")).values == [0, 200, 201.5, 0])
    }

    @Test func namesWhatIsWrongWithAnF0File() throws {
        let matrix = folder.file("sp.npy")
        try Npy(rows: 2, columns: 2, values: [1, 2, 3, 4]).write(to: matrix)
        let negative = folder.file("negative.npy")
        try Npy(vector: [100, -5]).write(to: negative)
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
        header += String(repeating: " ", count: (64 - (10 + header.utf8.count + 1) % 64) % 64) + "\n"
        let float32 = folder.write(
            [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(header.utf8.count), 0] + Array(header.utf8) + [0, 0, 0, 0],
            to: "f32.npy")
        let cases: [(String, String)] = [
            (matrix, "expected a 1-D array of F0 values, found shape (2, 2)"),
            (negative, "frame 1: -5.0 is not an F0 in Hz (0 or more)"),
            (float32, "'<f4' values"),
            (write("100\n110 120\n", to: "two.txt"), "line 2: expected one F0 value a line, found 2"),
            (write("100\n\n-1\n", to: "neg.txt"), "line 3: -1.0 is not an F0 in Hz (0 or more)"),
            (write("", to: "empty.txt"), "holds no F0 values"),
        ]
        for (path, message) in cases {
            do {
                _ = try F0Track(contentsOf: path)
                Issue.record("\(path) was read")
            } catch {
                #expect(error.description.hasPrefix(path + ": "), "\(error)")
                #expect(error.description.contains(message), "\(error)")
            }
        }
    }
}
