@testable import KoeDSP
import Testing

@Suite struct NoiseStreamTests {
    @Test func slicesFollowRandnsSequence() {
        let stream = NoiseStream(maximumTake: 700)
        var randn = Randn()
        for count in [0, 1, 5, 700, 256, 255, 3, 699, 64, 700, 700, 1] {
            let slice = Array(stream.take(count))
            #expect(slice == (0..<count).map { _ in randn.next() }, "take(\(count))")
        }
    }

    @Test func restartSkipsAsDrawingWould() {
        let stream = NoiseStream(maximumTake: 100)
        _ = stream.take(90)
        stream.restart(skipping: 1234)
        var randn = Randn()
        randn.skip(1234)
        #expect(Array(stream.take(100)) == (0..<100).map { _ in randn.next() })
        stream.restart()
        var fresh = Randn()
        #expect(stream.take(1)[0] == fresh.next())
    }

    @Test func slicesPastThePrefixFollowRandnsSequence() {
        let stream = NoiseStream(maximumTake: 700)
        let first = RandnPrefix.count - 650
        stream.restart(skipping: first)
        var randn = Randn()
        randn.skip(first)
        for count in [600, 1, 100, 700, 3, 699, 256] {
            let slice = Array(stream.take(count))
            #expect(slice == (0..<count).map { _ in randn.next() }, "take(\(count))")
        }
        stream.restart(skipping: 10)
        var fresh = Randn()
        fresh.skip(10)
        #expect(Array(stream.take(5)) == (0..<5).map { _ in fresh.next() })
    }
}
