import Glibc
import Koe

/// The voice of a running virtual microphone, changed from outside: `koe live --set NAME pitch=1.4` connects to
/// a Unix socket the microphone listens on, `$XDG_RUNTIME_DIR/koe-live-NODENAME.sock`, and sends one line of
/// `name=value` words; the answer is one line, the settings now (`pitch R formant R gain DB` and those the line
/// named) or `error: ...`. The main thread serves the socket between its other chores and changes the voice
/// through `LiveSettings`, as the arrow keys and the panel do.
package final class LiveControl {
    private let path: String
    private let socket: Int32

    /// Listens for `nodeName`'s microphone; a socket file left by a microphone that is gone is replaced, a live
    /// one is an error.
    package init(nodeName: String) throws(KoeError) {
        path = try Self.path(for: nodeName)
        if let other = try? Self.connect(path) {
            close(other)
            throw KoeError.io("another koe live already listens on \(path)")
        }
        unlink(path)
        socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw KoeError.io("cannot make the control socket: \(Self.reason())") }
        var address = try Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(socket, 8) == 0 else {
            let reason = Self.reason()
            close(socket)
            throw KoeError.io("cannot listen on \(path): \(reason)")
        }
    }

    deinit {
        close(socket)
        unlink(path)
    }

    /// Answers every request waiting, without blocking: each connection gets at most half a second to send its
    /// line.
    package func serve(_ settings: LiveSettings) {
        while true {
            // Blocking: Linux does not pass the listener's O_NONBLOCK on; reads wait for SO_RCVTIMEO at most.
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else { return }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            defer { close(connection) }
            var timeout = timeval(tv_sec: 0, tv_usec: 500_000)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let reply: String
            if let line = Self.readLine(connection) {
                do {
                    let assignments = try Self.parse(line)
                    let state = try settings.set(assignments)
                    let shown = ["pitch", "formant", "gain"] + assignments.map(\.name).filter { !["pitch", "formant", "gain"].contains($0) }
                    reply = shown.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
                        .map { "\($0) \(state.described($0))" }.joined(separator: " ")
                } catch {
                    reply = "error: \(error)"
                }
            } else {
                reply = "error: no request line"
            }
            Self.send(connection, reply + "\n")
        }
    }

    /// `koe live --set`'s side: sends `assignments` to the microphone called `description` and returns its answer.
    package static func request(description: String, assignments: [String]) throws(KoeError) -> String {
        let line = assignments.joined(separator: " ")
        _ = try parse(line)
        let path = try path(for: VirtualMicrophone.nodeName(for: description))
        let connection: Int32
        do {
            connection = try connect(path)
        } catch {
            throw KoeError.io("no koe live --virtual-mic '\(description)' is running (nothing listens on \(path))")
        }
        defer { close(connection) }
        var timeout = timeval(tv_sec: Int(VirtualMicrophone.timeout), tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        send(connection, line + "\n")
        guard let reply = readLine(connection) else {
            throw KoeError.io("koe live --virtual-mic '\(description)' did not answer")
        }
        if reply.hasPrefix("error: ") { throw KoeError.invalidArgument(String(reply.dropFirst(7))) }
        return reply
    }

    /// The `name=value` words of a `--set` line, each name a live setting (`LiveSettings.names`, or the command
    /// line's spelling with dashes) and each number within its range; what a value means beyond that (a band, a
    /// scale, a snap to tune) the running voice checks.
    package static func parse(_ line: String) throws(KoeError) -> [(name: String, text: String)] {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard !words.isEmpty else { throw KoeError.invalidArgument("nothing to set: give \(Self.usage)") }
        var assignments: [(name: String, text: String)] = []
        for word in words {
            let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { throw KoeError.invalidArgument("'\(word)' is not NAME=VALUE (\(Self.usage))") }
            let setting = Setting.named(parts[0])
            let name = setting?.name ?? parts[0]
            guard LiveSettings.names.contains(name) else {
                let reason = setting == nil ? "is not a setting koe live changes" : "cannot change while koe live runs"
                throw KoeError.invalidArgument("'\(word)' \(reason) (\(Self.usage))")
            }
            // `off` unsets what is optional (pitch_median); the running voice refuses it for the others.
            if let setting, setting.type == "number" || setting.type == "integer", parts[1].lowercased() != LiveSettings.off {
                guard let value = Double(parts[1]) else {
                    throw KoeError.invalidArgument("\(name) must be a number (got '\(parts[1])')")
                }
                try setting.validate(value)
            }
            assignments.append((name, parts[1]))
        }
        return assignments
    }

    /// The settings `--set` takes, as its messages name them.
    package static let usage = "NAME=VALUE, NAME one of \(LiveSettings.names.joined(separator: ", "))"

    private static func path(for nodeName: String) throws(KoeError) -> String {
        guard let directory = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !directory.isEmpty else {
            throw KoeError.io("XDG_RUNTIME_DIR is not set: the voice cannot be controlled from outside")
        }
        return directory + "/koe-live-" + nodeName + ".sock"
    }

    private static func address(_ path: String) throws(KoeError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw KoeError.io("the control socket's path is too long for a Unix socket: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { room in
            room.copyBytes(from: bytes)
        }
        return address
    }

    private static func connect(_ path: String) throws(KoeError) -> Int32 {
        let connection = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard connection >= 0 else { throw KoeError.io(reason()) }
        var address = try address(path)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(connection, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let reason = reason()
            close(connection)
            throw KoeError.io(reason)
        }
        return connection
    }

    /// Up to a newline or the end, at most 1 KB; nil when nothing came in time.
    private static func readLine(_ connection: Int32) -> String? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while bytes.count < 1024 && !bytes.contains(UInt8(ascii: "\n")) {
            let count = read(connection, &chunk, chunk.count)
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        guard !bytes.isEmpty else { return nil }
        let line = bytes.prefix { $0 != UInt8(ascii: "\n") }
        return String(decoding: line, as: UTF8.self)
    }

    private static func send(_ connection: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = Glibc.send(connection, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                guard count > 0 else { return }
                sent += count
            }
        }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
