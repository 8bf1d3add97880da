import Glibc

/// The process's threads for work beside its caller: `Parallel`'s shares, the workers of each vocoder on
/// several threads, a batch worker's lifeline watch. The one in-process pool of koe's code.
///
/// **A task never waits in a queue.** `run` hands it at once to an idle thread of the pool, or starts a new thread
/// for it when none is idle, so every task handed over is running when `run` returns. Work may therefore wait for
/// other work of the pool (a vocoder's caller for its workers, a stream for its F0 shares, one conversion of a batch
/// for nothing but its own) without ever deadlocking: a task that waits only waits for tasks already running, never
/// for a thread to come free. A pool of a fixed size could deadlock there: several streams whose callers and
/// workers together need more threads than it has would each hold threads waiting for work that has none.
///
/// The pool holds as many threads as tasks ever ran at once, which is what the callers asked for (`threads` of each
/// conversion or changer); a thread idle for `idleSeconds` ends, and the most recently idle thread takes the next
/// task, so a steady load keeps the same threads warm and a burst's extra threads go away. A changer on one thread
/// never touches the pool: its audio callback allocates, locks and waits on nothing.
package final class WorkerPool: @unchecked Sendable {
    package typealias Task = @Sendable () -> Void

    /// The pool every module of koe uses.
    package static let shared = WorkerPool()

    /// How long a thread waits for a task before it ends.
    let idleSeconds: Double

    /// Guards `idle` and `threads`.
    private let lock = Lock()
    /// Threads waiting for a task, the one idle longest first.
    private var idle: [Worker] = []
    private var threads = 0

    init(idleSeconds: Double = 5) {
        self.idleSeconds = idleSeconds
    }

    /// Threads of the pool now, busy or idle.
    var threadCount: Int {
        lock.withLock { threads }
    }

    /// Threads of the pool waiting for a task now.
    var idleThreadCount: Int {
        lock.withLock { idle.count }
    }

    /// Starts `task` on a thread of the pool: one that is idle, or a new one.
    package func run(_ task: @escaping Task) {
        lock.lock()
        if let worker = idle.popLast() {
            lock.unlock()
            worker.hand(task)
            return
        }
        threads += 1
        lock.unlock()
        startThread { [self] in serve(first: task) }
    }

    /// A thread's life: its first task, then each task handed to it, until it has been idle too long.
    private func serve(first: @escaping Task) {
        let worker = Worker()
        var task: Task? = first
        while let current = task {
            current()
            task = nil
            task = nextTask(for: worker)
        }
        lock.withLock { threads -= 1 }
    }

    /// Waits, idle, for a task; nil once `idleSeconds` have passed without one.
    private func nextTask(for worker: Worker) -> Task? {
        lock.withLock { idle.append(worker) }
        if let task = worker.waitForTask(until: monotonicSeconds() + idleSeconds) {
            return task
        }
        // Timed out: the thread ends unless `run` took it from the idle threads meanwhile, and so is handing it a task.
        let isLeaving = lock.withLock {
            guard let index = idle.firstIndex(where: { $0 === worker }) else { return false }
            idle.remove(at: index)
            return true
        }
        return isLeaving ? nil : worker.waitForTask(until: nil)
    }
}

/// One thread of the pool, as the pool sees it: where its next task is handed.
private final class Worker: @unchecked Sendable {
    private let lock = Lock()
    private var task: WorkerPool.Task?

    func hand(_ task: @escaping WorkerPool.Task) {
        lock.withLock { self.task = task }
        lock.signal()
    }

    /// The task handed over, once there is one; nil if `deadline` passes first.
    func waitForTask(until deadline: Double?) -> WorkerPool.Task? {
        lock.lock()
        defer { lock.unlock() }
        while task == nil {
            if let deadline {
                guard lock.wait(until: deadline) else { break }
            } else {
                lock.wait()
            }
        }
        defer { task = nil }
        return task
    }
}

/// Runs `body` on a new thread of its own, detached. (Unnamed: Glibc's module leaves out pthread_setname_np.)
private func startThread(_ body: @escaping @Sendable () -> Void) {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { context in
        Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, context)
    guard status == 0 else {
        fatalError("could not start a thread: \(String(cString: strerror(status)))")
    }
    pthread_detach(thread)
}

private final class ThreadBody {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}
