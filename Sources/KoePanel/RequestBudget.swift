import Synchronization

/// How much the panel's server takes on: connections open at once, and requests a second (a bucket of
/// `burst` requests refilled at `perSecond`), so that a flood of requests costs koe a bounded share of its
/// time and memory; what is over the budget is answered 429.
final class RequestBudget: Sendable {
    static let connections = 32
    static let perSecond = 200.0
    static let burst = 400.0

    private struct State {
        var open = 0
        var tokens = RequestBudget.burst
        var refilled = ContinuousClock.now
    }

    private let state = Mutex(State())

    /// True, and counted, when another connection may be served.
    func openConnection() -> Bool {
        state.withLock { state in
            guard state.open < Self.connections else { return false }
            state.open += 1
            return true
        }
    }

    func closeConnection() {
        state.withLock { $0.open -= 1 }
    }

    /// True, and counted, when another request may be served now.
    func takeRequest(at now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            let elapsed = now - state.refilled
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            state.tokens = min(Self.burst, state.tokens + max(0, seconds) * Self.perSecond)
            state.refilled = max(state.refilled, now)
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }
}
