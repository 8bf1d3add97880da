import FlyingFox
import KoeLive

/// The page's WebSocket, message by message (FlyingFox's `WSMessageHandler`): each text message from the page is
/// a `--set` line (`pitch=1.5 gain=-6`), taken through `LiveSettings` as `koe live --set` is, and answered only
/// when refused; the page is sent the settings whenever they change, whoever changed them (the page, `--set`, the
/// arrow keys), and the telemetry `updatesPerSecond` times a second.
struct PanelMessages: WSMessageHandler {
    let settings: LiveSettings
    let engine: LiveEngine

    static let updatesPerSecond = 20
    /// Seconds of telemetry a page gets when it connects: its chart's span.
    static let history = 10
    /// Messages a second a page may send; the page sends a slider's moves at most 50 a second.
    static let messagesPerSecond = 100

    func makeMessages(for client: AsyncStream<WSMessage>) async throws -> AsyncStream<WSMessage> {
        let (messages, continuation) = AsyncStream<WSMessage>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let task = Task { [settings, engine] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await Self.answer(client, settings: settings, into: continuation) }
                group.addTask { await Self.report(settings: settings, engine: engine, into: continuation) }
                await group.next()
                group.cancelAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return messages
    }

    /// Takes the page's lines until it closes, or sends more than `messagesPerSecond` a second.
    private static func answer(
        _ client: AsyncStream<WSMessage>, settings: LiveSettings, into continuation: AsyncStream<WSMessage>.Continuation
    ) async {
        var second = ContinuousClock.now
        var count = 0
        for await message in client {
            guard case .text(let line) = message else {
                if case .close = message { return }
                continuation.yield(.text(PanelDocument.error("the panel takes text messages: a line of NAME=VALUE")))
                continue
            }
            if ContinuousClock.now - second >= .seconds(1) {
                second = .now
                count = 0
            }
            count += 1
            guard count <= messagesPerSecond else {
                continuation.yield(.close(WSCloseCode(1008, reason: "more than \(messagesPerSecond) messages a second")))
                return
            }
            do {
                try settings.set(LiveControl.parse(line))
            } catch {
                continuation.yield(.text(PanelDocument.error(error.description)))
            }
        }
    }

    /// The settings when they change and the new telemetry, `updatesPerSecond` times a second, until cancelled.
    private static func report(settings: LiveSettings, engine: LiveEngine, into continuation: AsyncStream<WSMessage>.Continuation) async {
        var version = -1
        var seen = max(0, engine.telemetry.count - history * LiveTelemetry.recordsPerSecond)
        while !Task.isCancelled {
            let state = settings.current
            if state.version != version {
                version = state.version
                continuation.yield(.text(PanelDocument.state(state)))
            }
            let (records, count) = engine.telemetry.records(after: seen)
            seen = count
            continuation.yield(.text(PanelDocument.telemetry(records, engine: engine)))
            try? await Task.sleep(for: .milliseconds(1000 / updatesPerSecond))
        }
    }
}
