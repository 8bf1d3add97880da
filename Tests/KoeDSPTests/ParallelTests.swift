import Foundation
@testable import KoeDSP
import Testing

@Suite struct ParallelTests {
    private final class Counter {
        var made = 0
    }

    @Test func rangesCoverEveryIndexOnce() {
        for threads in [1, 2, 3, 8] {
            for count in [0, 1, 5, 100, 1001] {
                var hits = [Int](repeating: 0, count: count)
                hits.withUnsafeMutableBufferPointer { hits in
                    Parallel.forEachRange(count, threads: threads, minimumLength: 4) { range in
                        for index in range { hits[index] += 1 }
                    }
                }
                #expect(hits.allSatisfy { $0 == 1 }, "threads \(threads), count \(count)")
            }
        }
    }

    @Test func eachIndexRunsOnce() {
        for threads in [1, 2, 3] {
            for count in [0, 1, 5, 100] {
                var hits = [Int](repeating: 0, count: count)
                hits.withUnsafeMutableBufferPointer { hits in
                    Parallel.forEach(count, threads: threads) { hits[$0] += 1 }
                }
                #expect(hits.allSatisfy { $0 == 1 }, "threads \(threads), count \(count)")
            }
        }
    }

    @Test func oneThreadRunsOnceOnTheWholeRange() {
        var ranges: [Range<Int>] = []
        Parallel.forEachRange(50, threads: 1) { ranges.append($0) }
        #expect(ranges == [0..<50])
    }

    @Test func poolReusesWorkspaces() {
        let pool = WorkspacePool { Counter() }
        let first = pool.withWorkspace { workspace in
            workspace.made += 1
            return ObjectIdentifier(workspace)
        }
        let second = pool.withWorkspace { ObjectIdentifier($0) }
        #expect(first == second)
    }

    @Test func poolGivesAThreadTheWorkspaceItUsedLast() {
        let pool = WorkspacePool { Counter() }
        let arrived = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let done = DispatchSemaphore(value: 0)
        let lock = NSLock()
        nonisolated(unsafe) var seen: [[ObjectIdentifier]] = [[], []]
        for side in 0..<2 {
            Thread {
                // Both hold one at once, so the pool has two; then each takes one again, some rounds over.
                let first = pool.withWorkspace { workspace in
                    (side == 0 ? arrived.0 : arrived.1).signal()
                    (side == 0 ? arrived.1 : arrived.0).wait()
                    return ObjectIdentifier(workspace)
                }
                let later = (0..<50).map { _ in pool.withWorkspace { ObjectIdentifier($0) } }
                lock.lock()
                seen[side] = [first] + later
                lock.unlock()
                done.signal()
            }.start()
        }
        done.wait()
        done.wait()
        lock.lock()
        defer { lock.unlock() }
        #expect(seen[0][0] != seen[1][0])
        #expect(seen.allSatisfy { Set($0).count == 1 })
    }

    @Test func poolHandsOutDistinctWorkspacesAtOnce() {
        let pool = WorkspacePool { Counter() }
        let (outer, inner) = pool.withWorkspace { outer in
            (ObjectIdentifier(outer), pool.withWorkspace { ObjectIdentifier($0) })
        }
        #expect(outer != inner)
    }
}
