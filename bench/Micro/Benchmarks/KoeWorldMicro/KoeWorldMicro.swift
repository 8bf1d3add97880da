// One frame's work of each WORLD stage, in steady state: the stage objects, their workspaces and the input are
// made before measuring, and warm-up iterations let reused buffers reach their size. Each iteration is what
// the streaming analysis and synthesis do per frame (or per DIO block), so `mallocCountTotal` is the
// allocations per frame (or block) in steady state; `Thresholds/` holds 0 for each, the bar (the
// p90, as a frame with a window length not met before still fills a cache once).
//
// CheapTrick, D4C and StoneMask are measured on a one-frame contour through the calls `StreamingAnalyzer`
// makes for each block of frames DIO settles: CheapTrick's and D4C's `estimate(into:)` with a matrix kept
// from call to call, and a `StoneMask.Refiner` kept likewise; the 64-frame variants show whether
// allocations grow with a call's frames or come once per call. The analyzer hands each block back for reuse
// once done with it, as `VoiceShift` does. `VoiceShift-chunk` measures the whole vocoder stage on 20 ms
// chunks (four frames): its bar is 1, the array of output samples `process` returns for each chunk.
// `VoiceChanger-block` is what an audio callback (an LV2 plugin's run) costs: 480-frame blocks of 48 kHz mono
// through the library's pointer form on one thread, pitch 1.2 and formant 1.1; its bar is 0. It warms up over the
// speech twice: StoneMask keeps a window for each length F0 asks for, made the first time that length comes.
// `VoiceChanger-aiming-block` is the same with the kawaii preset aiming from the profile the changer estimates as
// the speech runs; its bar is 0 too.
//
// The per-stage benchmarks call koe's `package` declarations (this package is built with koe's package name).

import Benchmark
import Foundation
import Koe
import KoeIO
import KoeStages
import KoeWorld

/// `body`'s value; a benchmark whose setup fails stops the run.
func setUp<Value>(_ what: String, _ body: () throws -> Value) -> Value {
    do {
        return try body()
    } catch {
        fatalError("\(what) failed: \(error)")
    }
}

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
        let (samples, sampleRate) = setUp("reading \(path)") {
            let file = try AudioFile(reading: path)
            return (try file.readChannel(0), file.sampleRate)
        }
        self.samples = samples
        self.sampleRate = sampleRate
        let refined = setUp("analysing the speech") {
            try StoneMask(sampleRate: sampleRate).refine(samples, contour: try Dio(sampleRate: sampleRate).estimate(samples))
        }
        let middle = refined.frameCount / 2
        contour = refined
        voicedFrame = (middle..<refined.frameCount).first { refined.f0[$0] > 0 } ?? middle
    }

    /// The contour of `count` frames from the voiced frame on, timed as in the whole signal.
    func frames(_ count: Int) -> F0Contour {
        let range = voicedFrame..<min(contour.frameCount, voicedFrame + count)
        return setUp("cutting a contour") { try F0Contour(time: Array(contour.time[range]), f0: Array(contour.f0[range])) }
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
    // Kept to one thread, as a single-threaded `StreamingAnalyzer` keeps them.
    let cheapTrick = setUp("CheapTrick") { try CheapTrick(sampleRate: rate, options: .init(), shared: false) }
    let d4c = setUp("D4C") { try D4C(sampleRate: rate, fftSize: cheapTrick.fftSize, shared: false) }
    // Kept from iteration to iteration, as the analyzer keeps them from block to block.
    let output = Output()
    let refiner = StoneMask.Refiner(sampleRate: rate)

    for (suffix, contour) in [("frame", speech.frames(1)), ("64-frames", speech.frames(64))] {
        Benchmark("CheapTrick-\(suffix)") { benchmark in
            for _ in benchmark.scaledIterations {
                speech.samples.withUnsafeBufferPointer { cheapTrick.estimate($0, contour: contour, into: &output.matrix) }
                blackHole(output.matrix.rows)
            }
        }

        Benchmark("D4C-\(suffix)") { benchmark in
            for _ in benchmark.scaledIterations {
                speech.samples.withUnsafeBufferPointer { d4c.estimate($0, contour: contour, into: &output.matrix) }
                blackHole(output.matrix.rows)
            }
        }

        Benchmark("StoneMask-\(suffix)") { benchmark in
            for _ in benchmark.scaledIterations {
                speech.samples.withUnsafeBufferPointer { refiner.refine($0, contour: contour, into: &output.f0) }
                blackHole(output.f0.count)
            }
        }
    }

    // Synthesis appends the frames of a voiced stretch in turn, draining the samples each one completes into
    // a buffer emptied (capacity kept) before every frame, as a streaming consumer would.
    let stretch = speech.frames(200)
    let spectrogram = setUp("the stretch's envelope") { try cheapTrick.estimate(speech.samples, contour: stretch) }
    let aperiodicity = setUp("the stretch's aperiodicity") { try d4c.estimate(speech.samples, contour: stretch) }
    let synthesizer = setUp("the synthesizer") {
        try StreamingSynthesizer(sampleRate: rate, framePeriod: 5.0, fftSize: cheapTrick.fftSize)
    }
    let synthesisFrames = Cursor(count: stretch.frameCount)
    var synthesized: [Double] = []
    synthesized.reserveCapacity(4 * cheapTrick.fftSize)
    Benchmark("Synthesis-frame") { benchmark in
        for _ in benchmark.scaledIterations {
            let frame = synthesisFrames.next()
            spectrogram.withRow(frame) { envelope in
                aperiodicity.withRow(frame) { aperiodicity in
                    synthesizer.push(f0: stretch.f0[frame], spectrum: envelope, aperiodicity: aperiodicity)
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

    // Live mode (issue 12): 5 ms blocks, each settling one frame from final and provisional band signals.
    var liveOptions = StreamingDio.Options()
    liveOptions.live = true
    let liveDio = StreamingDio(sampleRate: rate, options: liveOptions)
    let liveBlocks = speech.blocks(of: liveDio.blockLength)
    let liveCursor = Cursor(count: liveBlocks.count)
    Benchmark("StreamingDio-live-block") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(liveDio.push(liveBlocks[liveCursor.next()]).count)
        }
    }

    // The whole streaming analysis of one DIO block: DIO, then StoneMask, CheapTrick and D4C of the frames the
    // block settles (about four at 5 ms frames and 20 ms blocks), as `koe convert` runs it in a pipe; and of
    // one 4096-sample chunk, as it reads files, which settles several blocks in one push.
    for (suffix, length) in [("block", dio.blockLength), ("chunk", 4096)] {
        let analyzer = setUp("the analyzer") { try StreamingAnalyzer(sampleRate: rate) }
        let analyzerBlocks = speech.blocks(of: length)
        let analyzerCursor = Cursor(count: analyzerBlocks.count)
        Benchmark("StreamingAnalyzer-\(suffix)") { benchmark in
            for _ in benchmark.scaledIterations {
                do {
                    try analyzer.push(analyzerBlocks[analyzerCursor.next()], into: &output.blocks)
                } catch {
                    fatalError("streaming analysis failed: \(error)")
                }
                blackHole(output.blocks.count)
                output.blocks.forEach(analyzer.recycler.recycle)
                output.blocks.removeAll(keepingCapacity: true)
            }
        }
    }

    // The whole vocoder stage of `koe convert --pitch 1.2 --formant 1.1 --threads 1`, one 20 ms chunk at a time.
    var voice = VoiceSettings()
    voice.pitch = 1.2
    voice.formant = 1.1
    let voiceShift = setUp("the vocoder stage") { try VoiceShift(sampleRate: rate, voice: voice) }
    let chunks = speech.blocks(of: dio.blockLength)
    let chunkCursor = Cursor(count: chunks.count)
    Benchmark("VoiceShift-chunk") { benchmark in
        for _ in benchmark.scaledIterations {
            do {
                blackHole(try voiceShift.process(chunks[chunkCursor.next()]))
            } catch {
                fatalError("voice shift failed: \(error)")
            }
        }
    }

    // The library's live door, as an audio callback drives it: a block of 10 ms in, as many frames out.
    let changer = setUp("the voice changer") { try VoiceChanger(sampleRate: rate, channels: 1) }
    changer.voice.pitch = 1.2
    changer.voice.formant = 1.1
    let blockFrames = 480
    // Pointers made before measuring, as a host makes its buffers: the speech as floats, one block out.
    let speechFloats = UnsafeMutableBufferPointer<Float>.allocate(capacity: speech.samples.count)
    _ = speechFloats.initialize(from: speech.samples.lazy.map(Float.init))
    let inputChannels = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 1)
    let outputChannels = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
    outputChannels[0] = .allocate(capacity: blockFrames)
    var passes = configuration
    passes.warmupIterations = 2 * speechFloats.count / blockFrames
    let twoPasses = passes
    /// `changer` fed the speech block by block, as a host's callback feeds it.
    func blocks(_ name: String, _ changer: VoiceChanger) {
        let cursor = Cursor(count: speechFloats.count / blockFrames)
        Benchmark(name, configuration: twoPasses) { benchmark in
            for _ in benchmark.scaledIterations {
                inputChannels[0] = UnsafePointer(speechFloats.baseAddress! + cursor.next() * blockFrames)
                do {
                    try changer.process(inputChannels, into: outputChannels, frames: blockFrames)
                } catch {
                    fatalError("\(name) failed: \(error)")
                }
                blackHole(outputChannels[0][0])
            }
        }
    }
    blocks("VoiceChanger-block", changer)

    // The same with a voice preset that aims at its target: the speaker's profile estimated as the voice runs,
    // its frames analysed in the blocks that complete them, and the ratios following it.
    let aiming = setUp("the aiming voice changer") { try VoiceChanger(sampleRate: rate, channels: 1) }
    setUp("the kawaii preset") { try aiming.apply(preset: "kawaii") }
    blocks("VoiceChanger-aiming-block", aiming)
}

/// What the benchmarks write into, kept from iteration to iteration.
final class Output {
    var matrix = Matrix()
    var f0: [Double] = []
    var blocks: [StreamingAnalyzer.Block] = []
}
