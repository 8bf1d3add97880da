import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// `koe plot` as a user runs it: the files it writes are read back as SVG (an XML parse) and PNG (every chunk
/// and its CRC).
@Suite struct PlotTests {
    let koe = CommandRunner()

    /// The root element's attributes and the count of each element name; nil when the XML does not parse.
    private func svgOutline(_ name: String) -> (root: [String: String], counts: [String: Int])? {
        final class Outline: NSObject, XMLParserDelegate {
            var root: [String: String]?
            var counts: [String: Int] = [:]
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                        attributes: [String: String] = [:]) {
                if root == nil { root = attributes }
                counts[name, default: 0] += 1
            }
        }
        let outline = Outline()
        let parser = XMLParser(data: Data(koe.bytes(of: name)))
        parser.delegate = outline
        guard parser.parse(), let root = outline.root else { return nil }
        return (root, outline.counts)
    }

    /// A PNG's chunks, each checked against its CRC-32; nil when the bytes are not a well-formed PNG.
    private func pngChunks(_ name: String) -> [(type: String, data: [UInt8])]? {
        let bytes = koe.bytes(of: name)
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        func integer(at offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        var chunks: [(String, [UInt8])] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = integer(at: offset)
            guard offset + 12 + length <= bytes.count else { return nil }
            let typeAndData = Array(bytes[offset + 4..<offset + 8 + length])
            guard Self.crc32(typeAndData) == UInt32(integer(at: offset + 8 + length)) else { return nil }
            chunks.append((String(decoding: typeAndData.prefix(4), as: UTF8.self), Array(typeAndData.dropFirst(4))))
            offset += 12 + length
        }
        guard offset == bytes.count, chunks.first?.0 == "IHDR", chunks.last?.0 == "IEND" else { return nil }
        return chunks
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private func writeTwoVoices() throws {
        try koe.writeVowel(to: "before.wav", duration: 1)
        try koe.writeAudio(Signals.vowel(f0: 200, sampleRate: 16000, duration: 1), to: "after.wav")
    }

    @Test(arguments: [["before.wav"], ["before.wav", "after.wav"]])
    func writesAValidSVG(inputs: [String]) throws {
        try writeTwoVoices()
        try plot(inputs + ["-o", "figure.svg"])
        let outline = try #require(svgOutline("figure.svg"), "the SVG does not parse as XML")
        #expect(outline.root["width"] == "960")
        #expect(outline.counts["image"] == inputs.count + 1, "a spectrogram a panel, and the colour bar")
        #expect((outline.counts["polyline"] ?? 0) >= 2 * inputs.count * inputs.count, "every F0 track in every panel")
        #expect((outline.counts["text"] ?? 0) > 20)
    }

    @Test(arguments: [["before.wav"], ["before.wav", "after.wav"]])
    func writesAValidPNG(inputs: [String]) throws {
        try writeTwoVoices()
        try plot(inputs + ["-o", "figure.png", "--f0-method", "harvest", "--range", "0.2:0.8"])
        let chunks = try #require(pngChunks("figure.png"), "not a well-formed PNG")
        let header = chunks[0].data
        let width = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
        let height = header[4..<8].reduce(0) { $0 << 8 | Int($1) }
        #expect(width == 1920)
        #expect(height > (inputs.count == 1 ? 600 : 1300) && height < (inputs.count == 1 ? 800 : 1600))
        #expect(chunks.contains { $0.type == "IDAT" })
    }

    private func plot(_ arguments: [String]) throws {
        let result = try koe.run(["plot"] + arguments)
        try #require(result.status == 0, "koe plot \(arguments.joined(separator: " ")): \(result.standardError)")
        #expect(result.standardError.isEmpty)
    }

    static let badArguments: [([String], String)] = [
        (["before.wav", "-o", "figure.jpg"], "a plot is written as .svg or .png"),
        (["before.wav", "-o", "figure.svg", "--range", "2:1"], "--range 2:1"),
        (["before.wav", "-o", "figure.svg", "--range", "5:6"], "the time range must start"),
        (["absent.wav", "-o", "figure.svg"], "absent.wav: no such file"),
        (["before.wav", "-o", "absent/figure.png"], "absent"),
        (["before.wav", "-o", "figure.svg", "--f0-method", "crepe"], "crepe"),
    ]

    @Test(arguments: badArguments)
    func badInputIsOneLineAndNothingWritten(arguments: [String], message: String) throws {
        try writeTwoVoices()
        try koe.expectFailure(["plot"] + arguments, mentioning: message)
    }
}
