import FlyingSocks
import Glibc

/// One connection's socket on FlyingSocks' event pool: reads that give up at a deadline, and writes that give up
/// at one too and never raise SIGPIPE (koe live does not ignore it, and a page closed mid-answer must not end
/// the voice).
struct PanelSocket: Sendable {
    let socket: AsyncSocket
    let pool: any AsyncSocketPool

    /// Takes `file`, an accepted non-blocking socket, into the pool.
    init(file: Int32, pool: any AsyncSocketPool) throws {
        socket = try AsyncSocket(socket: Socket(file: Socket.FileDescriptor(rawValue: file)), pool: pool)
        self.pool = pool
    }

    private var file: Int32 { socket.socket.file.rawValue }

    /// The bytes that have come, at most `count`, once some have; throws `PanelTimeout` at `deadline` and
    /// `SocketError.disconnected` when the peer has closed.
    func read(atMost count: Int, until deadline: ContinuousClock.Instant) async throws -> [UInt8] {
        let socket = socket
        return try await withDeadline(deadline) { try await socket.read(atMost: count) }
    }

    /// Sends every byte, waiting for room until `deadline` at most.
    func write(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) async throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(file, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                sent += count
                continue
            }
            guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK else { throw SocketError.disconnected }
            let (socket, pool) = (socket.socket, pool)
            try await withDeadline(deadline) { try await pool.suspendSocket(socket, untilReadyFor: .write) }
        }
    }

    /// Tells the peer nothing more comes, while its bytes may still be read.
    func finishWriting() {
        shutdown(file, Int32(SHUT_WR))
    }

    func close() {
        try? socket.close()
    }
}

/// A wait that reached its deadline.
struct PanelTimeout: Error {}

/// `body`'s result, or `PanelTimeout` once `deadline` passes (`body` is cancelled then).
func withDeadline<Result: Sendable>(
    _ deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(until: deadline, clock: .continuous)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else { throw PanelTimeout() }
        return result
    }
}
