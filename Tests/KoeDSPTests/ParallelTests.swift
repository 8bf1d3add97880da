import Foundation
import KoeDSP
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

    @Test func poolHandsOutDistinctWorkspacesAtOnce() {
        let pool = WorkspacePool { Counter() }
        let (outer, inner) = pool.withWorkspace { outer in
            (ObjectIdentifier(outer), pool.withWorkspace { ObjectIdentifier($0) })
        }
        #expect(outer != inner)
    }
}
