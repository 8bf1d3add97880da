import Glibc

/// Scratch objects (FFT plans, buffers) kept between calls of a value type that must stay `Sendable`:
/// each call takes one for its own use, or makes one, and hands it back. A workspace is only ever used
/// by one thread at a time; the pool holds as many as were ever in use at once. A thread gets back the
/// workspace it used last when that one is free, so its buffers are still in that core's cache.
///
/// A pool that is not shared serves one thread at a time and takes no lock, so that a single-threaded caller (an
/// audio callback) never waits on one; it makes its one workspace when it is made, so that caller never builds
/// one (an FFT plan, say) either.
package final class WorkspacePool<Workspace: AnyObject>: @unchecked Sendable {
    /// Nil when the pool is not shared.
    private let lock: Lock?
    /// Idle workspaces, and the thread that used each last. Two arrays rather than one of pairs: unspecialised,
    /// as other modules call it, taking from and returning to an array of tuples allocated on every call.
    private var idle: [Workspace] = []
    private var lastUsers: [pthread_t] = []
    private let make: @Sendable () -> Workspace

    /// `shared`: whether several threads may take workspaces at once.
    package init(shared: Bool = true, make: @escaping @Sendable () -> Workspace) {
        lock = shared ? Lock() : nil
        self.make = make
        if !shared {
            idle.append(make())
            lastUsers.append(pthread_self())
        }
    }

    package func withWorkspace<Result>(_ body: (Workspace) throws -> Result) rethrows -> Result {
        let user = pthread_self()
        let workspace = take(for: user)
        defer { giveBack(workspace, from: user) }
        return try body(workspace)
    }

    private func take(for user: pthread_t) -> Workspace {
        lock?.lock()
        var workspace: Workspace?
        if !idle.isEmpty {
            let index = idle.indices.reversed().first { pthread_equal(lastUsers[$0], user) != 0 } ?? idle.count - 1
            workspace = idle.remove(at: index)
            lastUsers.remove(at: index)
        }
        lock?.unlock()
        return workspace ?? make()
    }

    private func giveBack(_ workspace: Workspace, from user: pthread_t) {
        lock?.lock()
        idle.append(workspace)
        lastUsers.append(user)
        lock?.unlock()
    }
}

/// Independent work spread over threads.
package enum Parallel {
    /// Cuts `0..<count` into contiguous ranges of at least `minimumLength` (except the last) and runs `body`
    /// once for each, on up to `threads` threads; returns when all are done. With one thread, or too little
    /// work to share, `body` runs once on the caller's thread with the whole range. Callers whose results
    /// must not depend on the thread count make each range's work depend only on the range.
    package static func forEachRange(
        _ count: Int, threads: Int, minimumLength: Int = 1, _ body: (Range<Int>) -> Void
    ) {
        let workers = min(max(1, threads), count / max(1, minimumLength))
        guard workers > 1 else {
            if count > 0 { body(0..<count) }
            return
        }
        // A few ranges per worker even out uneven frames; `forEach` deals them out as workers come free, so a
        // worker that waits for its core (another thread of the process may hold it) leaves its share to the others.
        let rangeCount = min(workers * 4, count / max(1, minimumLength))
        let length = (count + rangeCount - 1) / rangeCount
        forEach(rangeCount, threads: workers) { index in
            let start = index * length
            if start < count {
                body(start..<min(count, start + length))
            }
        }
    }

    /// Runs `body` once for each index of `0..<count`, on up to `threads` threads, each taking the next index
    /// as it comes free; returns when all are done. For items of uneven cost. With one thread,
    /// or one item, everything runs on the caller's thread, in order.
    ///
    /// The caller takes indices too; the other threads are the worker pool's, each started at once (the pool never
    /// queues a task), and a thread that starts after the caller has finished the last index leaves at once. So
    /// the caller never waits for a thread to come free, only for the indices taken to be done.
    package static func forEach(_ count: Int, threads: Int, _ body: (Int) -> Void) {
        let workers = min(max(1, threads), count)
        guard workers > 1 else {
            for index in 0..<count { body(index) }
            return
        }
        withoutActuallyEscaping(body) { body in
            // The caller promises `body` is safe to run on different indices at once; the loop lets go of it
            // before this call returns.
            let loop = SharedLoop(count: count, body: body)
            for _ in 1..<workers {
                WorkerPool.shared.run { loop.help() }
            }
            loop.help()
            loop.close()
        }
    }
}

/// The indices `0..<count`, each handed once to whichever thread asks next, and the body they are run with,
/// held until the caller closes the loop: a helper that comes later finds no body and leaves.
private final class SharedLoop: @unchecked Sendable {
    private let lock = Lock()
    private let count: Int
    private var dealt = 0
    private var body: ((Int) -> Void)?
    /// Threads inside `work`.
    private var working = 0

    init(count: Int, body: @escaping (Int) -> Void) {
        self.count = count
        self.body = body
    }

    /// Runs the body on indices until none is left, unless the loop is closed.
    func help() {
        guard enter() else { return }
        work()
        lock.lock()
        working -= 1
        if working == 0 { lock.broadcast() }
        lock.unlock()
    }

    /// Lets go of the body, once the threads still working on it are done.
    func close() {
        lock.lock()
        body = nil
        while working > 0 { lock.wait() }
        lock.unlock()
    }

    private func enter() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard body != nil else { return false }
        working += 1
        return true
    }

    /// In a function of its own, so that its copy of the body is gone when `help` says the work is done.
    private func work() {
        lock.lock()
        let body = self.body
        lock.unlock()
        guard let body else { return }
        while let index = next() {
            body(index)
        }
    }

    private func next() -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard dealt < count else { return nil }
        dealt += 1
        return dealt - 1
    }
}
