import CRsvg
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport
@testable import KoePlot

@Suite struct FigureTests {
    private let speechLike = Recording(
        name: "a & b <vowels>.wav",
        samples: Signals.vowel(f0: 140, sampleRate: 16000, duration: 0.6) + Signals.whiteNoise(count: 3200, amplitude: 0.05)
            + Signals.vowel(f0: 190, sampleRate: 16000, duration: 0.5),
        sampleRate: 16000)

    /// The elements of an SVG document by name, with their attributes; the parse fails on malformed XML.
    private final class Elements: NSObject, XMLParserDelegate {
        var found: [(name: String, attributes: [String: String])] = []
        var texts: [String] = []
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            found.append((name, attributes))
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "text" { texts.append(text) }
        }
    }

    private func parse(_ svg: String) throws -> Elements {
        let elements = Elements()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = elements
        try #require(parser.parse(), "\(parser.parserError.map(String.init(describing:)) ?? "")")
        return elements
    }

    @Test func oneRecordingIsOnePanelWithItsTrack() throws {
        let figure = try Figure([speechLike])
        let elements = try parse(figure.svg)
        #expect(elements.found.first?.name == "svg")
        #expect(elements.found.first?.attributes["width"] == "960")
        #expect(elements.found.filter { $0.name == "image" }.count == 2, "the spectrogram and the colour bar")
        #expect(elements.found.filter { $0.name == "polyline" }.count >= 4, "two voiced runs, each with its halo")
        #expect(elements.texts.contains("Time (s)") && elements.texts.contains("Frequency (Hz)"))
        #expect(elements.texts.contains("a & b <vowels>.wav"), "the name, escaped in the SVG, reads back")
        #expect(elements.texts.contains("1k") && elements.texts.contains("0.4"), "1.3 s in steps of 0.2 s")
    }

    @Test func twoRecordingsAreStackedEachWithTheOthersTrack() throws {
        var higher = speechLike
        higher.name = "higher.wav"
        higher.samples = Signals.vowel(f0: 210, sampleRate: 16000, duration: 1.3)
        let one = try Figure([speechLike])
        let two = try Figure([speechLike, higher])
        #expect(two.height > 1.8 * one.height)
        let elements = try parse(two.svg)
        #expect(elements.found.filter { $0.name == "image" }.count == 3)
        let dashed = elements.found.filter { $0.name == "polyline" && $0.attributes["stroke-dasharray"] != nil }
        #expect(!dashed.isEmpty)
        #expect(elements.texts.contains("F0 higher.wav"))
    }

    @Test func thePNGIsTheSVGRasterisedAtTwiceItsSize() throws {
        let figure = try Figure([speechLike])
        let png = try figure.png()
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let folder = TemporaryFolder()
        let path = folder.write(png, to: "figure.png")
        let surface = try #require(cairo_image_surface_create_from_png(path))
        defer { cairo_surface_destroy(surface) }
        #expect(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, "libpng reads it back")
        #expect(cairo_image_surface_get_width(surface) == 1920)
        #expect(Double(cairo_image_surface_get_height(surface)) == (2 * figure.height).rounded())
    }

    @Test func aTimeRangeNarrowsTheAxis() throws {
        var options = PlotOptions()
        options.timeRange = 0.5...0.7
        let elements = try parse(try Figure([speechLike], options: options).svg)
        #expect(elements.texts.contains("0.50") && elements.texts.contains("0.70"))
        #expect(!elements.texts.contains("1.0"))
    }

    @Test func refusesWhatItCannotDraw() {
        #expect(throws: PlotError.self) { try Figure([]) }
        #expect(throws: PlotError.self) { try Figure([speechLike, speechLike, speechLike]) }
        #expect(throws: PlotError.self) { try Figure([Recording(name: "tiny.wav", samples: [0.1, 0.2], sampleRate: 16000)]) }
        var options = PlotOptions()
        options.timeRange = 5...6
        #expect(throws: PlotError.self) { try Figure([speechLike], options: options) }
    }
}
