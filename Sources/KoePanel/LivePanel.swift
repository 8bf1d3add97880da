import FlyingFox
import FlyingSocks
import Foundation
import Glibc
import Koe
import KoeLive

/// `koe live --panel`: a web page served by koe itself on 127.0.0.1 only, with a slider for each live setting, a
/// button for each preset, the bypass switch, the levels, a chart of F0 in and out, the latency, xruns and the
/// busiest block. Changes go through `LiveSettings` as `koe live --set` does; levels and F0 come from the
/// audio thread's `LiveTelemetry`. Every request must pass `PanelAccess`, stay within `RequestHead`'s and the
/// body's bounds and within `RequestBudget`; whatever breaks a rule gets its 4xx, and the audio thread never
/// waits for the server (they share nothing but atomics and `LiveSettings`' lock, which the callback never takes).
///
/// The server runs on Swift's concurrency threads over FlyingSocks' event pool (epoll), and speaks HTTP/1.1 and
/// the WebSocket with FlyingFox's types (`HTTPRequest`, the handshake of `WebSocketHTTPHandler`, the protocol of
/// `MessageFrameWSHandler`); it reads requests and frames itself, within bounds FlyingFox does not set.
package final class LivePanel: Sendable {
    let access: PanelAccess
    private let listener: Int32
    private let settings: LiveSettings
    private let engine: LiveEngine
    private let description: [UInt8]
    private let budget = RequestBudget()

    /// The largest request body taken (a line of settings).
    static let largestBody = 16 * 1024
    /// How long a request's head and body may take to come, and an answer to go.
    static let requestTime = Duration.seconds(10)
    /// How long a refused body is read and dropped after the refusal, so that a client still sending it can read
    /// the answer before the connection closes.
    static let lingerTime = Duration.seconds(1)
    /// The WebSocket's address.
    static let livePath = "/api/live"

    /// Listens on 127.0.0.1:`port` (a free port when nil) from now on; throws when the port is taken or not a
    /// port. Serves nothing until `start`.
    package init(settings: LiveSettings, engine: LiveEngine, port: Int?) throws(KoeError) {
        let file = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard file >= 0 else { throw .io("cannot make the panel's socket: \(String(cString: strerror(errno)))") }
        var reuse: Int32 = 1
        setsockopt(file, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port ?? 0).bigEndian)
        address.sin_addr.s_addr = in_addr_t(INADDR_LOOPBACK).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(file, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(file, 64) == 0 else {
            let reason = errno == EADDRINUSE ? "it is taken" : String(cString: strerror(errno))
            Glibc.close(file)
            throw .io("cannot listen on 127.0.0.1:\(port ?? 0) for the panel: \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(file, $0, &length) }
        }
        listener = file
        access = PanelAccess(port: Int(UInt16(bigEndian: address.sin_port)))
        self.settings = settings
        self.engine = engine
        description = PanelDocument.settings(sampleRate: engine.changer.sampleRate)
    }

    deinit {
        Glibc.close(listener)
    }

    /// The page's address, token included.
    package var url: String { "http://127.0.0.1:\(access.port)/?token=\(access.token)" }

    /// Serves the page from now on, on threads of its own; `failed` is told if the server cannot go on (the voice
    /// goes on without it).
    package func start(failed: @escaping @Sendable (String) -> Void) {
        Task.detached { [self] in
            do {
                try await serve()
            } catch {
                failed("the panel stopped: \(error)")
            }
        }
    }

    private func serve() async throws {
        let pool: any AsyncSocketPool = SocketPool<Poll>.make()
        try await pool.prepare()
        let listening = Socket(file: Socket.FileDescriptor(rawValue: listener))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await pool.run() }
            while true {
                // Glibc's module has no accept4: the flags follow at once (xdg-open, the only child, starts before).
                let file = accept(listener, nil, nil)
                if file >= 0 {
                    _ = fcntl(file, F_SETFD, FD_CLOEXEC)
                    _ = fcntl(file, F_SETFL, fcntl(file, F_GETFL) | O_NONBLOCK)
                }
                guard file >= 0 else {
                    if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED {
                        try await pool.suspendSocket(listening, untilReadyFor: .connection)
                    } else {
                        // Out of descriptors or memory for now: try again shortly rather than spin.
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    continue
                }
                guard budget.openConnection() else {
                    Self.refuseAtOnce(file)
                    continue
                }
                group.addTask { [self] in
                    defer { budget.closeConnection() }
                    guard let connection = try? PanelSocket(file: file, pool: pool) else {
                        Glibc.close(file)
                        return
                    }
                    await serve(connection)
                    connection.close()
                }
            }
        }
    }

    /// More connections than the budget: a 429 if the socket takes it at once, then closed.
    private static func refuseAtOnce(_ file: Int32) {
        let bytes = Response(status: .tooManyRequests, text: "too many connections to the panel").bytes(closing: true)
        _ = bytes.withUnsafeBytes { send(file, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(file)
    }

    /// One connection's requests, one after another, until it closes, breaks a rule or upgrades to the WebSocket.
    private func serve(_ connection: PanelSocket) async {
        var pending: [UInt8] = []
        while true {
            let deadline = ContinuousClock.now + Self.requestTime
            let head: RequestHead
            let length: Int
            do {
                (head, length) = try await readHead(connection, &pending, until: deadline)
            } catch let refused as HeadError {
                await answer(connection, Response(status: HTTPStatusCode(refused.status, phrase: Self.phrase(refused.status)), text: refused.reason))
                return
            } catch is PanelTimeout {
                // A connection kept open with no request under way just closes; one halfway through hears 408.
                if !pending.isEmpty { await answer(connection, Response(status: .requestTimeout, text: "the request did not come in time")) }
                return
            } catch {
                return
            }
            pending.removeFirst(length)
            guard budget.takeRequest() else {
                await answer(connection, Response(status: .tooManyRequests, text: "too many requests to the panel"))
                return
            }
            let bodyLength: Int
            do {
                bodyLength = try head.bodyLength()
            } catch {
                await answer(connection, Response(status: HTTPStatusCode(error.status, phrase: Self.phrase(error.status)), text: error.reason))
                return
            }
            guard bodyLength <= Self.largestBody else {
                await answer(connection, Response(status: .payloadTooLarge, text: "a request body is at most \(Self.largestBody) bytes"))
                await Self.linger(connection)
                return
            }
            guard let body = try? await readBody(connection, &pending, length: bodyLength, until: deadline) else {
                await answer(connection, Response(status: .requestTimeout, text: "the request body did not come in time"))
                return
            }
            let request = head.request(body: Data(body))
            if let refusal = access.refusal(host: head.header("host"), origin: head.header("origin"), token: request.query["token"]) {
                await answer(connection, Response(status: .forbidden, text: refusal))
                return
            }
            if request.path == Self.livePath && request.method == .GET {
                await serveWebSocket(connection, request: request, pending: pending)
                return
            }
            let closing = head.version == "HTTP/1.0" || head.header("connection")?.lowercased() == "close"
            guard (try? await connection.write(respond(to: request, body: body).bytes(closing: closing), until: deadline)) != nil, !closing else {
                return
            }
        }
    }

    /// The next head: bytes read until it is whole, or refused as soon as they show it breaks a rule.
    private func readHead(_ connection: PanelSocket, _ pending: inout [UInt8], until deadline: ContinuousClock.Instant) async throws -> (
        RequestHead, Int
    ) {
        while true {
            switch RequestHead.scan(pending) {
            case .complete(let length):
                return (try RequestHead(parsing: pending[..<length]), length)
            case .refused(let status, let reason):
                throw HeadError(status: status, reason: reason)
            case .incomplete:
                do {
                    pending += try await connection.read(atMost: 4096, until: deadline)
                } catch SocketError.disconnected where !pending.isEmpty {
                    throw HeadError(status: 400, reason: "the connection closed in the middle of a request head")
                }
            }
        }
    }

    private func readBody(_ connection: PanelSocket, _ pending: inout [UInt8], length: Int, until deadline: ContinuousClock.Instant) async throws
        -> [UInt8]
    {
        while pending.count < length {
            pending += try await connection.read(atMost: length - pending.count, until: deadline)
        }
        defer { pending.removeFirst(length) }
        return Array(pending[..<length])
    }

    /// Sends `response` and ends the connection's requests (the caller closes it).
    private func answer(_ connection: PanelSocket, _ response: Response) async {
        try? await connection.write(response.bytes(closing: true), until: .now + Self.requestTime)
    }

    /// After a refusal: reads what the client still sends, for `lingerTime` at most, and drops it.
    private static func linger(_ connection: PanelSocket) async {
        connection.finishWriting()
        let deadline = ContinuousClock.now + lingerTime
        while (try? await connection.read(atMost: 65536, until: deadline)) != nil {}
    }

    /// The WebSocket: FlyingFox's handshake checks and answer, then frames read here and written by the protocol
    /// handler until either side ends.
    private func serveWebSocket(_ connection: PanelSocket, request: HTTPRequest, pending: [UInt8]) async {
        let messages = PanelMessages(settings: settings, engine: engine)
        guard let handshake = try? await WebSocketHTTPHandler(handler: MessageFrameWSHandler(handler: messages)).handleRequest(request),
            handshake.statusCode == .switchingProtocols, case .webSocket(let handler) = handshake.payload
        else {
            await answer(connection, Response(status: .badRequest, text: "not a WebSocket handshake"))
            return
        }
        var headers = handshake.headers.map { ($0.key.rawValue, $0.value) }
        headers.sort { $0.0 < $1.0 }
        guard (try? await connection.write(Response(status: .switchingProtocols, headers: headers).bytes(closing: false), until: .now + Self.requestTime)) != nil
        else { return }
        let (clientFrames, frameContinuation) = AsyncThrowingStream<WSFrame, any Error>.makeStream(bufferingPolicy: .bufferingOldest(256))
        let reader = Task {
            var bytes = pending
            do {
                while !Task.isCancelled {
                    while let (frame, length) = try WebSocketFrames.decode(bytes[...]) {
                        bytes.removeFirst(length)
                        frameContinuation.yield(frame)
                    }
                    bytes += try await connection.socket.read(atMost: 4096)
                }
            } catch {
                frameContinuation.finish(throwing: error)
            }
            frameContinuation.finish()
        }
        defer { reader.cancel() }
        guard let serverFrames = try? await handler.makeFrames(for: clientFrames) else { return }
        for await frame in serverFrames {
            guard (try? await connection.write(WebSocketFrames.encode(frame), until: .now + Self.requestTime)) != nil else { return }
            if frame.opcode == .close { return }
        }
    }

    /// What a request that passed the checks gets: the page, its style and script, the description of the
    /// controls, the values now, or a change (`POST /api/set`, a `--set` line as its body).
    private func respond(to request: HTTPRequest, body: [UInt8]) -> Response {
        let page: [String: (type: String, bytes: [UInt8])] = [
            "/": ("text/html; charset=utf-8", Array(String(decoding: PackageResources.panel_html, as: UTF8.self)
                .replacingOccurrences(of: "{{token}}", with: access.token).utf8)),
            "/panel.css": ("text/css; charset=utf-8", PackageResources.panel_css),
            "/panel.js": ("text/javascript; charset=utf-8", PackageResources.panel_js),
            "/api/settings": ("application/json", description),
        ]
        switch (request.method, request.path) {
        case (.GET, "/api/state"):
            return Response(status: .ok, type: "application/json", body: Array(PanelDocument.state(settings.current).utf8))
        case (.POST, "/api/set"):
            do {
                let line = String(decoding: body, as: UTF8.self)
                return Response(status: .ok, type: "application/json", body: Array(PanelDocument.state(try settings.set(LiveControl.parse(line))).utf8))
            } catch {
                return Response(status: .badRequest, type: "application/json", body: Array(PanelDocument.error(error.description).utf8))
            }
        case (.GET, let path):
            guard let file = page[path] else { return Response(status: .notFound, text: "no such page") }
            var response = Response(status: .ok, type: file.type, body: file.bytes)
            if path == "/" { response.headers.append(("Content-Security-Policy", contentSecurityPolicy)) }
            return response
        default:
            let known = page[request.path] != nil || ["/api/state", "/api/set", Self.livePath].contains(request.path)
            return known ? Response(status: .methodNotAllowed, text: "not with \(request.method.rawValue)") : Response(status: .notFound, text: "no such page")
        }
    }

    /// The page may load its own script and style and talk to its own server, nothing else.
    private var contentSecurityPolicy: String {
        let sockets = ["ws://127.0.0.1:\(access.port)", "ws://localhost:\(access.port)"].joined(separator: " ")
        return "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self' \(sockets); "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    private static func phrase(_ status: Int) -> String {
        [400: "Bad Request", 408: "Request Timeout", 411: "Length Required", 413: "Payload Too Large",
         431: "Request Header Fields Too Large"][status] ?? "Bad Request"
    }
}

/// An answer, as bytes on the wire.
struct Response {
    var status: HTTPStatusCode
    var headers: [(String, String)] = []
    var body: [UInt8] = []

    init(status: HTTPStatusCode, headers: [(String, String)] = [], type: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        if let type { self.headers.append(("Content-Type", type)) }
        self.body = body
    }

    /// A plain-text answer: a refusal says why in one line.
    init(status: HTTPStatusCode, text: String) {
        self.init(status: status, type: "text/plain; charset=utf-8", body: Array((text + "\n").utf8))
    }

    func bytes(closing: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status.code) \(status.phrase)\r\n"
        var fields = headers
        if status != .switchingProtocols {
            fields += [("Content-Length", String(body.count)), ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
                       ("Referrer-Policy", "no-referrer")]
            if closing { fields.append(("Connection", "close")) }
        }
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }
}
