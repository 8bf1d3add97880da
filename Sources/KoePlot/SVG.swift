import Foundation

/// SVG text built element by element; numbers with at most two decimals, so the text is short and the same
/// from run to run.
struct SVG {
    private(set) var body = ""

    static func number(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.2f", rounded)
            .replacingOccurrences(of: #"0$"#, with: "", options: .regularExpression)
    }

    /// Text content and attribute values with XML's five special characters escaped.
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    mutating func raw(_ element: String) {
        body += element + "\n"
    }

    mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String = "#222", width: Double = 1) {
        raw("<line x1=\"\(Self.number(x1))\" y1=\"\(Self.number(y1))\" x2=\"\(Self.number(x2))\" y2=\"\(Self.number(y2))\" "
            + "stroke=\"\(stroke)\" stroke-width=\"\(Self.number(width))\"/>")
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String = "none", stroke: String? = nil) {
        let outline = stroke.map { " stroke=\"\($0)\" stroke-width=\"1\"" } ?? ""
        raw("<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(width))\" "
            + "height=\"\(Self.number(height))\" fill=\"\(fill)\"\(outline)/>")
    }

    enum Anchor: String {
        case start, middle, end
    }

    /// Text whose baseline starts, centres or ends at (x, y); `rotated` turns it a quarter to read upwards.
    mutating func text(
        _ content: String, x: Double, y: Double, size: Double = 12, anchor: Anchor = .start, fill: String = "#222",
        weight: String? = nil, rotated: Bool = false
    ) {
        let turn = rotated ? " transform=\"rotate(-90 \(Self.number(x)) \(Self.number(y)))\"" : ""
        let bold = weight.map { " font-weight=\"\($0)\"" } ?? ""
        raw("<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(Self.number(size))\" "
            + "text-anchor=\"\(anchor.rawValue)\" fill=\"\(fill)\"\(bold)\(turn)>\(Self.escaped(content))</text>")
    }

    /// A line through `points`, drawn twice: a dark halo, then the colour, so it reads on any background.
    mutating func haloedPolyline(_ points: [(Double, Double)], color: String, dashed: Bool) {
        let coordinates = points.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " ")
        let dashes = dashed ? " stroke-dasharray=\"6 4\"" : ""
        let shape = " fill=\"none\" stroke-linejoin=\"round\" stroke-linecap=\"round\""
        raw("<polyline points=\"\(coordinates)\"\(shape) stroke=\"#000\" stroke-opacity=\"0.6\" stroke-width=\"4.5\"\(dashes)/>")
        raw("<polyline points=\"\(coordinates)\"\(shape) stroke=\"\(color)\" stroke-width=\"2\"\(dashes)/>")
    }

    /// A raster image stretched over the rectangle, as a PNG data URL.
    mutating func image(png: [UInt8], x: Double, y: Double, width: Double, height: Double) {
        raw("<image x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(width))\" "
            + "height=\"\(Self.number(height))\" preserveAspectRatio=\"none\" "
            + "xlink:href=\"data:image/png;base64,\(Data(png).base64EncodedString())\"/>")
    }

    /// The whole document, `width` x `height` pixels on white.
    func document(width: Double, height: Double) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" \
        width="\(Self.number(width))" height="\(Self.number(height))" viewBox="0 0 \(Self.number(width)) \(Self.number(height))" \
        font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
        <rect width="100%" height="100%" fill="#fff"/>
        \(body)</svg>

        """
    }
}
