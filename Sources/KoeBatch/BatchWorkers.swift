import Foundation
import Glibc
import Koe
import KoeDSP
import KoeIO

/// What a worker is asked to do: convert one input into one output.
package struct BatchOrder: Codable {
    package let input: String
    package let output: String
}

/// A worker's answer to one order.
package struct BatchAnswer: Codable {
    /// Why the conversion failed; nil when the output is complete.
    package var error: String?
    package var audioSeconds: Double?
    package var processingSeconds: Double
    package var clippedSamples: Int?
}

/// The jobs of a batch are worker processes, each this same program started as `koe batch --worker` with the
/// batch's own arguments, so it converts with exactly the options the batch was given. A worker converts one
/// file at a time on one core, and keeps nothing from one file to the next but the code itself.
///
/// Processes rather than threads, because a conversion that crashes (a bug meeting a strange file) or runs
/// out of memory then takes down one worker, not the batch: its file is reported failed and a new worker
/// goes on. They also leave libsndfile's and FFTW's process-wide state to one conversion each.
///
/// The main process alone talks to the workers, from one thread: orders go to a worker's standard input,
/// answers come back on its standard output as JSON lines; its standard error is kept to explain a crash.
package final class BatchWorkerPool {
    private let jobs: Int
    private let command: [String]
    private let environment: [String]
    /// Every worker holds the read end of this pipe; nobody writes to it. When the main process dies, however
    /// it dies, the pipe's end is closed and each worker removes its temporary file and stops.
    private let lifeline: (read: Int32, write: Int32)
    private var workers: [Worker] = []

    /// Where a worker finds its end of the lifeline.
    static let lifelineDescriptor: Int32 = 3

    /// How long the main process waits for an answer before it lets the progress bar move.
    private static let tickMilliseconds: Int32 = 250

    package init(jobs: Int, command: [String]) throws {
        self.jobs = jobs
        self.command = command
        // A crashed worker is reported by the batch in one line: no slow backtrace symbolication per crash.
        environment = ProcessInfo.processInfo.environment.filter { $0.key != "SWIFT_BACKTRACE" }
            .map { "\($0.key)=\($0.value)" } + ["SWIFT_BACKTRACE=enable=no"]
        lifeline = try Self.makePipe()
    }

    deinit {
        stopAll()
        close(lifeline.read)
        close(lifeline.write)
    }

    /// Converts every item (each has an output) on at most `jobs` workers, calling `finished` with each
    /// answer in the order they come, and `tick` at least a few times a second.
    package func run(_ items: [BatchItem], finished: (BatchItem, BatchAnswer) throws -> Void, tick: () -> Void) throws {
        var queue = items[...]
        defer { stopAll() }
        while true {
            try dispatch(&queue)
            guard workers.contains(where: { $0.current != nil }) else { break }
            try collectAnswers(finished)
            tick()
        }
    }

    // MARK: Handing out orders

    /// Gives an order to every idle worker, starting workers while there are more orders than workers.
    private func dispatch(_ queue: inout ArraySlice<BatchItem>) throws {
        for worker in workers where worker.current == nil && worker.isAlive {
            guard let item = queue.popFirst() else { return }
            worker.give(item)
        }
        while workers.count < jobs, let item = queue.popFirst() {
            let worker = try spawnWorker()
            workers.append(worker)
            worker.give(item)
        }
    }

    // MARK: Hearing back

    /// Waits until some worker says something, then reads it: answers, or the end of a worker.
    private func collectAnswers(_ finished: (BatchItem, BatchAnswer) throws -> Void) throws {
        var watched = workers.flatMap { worker in
            [worker.answers, worker.diagnostics].filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        }
        let ready = poll(&watched, nfds_t(watched.count), Self.tickMilliseconds)
        guard ready > 0 else { return }
        let readable = Set(watched.filter { $0.revents != 0 }.map(\.fd))
        for worker in workers {
            if readable.contains(worker.diagnostics) { worker.readDiagnostics() }
            guard readable.contains(worker.answers) else { continue }
            for (item, answer) in worker.readAnswers() { try finished(item, answer) }
            if !worker.isAlive, let (item, answer) = worker.reap() { try finished(item, answer) }
            if let signalNumber = worker.stopSignal {
                throw KoeError.io(
                    "a worker was stopped by signal \(signalNumber) (\(String(cString: strsignal(signalNumber)))), so the batch stops; "
                        + "its input is not recorded and a rerun converts it")
            }
        }
        workers.removeAll { !$0.isAlive && $0.hasBeenReaped }
    }

    // MARK: Starting and stopping workers

    private func spawnWorker() throws -> Worker {
        let orders = try Self.makePipe()
        let answers = try Self.makePipe()
        let diagnostics = try Self.makePipe()
        defer {
            close(orders.read)
            close(answers.write)
            close(diagnostics.write)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, orders.read, STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, answers.write, STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, diagnostics.write, STDERR_FILENO)
        posix_spawn_file_actions_adddup2(&actions, lifeline.read, Self.lifelineDescriptor)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        // The batch ignores some signals (SIGPIPE; the interrupt signals its cleanup catches); a worker starts clean.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signalNumber) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = command.map { strdup($0) } + [nil]
        let environment = self.environment.map { strdup($0) } + [nil]
        defer { (arguments + environment).forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, command[0], &actions, &attributes, arguments, environment)
        guard status == 0 else {
            close(orders.write)
            close(answers.read)
            close(diagnostics.read)
            throw Self.failure("cannot start a worker (\(String(cString: strerror(status))))")
        }
        return Worker(pid: pid, orders: orders.write, answers: answers.read, diagnostics: diagnostics.read)
    }

    /// Closes every worker's orders, so an idle one ends; one still converting is told to stop (it removes
    /// its temporary file). Then waits for each.
    private func stopAll() {
        for worker in workers {
            worker.closeOrders()
            if worker.current != nil { kill(worker.pid, SIGTERM) }
        }
        for worker in workers { _ = worker.reap() }
        workers.removeAll()
    }

    /// A pipe whose ends are closed in the workers unless handed on, numbered above the descriptors a worker
    /// is given (0 to 3) so that handing one on is always a real copy, even if this process lacks a standard one.
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw failure("cannot make a pipe (\(String(cString: strerror(errno))))") }
        defer { ends.forEach { close($0) } }
        // Only the main thread starts processes, so no worker can inherit the ends before they close on exec.
        let moved = ends.map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
        guard moved.allSatisfy({ $0 >= 0 }) else {
            moved.filter { $0 >= 0 }.forEach { close($0) }
            throw failure("cannot make a pipe (\(String(cString: strerror(errno))))")
        }
        return (moved[0], moved[1])
    }

    private static func failure(_ message: String) -> Error {
        KoeError.io(message)
    }
}

/// One worker process, seen from the main process.
private final class Worker {
    let pid: pid_t
    private(set) var orders: Int32
    private(set) var answers: Int32
    private(set) var diagnostics: Int32
    /// The order being converted and when it was given.
    private(set) var current: (item: BatchItem, since: Double)?
    private(set) var hasBeenReaped = false
    /// The signal that stopped the worker while it converted, when it is one that stops a run (SIGTERM, SIGINT,
    /// SIGHUP): whoever sent it stopped the batch, and the input is left for a rerun, not recorded as failed.
    private(set) var stopSignal: Int32?
    private var pendingAnswer: [UInt8] = []
    /// The end of what the worker wrote on its standard error, enough to name a crash.
    private var diagnosticTail: [UInt8] = []

    private static let diagnosticLimit = 4096

    init(pid: pid_t, orders: Int32, answers: Int32, diagnostics: Int32) {
        self.pid = pid
        self.orders = orders
        self.answers = answers
        self.diagnostics = diagnostics
    }

    deinit {
        for descriptor in [orders, answers, diagnostics] where descriptor >= 0 { close(descriptor) }
    }

    /// Alive as long as its standard output is open: a worker never closes it but by ending.
    var isAlive: Bool { answers >= 0 }

    /// Sends one order. If the worker is already gone, the order stays current and is answered by `reap`.
    func give(_ item: BatchItem) {
        current = (item, monotonicSeconds())
        guard let output = item.output, let line = try? JSONEncoder().encode(BatchOrder(input: item.input, output: output)) else { return }
        guard orders >= 0 else { return }
        do {
            try Descriptors.writeAll(Array(line) + [UInt8(ascii: "\n")], to: orders)
        } catch {
            closeOrders()
        }
    }

    func closeOrders() {
        if orders >= 0 { close(orders) }
        orders = -1
    }

    /// The answers that arrived, each with its order. At the end of the output the worker is no longer alive.
    func readAnswers() -> [(BatchItem, BatchAnswer)] {
        guard let bytes = Self.readSome(answers) else {
            close(answers)
            answers = -1
            return []
        }
        pendingAnswer += bytes
        var answered: [(BatchItem, BatchAnswer)] = []
        while let newline = pendingAnswer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = pendingAnswer[..<newline]
            pendingAnswer.removeFirst(newline + 1)
            guard let (item, since) = current else { continue }
            current = nil
            let answer = (try? JSONDecoder().decode(BatchAnswer.self, from: Data(line)))
                ?? BatchAnswer(error: "the worker's answer was garbled", processingSeconds: Self.seconds(since: since))
            answered.append((item, answer))
        }
        return answered
    }

    func readDiagnostics() {
        guard let bytes = Self.readSome(diagnostics) else {
            close(diagnostics)
            diagnostics = -1
            return
        }
        diagnosticTail = Array((diagnosticTail + bytes).suffix(Self.diagnosticLimit))
    }

    /// Waits for the ended worker. Returns its order, if it died converting one, answered with why it died.
    func reap() -> (BatchItem, BatchAnswer)? {
        guard !hasBeenReaped else { return nil }
        closeOrders()
        while diagnostics >= 0 { readDiagnostics() }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        hasBeenReaped = true
        guard let (item, since) = current else { return nil }
        current = nil
        // A worker that crashed or was killed outright could not remove its temporary file.
        if let output = item.output { BatchOutputs.removeStaleTemporaryFiles(besides: [output]) }
        let signalNumber = status & 0x7f
        if [SIGTERM, SIGINT, SIGHUP].contains(signalNumber) {
            stopSignal = signalNumber
            return nil
        }
        return (item, BatchAnswer(error: deathNotice(status), processingSeconds: Self.seconds(since: since)))
    }

    /// Why the worker ended, in words, with the last thing it said (a Swift runtime error says what failed).
    private func deathNotice(_ status: Int32) -> String {
        let signalNumber = status & 0x7f
        let how = signalNumber == 0
            ? "ended with status \((status >> 8) & 0xff)"
            : "was killed by signal \(signalNumber) (\(String(cString: strsignal(signalNumber))))"
        let lastWords = String(decoding: diagnosticTail, as: UTF8.self)
            .split(whereSeparator: \.isNewline).last { !$0.allSatisfy(\.isWhitespace) }
        return "koe's worker \(how) while converting this file" + (lastWords.map { ": " + $0 } ?? "")
    }

    /// What is there to read, or nil at the end of the stream (or on an error, which ends it too).
    private static func readSome(_ descriptor: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            return got > 0 ? Array(buffer[..<got]) : nil
        }
    }

    private static func seconds(since start: Double) -> Double {
        monotonicSeconds() - start
    }
}

/// The worker's side: reads orders from standard input until it ends, converts each, answers on standard output.
package enum BatchWorker {
    /// What the manifest records of a completed order.
    package struct Outcome {
        var audioSeconds: Double
        var clippedSamples: Int

        package init(audioSeconds: Double, clippedSamples: Int = 0) {
            self.audioSeconds = audioSeconds
            self.clippedSamples = clippedSamples
        }
    }

    /// `describe` words a failed order's error for the manifest, in one line.
    package static func serve(
        _ carryOut: (BatchOrder) throws -> Outcome, describe: (any Error) -> String
    ) throws {
        guard fcntl(BatchWorkerPool.lifelineDescriptor, F_GETFD) >= 0 else {
            throw KoeError.misuse("a batch worker runs only in a process its batch started, which hands it a lifeline")
        }
        watchLifeline()
        let decoder = JSONDecoder()
        let encoder = JSONEncoder()
        while let line = readLine(strippingNewline: true) {
            let start = monotonicSeconds()
            var answer: BatchAnswer
            do {
                let order = try decoder.decode(BatchOrder.self, from: Data(line.utf8))
                let outcome = try carryOut(order)
                answer = BatchAnswer(audioSeconds: outcome.audioSeconds, processingSeconds: 0, clippedSamples: outcome.clippedSamples)
            } catch {
                answer = BatchAnswer(error: describe(error), processingSeconds: 0)
            }
            answer.processingSeconds = monotonicSeconds() - start
            guard let encoded = try? encoder.encode(answer), send(Array(encoded) + [UInt8(ascii: "\n")]) else { break }
        }
    }

    /// When the batch's main process is gone, a worker stops as if terminated: its temporary file is removed. A
    /// thread of the worker pool waits for that for the worker's life; the pool starts others for the conversions.
    private static func watchLifeline() {
        WorkerPool.shared.run {
            // Nobody writes to the lifeline: it becomes readable (at its end) only when the main process is gone.
            var lifeline = pollfd(fd: BatchWorkerPool.lifelineDescriptor, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat {
                ready = poll(&lifeline, 1, -1)
            } while ready < 0 && errno == EINTR
            if ready > 0 { kill(getpid(), SIGTERM) }
        }
    }

    private static func send(_ bytes: [UInt8]) -> Bool {
        (try? Descriptors.writeAll(bytes, to: STDOUT_FILENO)) != nil
    }
}
