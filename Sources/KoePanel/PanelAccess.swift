/// Who may use the panel: a page served from `127.0.0.1:PORT` that knows the token. Every request, the
/// WebSocket's too, must name the panel's own address as its `Host` (so that a name of another site that
/// resolves to 127.0.0.1, DNS rebinding, reaches nothing), come from no other page's `Origin` (so that another
/// site's page in the same browser cannot post to it), and carry the token in its query (`?token=`), which
/// only the person who started koe live has: it is new each run, 256 random bits from the system's generator.
/// The same rules as the Jupyter server's token authentication.
package struct PanelAccess: Sendable {
    let port: Int
    package let token: String

    package init(port: Int, token: String = Self.makeToken()) {
        self.port = port
        self.token = token
    }

    /// 32 bytes from `SystemRandomNumberGenerator` (the kernel's getrandom), as 64 hexadecimal digits.
    package static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<64).map { _ in digits[Int(generator.next() % 16)] })
    }

    /// The origins of the panel's own page: the two names a browser reaches it by.
    var origins: [String] { ["http://127.0.0.1:\(port)", "http://localhost:\(port)"] }

    /// Why a request with these `Host` and `Origin` headers and this `token` query value is refused (with
    /// 403), or nil when it may go on.
    package func refusal(host: String?, origin: String?, token given: String?) -> String? {
        guard let host, ["127.0.0.1:\(port)", "localhost:\(port)"].contains(host.lowercased()) else {
            return "the Host must be 127.0.0.1:\(port) or localhost:\(port)"
        }
        if let origin, !origins.contains(origin.lowercased()) {
            return "requests from other pages are refused"
        }
        guard let given, Self.sameText(given, token) else {
            return "a token is needed: open the address koe live printed"
        }
        return nil
    }

    /// Compares every byte whatever the first difference, so that the time taken tells nothing of the token.
    private static func sameText(_ given: String, _ token: String) -> Bool {
        let given = Array(given.utf8), token = Array(token.utf8)
        var difference = given.count ^ token.count
        for index in token.indices {
            difference |= Int(token[index] ^ (index < given.count ? given[index] : 0))
        }
        return difference == 0
    }
}
