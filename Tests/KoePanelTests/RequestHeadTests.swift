import Foundation
@testable import KoePanel
import Testing

/// The panel's reading of a request head: whole, refused as soon as the bytes show a broken rule, or waiting.
@Suite struct RequestHeadTests {
    let good = "GET /api/state?token=abc HTTP/1.1\r\nHost: 127.0.0.1:8765\r\nOrigin: http://127.0.0.1:8765\r\n\r\n"

    @Test func aWholeHeadIsReadWithItsLength() throws {
        let bytes = Array((good + "next").utf8)
        #expect(RequestHead.scan(bytes) == .complete(length: good.utf8.count))
        let head = try RequestHead(parsing: bytes[..<good.utf8.count])
        #expect(head.method == "GET" && head.target == "/api/state?token=abc" && head.version == "HTTP/1.1")
        #expect(head.header("host") == "127.0.0.1:8765" && head.header("origin") == "http://127.0.0.1:8765")
        let request = head.request(body: Data())
        #expect(request.path == "/api/state" && request.query["token"] == "abc")
        #expect(try head.bodyLength() == 0)
    }

    /// Every start of a good head waits for more.
    @Test func everyStartOfAGoodHeadWaits() {
        let bytes = Array(good.utf8)
        for end in 0..<bytes.count {
            #expect(RequestHead.scan(bytes[..<end]) == .incomplete, "\(String(decoding: bytes[..<end], as: UTF8.self).debugDescription)")
        }
    }

    @Test(arguments: [
        ("G@T / HTTP/1.1\r\n", 400), ("GET http://a/ HTTP/1.1\r\n", 400), ("GET / HTTP/2.0\r\n", 400),
        ("GET / HTTP/1.1\n", 400), ("GET / HTTP/1.1\r\r\n", 400), ("\r\n", 400), ("GET  / HTTP/1.1\r\n", 400),
        ("GET / HTTP/1.1 extra\r\n", 400), ("GET / HTTP/1.1\r\nHost 127.0.0.1\r\n", 400),
        ("GET / HTTP/1.1\r\nHo st: a\r\n", 400), ("GET / HTTP/1.1\r\nX: a\u{0}b\r\n", 400),
        ("GET / HTTP/1.1\r\n folded\r\n", 400), ("\u{16}\u{3}\u{1}", 400),
        ("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: RequestHead.largest) + "\r\n", 431),
    ])
    func brokenRulesAreRefusedAtOnce(head: String, status: Int) {
        guard case .refused(let refused, _) = RequestHead.scan(Array(head.utf8)) else {
            Issue.record("\(head.prefix(40).debugDescription) was not refused")
            return
        }
        #expect(refused == status)
    }

    @Test func aBodyMustComeWithItsLength() throws {
        func head(_ extra: String) throws -> RequestHead {
            try RequestHead(parsing: Array("POST /api/set HTTP/1.1\r\nHost: a\r\n\(extra)\r\n".utf8))
        }
        #expect(try head("Content-Length: 12\r\n").bodyLength() == 12)
        #expect(throws: HeadError(status: 411, reason: "a body must come with its Content-Length")) {
            try head("Transfer-Encoding: chunked\r\n").bodyLength()
        }
        for length in ["-1", "ten", "", "1e3", "99999999999999999999999"] {
            #expect(throws: HeadError.self) { try head("Content-Length: \(length)\r\n").bodyLength() }
        }
        for twice in ["Host: b\r\n", "Content-Length: 1\r\nContent-Length: 1\r\n"] {
            #expect(throws: HeadError.self) { try head(twice) }
        }
    }
}
