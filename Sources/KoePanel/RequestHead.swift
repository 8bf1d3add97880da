import FlyingFox
import Foundation

/// An HTTP/1.1 request head read strictly and within bounds: the request line (`METHOD /target HTTP/1.x`), the
/// header lines, the empty line, each ended by CRLF, at most `RequestHead.largest` bytes in all. FlyingFox's own
/// reader accepts any length and closes a connection it cannot read without an answer; the panel answers every
/// request that breaks a rule with a 4xx, as soon as the bytes received show it (`scan`).
struct RequestHead: Sendable {
    /// The longest head taken: a browser's requests to the panel are well under 2 KB.
    static let largest = 8192

    let method: String
    /// The origin-form target, `/path?query`.
    let target: String
    package let version: String
    /// Header names lowercased, with their values, in order.
    let headers: [(name: String, value: String)]

    /// What the bytes received so far are.
    enum Scan: Equatable, Sendable {
        /// A valid start of a head; more bytes are needed.
        case incomplete
        /// A whole head, `length` bytes long with its empty line.
        case complete(length: Int)
        /// No head can start so: the reason, and the status to answer with.
        case refused(status: Int, reason: String)
    }

    /// Reads `bytes` as far as they go: each line whole as it ends, the line under way as a start.
    static func scan(_ bytes: some Collection<UInt8>) -> Scan {
        var line: [UInt8] = []
        var lineNumber = 0
        var afterReturn = false
        var offset = 0
        for byte in bytes {
            offset += 1
            guard offset <= largest else { return .refused(status: 431, reason: "the request head is longer than \(largest) bytes") }
            if afterReturn {
                guard byte == lf else { return .refused(status: 400, reason: "a carriage return not followed by a line feed") }
                afterReturn = false
                if line.isEmpty {
                    guard lineNumber > 0 else { return .refused(status: 400, reason: "an empty request line") }
                    return .complete(length: offset)
                }
                if let problem = problem(ofLine: lineNumber, line, partial: false) { return .refused(status: 400, reason: problem) }
                line.removeAll(keepingCapacity: true)
                lineNumber += 1
            } else if byte == cr {
                afterReturn = true
            } else if byte == lf {
                return .refused(status: 400, reason: "a line ended without a carriage return")
            } else {
                line.append(byte)
            }
        }
        if let problem = problem(ofLine: lineNumber, line, partial: true) { return .refused(status: 400, reason: problem) }
        return .incomplete
    }

    private static func problem(ofLine number: Int, _ line: [UInt8], partial: Bool) -> String? {
        number == 0 ? requestLineProblem(line, partial: partial) : headerLineProblem(line, partial: partial)
    }

    /// Parses a complete head (`scan` gave `.complete(length:)` for these bytes).
    init(parsing bytes: some Collection<UInt8>) throws(HeadError) {
        let lines = Array(bytes).split(separator: lf, omittingEmptySubsequences: false).map { $0.dropLast() }
        guard let requestLine = lines.first, Self.requestLineProblem(Array(requestLine), partial: false) == nil else {
            throw HeadError(status: 400, reason: "a malformed request line")
        }
        let words = requestLine.split(separator: space, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        method = words[0]
        target = words[1]
        version = words[2]
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            if let problem = Self.headerLineProblem(Array(line), partial: false) { throw HeadError(status: 400, reason: problem) }
            let colon = line.firstIndex(of: colon)!
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = String(decoding: line[line.index(after: colon)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
        }
        self.headers = headers
        for name in ["host", "origin", "content-length", "transfer-encoding"] where headers.filter({ $0.name == name }).count > 1 {
            throw HeadError(status: 400, reason: "more than one \(name) header")
        }
    }

    /// The value of the header `name` (lowercase), if given.
    func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// The body's length the head announces: 0 without one; refused when chunked (the panel wants the length
    /// first) or not a number.
    func bodyLength() throws(HeadError) -> Int {
        if header("transfer-encoding") != nil {
            throw HeadError(status: 411, reason: "a body must come with its Content-Length")
        }
        guard let text = header("content-length") else { return 0 }
        guard !text.isEmpty, text.utf8.allSatisfy({ (zero...nine).contains($0) }), let length = Int(text) else {
            throw HeadError(status: 400, reason: "a Content-Length that is not a number")
        }
        return length
    }

    /// The head as FlyingFox's request (its path and query parsed), with `body`.
    package func request(body: Data) -> HTTPRequest {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.addValue(value, for: HTTPHeader(name)) }
        return HTTPRequest(
            method: HTTPMethod(method), version: HTTPVersion(version),
            target: HTTPRequest.Target(path: String(parts[0]), query: parts.count > 1 ? String(parts[1]) : ""),
            headers: fields, body: HTTPBodySequence(data: body))
    }

    /// `METHOD SP /target SP HTTP/1.x`: a token, a target in origin form of visible ASCII, version 1.0 or 1.1.
    /// With `partial`, whether `line` can still become one.
    private static func requestLineProblem(_ line: [UInt8], partial: Bool) -> String? {
        let words = line.split(separator: space, omittingEmptySubsequences: false)
        guard words.count <= 3 else { return "a request line of more than three words" }
        if !partial && words.count < 3 { return "a request line of fewer than three words" }
        let last = words.count - 1
        for (index, word) in words.enumerated() {
            let isWhole = !partial || index < last
            if isWhole && word.isEmpty { return "an empty word in the request line" }
            switch index {
            case 0:
                guard word.allSatisfy(isTokenCharacter) else { return "a method that is not a token" }
            case 1:
                guard word.allSatisfy({ (0x21...0x7E).contains($0) }), word.first.map({ $0 == slash }) ?? true else {
                    return "a target that is not a path"
                }
            default:
                let versions = ["HTTP/1.1", "HTTP/1.0"].map { Array($0.utf8) }
                let matches = versions.contains { isWhole ? Array(word) == $0 : $0.starts(with: word) }
                guard matches else { return "an HTTP version other than 1.0 or 1.1" }
            }
        }
        return nil
    }

    /// `name: value`: a token, a colon, then visible characters, spaces and tabs; no folding.
    private static func headerLineProblem(_ line: [UInt8], partial: Bool) -> String? {
        guard let colon = line.firstIndex(of: colon) else {
            guard line.allSatisfy(isTokenCharacter) else { return "a header name that is not a token" }
            return partial ? nil : "a header line without a colon"
        }
        guard colon > 0, line[..<colon].allSatisfy(isTokenCharacter) else { return "a header name that is not a token" }
        guard line[(colon + 1)...].allSatisfy({ $0 == space || $0 == tab || (0x21...0x7E).contains($0) || $0 >= 0x80 }) else {
            return "a control character in a header value"
        }
        return nil
    }

    /// RFC 9110's tchar.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}

/// A request that breaks a rule: the status to answer with and why.
struct HeadError: Error, Equatable, Sendable {
    package let status: Int
    let reason: String
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let colon = UInt8(ascii: ":")
private let slash = UInt8(ascii: "/")
private let zero = UInt8(ascii: "0")
private let nine = UInt8(ascii: "9")
