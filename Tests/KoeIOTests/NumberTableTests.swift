import Testing
@testable import KoeIO
import TestSupport

@Suite struct NumberTableTests {
    private func table(_ text: String) throws -> NumberTable {
        try NumberTable(parsing: Array(text.utf8), path: "curve.txt")
    }

    @Test func readsCommasSemicolonsTabsAndSpaces() throws {
        let read = try table("0,1\n0.5; 1.25\n1\t1.5\r\n  2   2e0  \n")
        #expect(read.rows.map(\.values) == [[0, 1], [0.5, 1.25], [1, 1.5], [2, 2]])
        #expect(read.rows.map(\.line) == [1, 2, 3, 4])
    }

    @Test func skipsCommentsBlankLinesAndAHeader() throws {
        let read = try table("# made by hand\ntime,ratio\n\n0 1 # start\n\n3 1.5\n")
        #expect(read.rows.map(\.values) == [[0, 1], [3, 1.5]])
        #expect(read.rows.map(\.line) == [4, 6])
        #expect(try table("").rows.isEmpty)
        #expect(try table("# nothing\n\n").rows.isEmpty)
    }

    @Test func namesTheLineOfAWordThatIsNotANumber() {
        #expect(throws: IOError.invalidText(path: "curve.txt", line: 3, reason: "'1.5x' is not a number")) {
            try table("0 1\n1 1.2\n2 1.5x\n")
        }
        #expect(throws: IOError.invalidText(path: "curve.txt", line: 2, reason: "'one' is not a number")) {
            try table("0 1\n1 one\n")
        }
        #expect(throws: IOError.invalidText(path: "curve.txt", line: 3, reason: "'time' is not a number")) {
            try table("0 1\n\ntime ratio\n")
        }
    }

    @Test func refusesBinaryFiles() {
        #expect(throws: IOError.invalidText(path: "curve.txt", line: nil, reason: "not a text file")) {
            try NumberTable(parsing: [0x93, 0x4E, 0x55, 0, 1, 0xFF], path: "curve.txt")
        }
    }

    @Test func fullScaleIsTheTopCodeOfIntegersAndOneForFloats() throws {
        #expect(try RawPCMFormat(sampleRate: 8000, channels: 1, encoding: .signed, bits: 16).fullScale == 32767.0 / 32768)
        #expect(try RawPCMFormat(sampleRate: 8000, channels: 1, encoding: .unsigned, bits: 8).fullScale == 127.0 / 128)
        #expect(try RawPCMFormat(sampleRate: 8000, channels: 1, encoding: .float, bits: 32).fullScale == 1)
        let folder = TemporaryFolder()
        for (encoding, expected) in [(SampleEncoding.pcm24, 8_388_607.0 / 8_388_608), (.float64, 1)] {
            #expect(try AudioFormat.forWriting(folder.file("x.wav"), sampleRate: 8000, channels: 1, encoding: encoding).fullScale == expected)
        }
    }
}
