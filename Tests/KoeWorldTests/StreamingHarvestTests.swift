import Glibc
import Testing
import TestSupport
@testable import KoeWorld

@Suite struct StreamingHarvestTests {
    /// Two glides of ten harmonics, F0 rising then falling, between pauses: a frame's F0 changes by about 0.1 %
    /// a millisecond, so frames taken from the wrong place on Harvest's grid show.
    private func signal(sampleRate: Int) -> [Double] {
        let pause = [Double](repeating: 0, count: sampleRate / 10)
        return pause + glide(from: 100, to: 220, duration: 0.8, sampleRate: sampleRate) + pause
            + glide(from: 250, to: 150, duration: 0.6, sampleRate: sampleRate) + pause
    }

    private func glide(from start: Double, to end: Double, duration: Double, sampleRate: Int) -> [Double] {
        let count = Int(duration * Double(sampleRate))
        var phase = 0.0
        return (0..<count).map { n in
            phase += 2 * Double.pi * (start + (end - start) * Double(n) / Double(count)) / Double(sampleRate)
            return (1...10).reduce(0.0) { sum, k in sum + 0.3 * sin(Double(k) * phase) / Double(k) }
        }
    }

    /// Each frame's candidates, computed once from segments of a stream that arrives in steps (the last frames of
    /// each step computed again with the next), are those of the whole signal, at a rate whose 1 ms grid falls
    /// between samples too: the same candidates in the same order, to within what each segment's own mean moves.
    @Test(arguments: [16000, 44100])
    func candidatesComputedOnceAreThoseOfTheWholeSignal(sampleRate: Int) throws {
        // Whole-signal Harvest decimates the samples that count back from its last one: a length one past a
        // multiple of the factor keeps those the stream keeps.
        var input = signal(sampleRate: sampleRate)
        let factor = Harvest.DecimatedSignal.factor(from: sampleRate)
        input += [Double](repeating: 0, count: (factor + 1 - input.count % factor) % factor)
        let harvest = try Harvest(sampleRate: sampleRate)
        let frames = F0Contour.frameCount(samples: input.count, sampleRate: sampleRate, framePeriod: 1)
        let whole = harvest.candidates(input, frameTimes: (0..<frames).map { Double($0) / 1000 })

        let stream = StreamingHarvest(harvest: harvest)
        let step = sampleRate * 337 / 1000
        input.withUnsafeBufferPointer { samples in
            for end in stride(from: step, to: input.count, by: step) {
                let through = F0Contour.frameCount(samples: end, sampleRate: sampleRate, framePeriod: 1)
                stream.computeCandidates(through: through, samples: samples, samplesStart: 0, sampleEnd: end, isEnd: false)
                #expect(stream.finalEnd < through)
            }
            stream.computeCandidates(through: frames, samples: samples, samplesStart: 0, sampleEnd: input.count, isEnd: true)
        }
        #expect(stream.finalEnd == frames)
        let streamed = stream.candidates(0..<frames)
        // Frames at the edges of silence, where a segment's mean and WORLD's Nyquist bin decide, may differ, and
        // candidates of channels at the edge of a run.
        var differing: [Int] = []
        var voiced = 0
        for frame in 0..<frames {
            let expected = whole.f0.row(frame).filter { $0 > 0 }
            let found = streamed.f0.row(frame).filter { $0 > 0 }
            voiced += expected.isEmpty ? 0 : 1
            if found.count != expected.count || zip(found, expected).contains(where: { abs($0 - $1) > 1e-3 * $1 }) {
                differing.append(frame)
            }
        }
        #expect(voiced > frames / 2)
        #expect(differing.count <= frames / 10, "\(differing.count) frames of \(frames) differ: \(differing)")
    }

    /// Channels and frames shared among threads give the very candidates of one thread.
    @Test(arguments: [2, 3])
    func threadsChangeNoCandidate(threads: Int) throws {
        let sampleRate = 16000
        let input = signal(sampleRate: sampleRate)
        let harvest = try Harvest(sampleRate: sampleRate)
        let frames = F0Contour.frameCount(samples: input.count, sampleRate: sampleRate, framePeriod: 1)
        let times = (0..<frames).map { Double($0) / 1000 }
        let alone = harvest.candidates(input, frameTimes: times)
        let shared = harvest.candidates(input, frameTimes: times, threads: threads)
        #expect(shared.f0.storage == alone.f0.storage && shared.scores.storage == alone.scores.storage)
        #expect(alone.f0.storage.contains { $0 > 0 })
    }
}
