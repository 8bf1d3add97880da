// One frame's work of each WORLD stage, in steady state: the stage objects, their workspaces and the input are
// made before measuring, and warm-up iterations let reused buffers reach their size. Each iteration is what
// the streaming analysis and synthesis do per frame (or per DIO block), so `mallocCountTotal` is the
// allocations per frame (or block) in steady state; `Thresholds/` holds 0 for each, the bar.
//
// CheapTrick, D4C and StoneMask are measured through their public calls on a one-frame contour, the way
// `StreamingAnalyzer` calls CheapTrick and D4C for each block of frames DIO settles; the 64-frame variants
// show whether allocations grow with a call's frames or come once per call. (The stream refines F0 with a
// `StoneMask.Refiner` it keeps; the public `refine` makes one per call, so its per-call figure includes
// that setup. The analyzer benchmark measures the stream's own StoneMask.)

import Benchmark
import Foundation
import KoeIO
import KoeWorld

/// 48 kHz speech from the repository's samples, with DIO + StoneMask F0 computed once.
final class Speech {
    let samples: [Double]
    let sampleRate: Int
    let contour: F0Contour
    /// A voiced frame with voiced frames after it, in the middle of the speech.
    let voicedFrame: Int

    init() {
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let path = repository.appendingPathComponent("samples/en-f-48k.wav").path
        do {
            let file = try AudioFile(reading: path)
            samples = try file.readChannel(0)
            sampleRate = file.sampleRate
        } catch {
            fatalError("cannot read \(path): \(error)")
        }
        let raw = Dio(sampleRate: sampleRate).estimate(samples)
        let refined = StoneMask(sampleRate: sampleRate).refine(samples, contour: raw)
        let middle = refined.frameCount / 2
        contour = refined
        voicedFrame = (middle..<refined.frameCount).first { refined.f0[$0] > 0 } ?? middle
    }

    /// The contour of `count` frames from the voiced frame on, timed as in the whole signal.
    func frames(_ count: Int) -> F0Contour {
        let range = voicedFrame..<min(contour.frameCount, voicedFrame + count)
        return F0Contour(time: Array(contour.time[range]), f0: Array(contour.f0[range]))
    }

    /// The speech cut into consecutive blocks of `length` samples (the last partial block left out).
    func blocks(of length: Int) -> [[Double]] {
        stride(from: 0, to: samples.count - length + 1, by: length).map { Array(samples[$0..<($0 + length)]) }
    }
}

/// A cycling position over `count` items, so an iteration can take the next block or frame.
final class Cursor {
    private let count: Int
    private var position = 0

    init(count: Int) {
        self.count = count
    }

    func next() -> Int {
        defer { position = (position + 1) % count }
        return position
    }
}

let configuration = Benchmark.Configuration(
    metrics: [.wallClock, .mallocCountTotal],
    warmupIterations: 20,
    maxDuration: .seconds(2),
    maxIterations: 2_000
)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = configuration
    let speech = Speech()
    let rate = speech.sampleRate
    let cheapTrick = CheapTrick(sampleRate: rate)
    let d4c = D4C(sampleRate: rate, fftSize: cheapTrick.fftSize)
    let oneFrame = speech.frames(1)
    let manyFrames = speech.frames(64)

    Benchmark("CheapTrick-frame") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(cheapTrick.estimate(speech.samples, contour: oneFrame))
        }
    }

    Benchmark("CheapTrick-64-frames") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(cheapTrick.estimate(speech.samples, contour: manyFrames))
        }
    }

    Benchmark("D4C-frame") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(d4c.estimate(speech.samples, contour: oneFrame))
        }
    }

    Benchmark("D4C-64-frames") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(d4c.estimate(speech.samples, contour: manyFrames))
        }
    }

    let stoneMask = StoneMask(sampleRate: rate)
    Benchmark("StoneMask-frame") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(stoneMask.refine(speech.samples, contour: oneFrame))
        }
    }

    Benchmark("StoneMask-64-frames") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(stoneMask.refine(speech.samples, contour: manyFrames))
        }
    }

    // Synthesis appends the frames of a voiced stretch in turn, draining the samples each one completes into
    // a buffer emptied (capacity kept) before every frame, as a streaming consumer would.
    let stretch = speech.frames(200)
    let spectrogram = cheapTrick.estimate(speech.samples, contour: stretch)
    let aperiodicity = d4c.estimate(speech.samples, contour: stretch)
    let synthesizer = StreamingSynthesizer(sampleRate: rate, framePeriod: 5.0, fftSize: cheapTrick.fftSize)
    let synthesisFrames = Cursor(count: stretch.frameCount)
    var synthesized: [Double] = []
    synthesized.reserveCapacity(4 * cheapTrick.fftSize)
    Benchmark("Synthesis-frame") { benchmark in
        for _ in benchmark.scaledIterations {
            let frame = synthesisFrames.next()
            spectrogram.withRow(frame) { envelope in
                aperiodicity.withRow(frame) { aperiodicity in
                    synthesizer.append(f0: stretch.f0[frame], spectrum: envelope, aperiodicity: aperiodicity)
                }
            }
            synthesized.removeAll(keepingCapacity: true)
            blackHole(synthesizer.drain(into: &synthesized))
        }
    }

    // DIO takes the speech one 20 ms block (its filter block) at a time, over and over.
    let dio = StreamingDio(sampleRate: rate)
    let dioBlocks = speech.blocks(of: dio.blockLength)
    let dioCursor = Cursor(count: dioBlocks.count)
    Benchmark("StreamingDio-block") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(dio.push(dioBlocks[dioCursor.next()]).count)
        }
    }

    // The whole streaming analysis of one DIO block: DIO, then StoneMask, CheapTrick and D4C of the frames the
    // block settles (about four at 5 ms frames and 20 ms blocks), as `koe convert` runs it.
    let analyzer = StreamingAnalyzer(sampleRate: rate)
    let analyzerBlocks = speech.blocks(of: dio.blockLength)
    let analyzerCursor = Cursor(count: analyzerBlocks.count)
    Benchmark("StreamingAnalyzer-block") { benchmark in
        for _ in benchmark.scaledIterations {
            do {
                blackHole(try analyzer.push(analyzerBlocks[analyzerCursor.next()]))
            } catch {
                fatalError("streaming analysis failed: \(error)")
            }
        }
    }
}
