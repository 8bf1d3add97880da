import Foundation
@testable import KoeDSP
import Testing

@Suite struct WorkerPoolTests {
    /// A count that threads raise and wait on, with a deadline, so a test that would deadlock fails instead of
    /// hanging.
    final class Tally: @unchecked Sendable {
        private let lock = Lock()
        private var count = 0

        func add() {
            lock.withLock { count += 1 }
            lock.broadcast()
        }

        var value: Int { lock.withLock { count } }

        /// True once the count reaches `target`; false if `seconds` pass first.
        func wait(for target: Int, seconds: Double) -> Bool {
            let deadline = monotonicSeconds() + seconds
            lock.lock()
            defer { lock.unlock() }
            while count < target {
                guard lock.wait(until: deadline) else { return count >= target }
            }
            return true
        }
    }

    /// Every task waits until all of them have started: on a pool of fewer threads than tasks (a pool of one
    /// thread per core, say) none could ever finish. This pool starts each task at once.
    @Test func tasksThatWaitForEachOtherAllFinish() {
        let pool = WorkerPool(idleSeconds: 1)
        let tasks = 4 * ProcessInfo.processInfo.activeProcessorCount + 48
        let started = Tally(), finished = Tally()
        for _ in 0..<tasks {
            pool.run {
                started.add()
                if started.wait(for: tasks, seconds: 60) { finished.add() }
            }
        }
        #expect(finished.wait(for: tasks, seconds: 60), "\(started.value) of \(tasks) tasks started, \(finished.value) finished")
    }

    /// Parallel loops inside parallel loops inside tasks of the shared pool, every level waiting for the one
    /// below, the innermost bodies all waiting for one another: the shape of a batch of conversions whose
    /// channels and vocoders fan out.
    @Test func nestedParallelLoopsThatWaitForEachOtherFinish() {
        let outer = 3, middle = 4, inner = 3
        let bodies = outer * middle * inner
        let arrived = Tally(), done = Tally()
        for _ in 0..<outer {
            WorkerPool.shared.run {
                Parallel.forEach(middle, threads: middle) { _ in
                    Parallel.forEach(inner, threads: inner) { _ in
                        arrived.add()
                        _ = arrived.wait(for: bodies, seconds: 60)
                    }
                }
                done.add()
            }
        }
        #expect(done.wait(for: outer, seconds: 60), "\(arrived.value) of \(bodies) bodies arrived")
    }

    @Test func aThreadIsReusedAndEndsWhenIdle() {
        let pool = WorkerPool(idleSeconds: 1)
        func waitUntil(_ condition: () -> Bool) {
            let deadline = monotonicSeconds() + 10
            while !condition() && monotonicSeconds() < deadline {
                usleep(1000)
            }
        }
        for round in 1...5 {
            let done = Tally()
            pool.run { done.add() }
            #expect(done.wait(for: 1, seconds: 10))
            waitUntil { pool.idleThreadCount == 1 }
            // One thread serves every round.
            #expect(pool.threadCount == 1, "round \(round)")
        }
        waitUntil { pool.threadCount == 0 }
        #expect(pool.threadCount == 0)
    }

    @Test func aTaskHandedToAThreadAsItTimesOutStillRuns() {
        // Idle times this short make `run` often take a thread that is just timing out.
        let pool = WorkerPool(idleSeconds: 0.001)
        let done = Tally()
        for round in 0..<300 {
            pool.run { done.add() }
            if round % 7 == 0 { usleep(1000) }
        }
        #expect(done.wait(for: 300, seconds: 30), "\(done.value) of 300 tasks ran")
    }
}
