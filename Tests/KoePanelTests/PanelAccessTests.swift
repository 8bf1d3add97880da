import KoePanel
import Testing

/// Who may use the panel: its own address as the Host, no other page's Origin, the run's token.
@Suite struct PanelAccessTests {
    let access = PanelAccess(port: 8765, token: String(repeating: "ab", count: 32))
    var token: String { access.token }

    @Test func tokensAre256RandomBits() {
        let first = PanelAccess.makeToken(), second = PanelAccess.makeToken()
        #expect(first.count == 64 && first.allSatisfy(\.isHexDigit) && first != second)
    }

    @Test func thePanelsOwnPageIsLetIn() {
        for host in ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765"] {
            for origin in [nil, "http://127.0.0.1:8765", "http://localhost:8765"] {
                #expect(access.refusal(host: host, origin: origin, token: token) == nil, "\(host) \(origin ?? "-")")
            }
        }
    }

    @Test func everythingElseIsRefused() {
        let refused: [(String?, String?, String?)] = [
            (nil, nil, token), ("evil.example:8765", nil, token), ("127.0.0.1", nil, token), ("127.0.0.1:8766", nil, token),
            ("127.0.0.2:8765", nil, token), ("127.0.0.1:8765", "http://evil.example", token),
            ("127.0.0.1:8765", "null", token), ("127.0.0.1:8765", "https://127.0.0.1:8765", token),
            ("127.0.0.1:8765", "http://127.0.0.1:8766", token), ("127.0.0.1:8765", nil, nil), ("127.0.0.1:8765", nil, ""),
            ("127.0.0.1:8765", nil, String(token.dropLast())), ("127.0.0.1:8765", nil, token + "0"),
            ("127.0.0.1:8765", nil, String(repeating: "ab", count: 31) + "ac"),
        ]
        for (host, origin, given) in refused {
            #expect(access.refusal(host: host, origin: origin, token: given) != nil, "\(host ?? "-") \(origin ?? "-") \(given ?? "-")")
        }
    }
}
