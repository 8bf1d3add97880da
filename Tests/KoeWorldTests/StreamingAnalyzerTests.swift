import Foundation
import Testing
import TestSupport
@testable import KoeWorld

@Suite struct StreamingAnalyzerTests {
    private let sampleRate = 16000

    private func signal() -> [Double] {
        Signals.vowel(f0: 140, sampleRate: sampleRate, duration: 0.6)
            + [Double](repeating: 0, count: 1600)
            + Signals.vowel(f0: 220, sampleRate: sampleRate, duration: 0.4)
    }

    private func analyze(
        _ signal: [Double], chunk: Int, options: AnalysisOptions = .init()
    ) throws -> [StreamingAnalyzer.Block] {
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate, options: options)
        return try pieces(of: signal, length: chunk).flatMap { try analyzer.push($0) } + analyzer.finish()
    }

    @Test(arguments: [1, 17, 4096], [false, true])
    func chunkingDoesNotChangeTheFrames(chunk: Int, live: Bool) throws {
        let input = signal()
        var options = AnalysisOptions()
        options.live = live
        let whole = try analyze(input, chunk: input.count, options: options)
        let chunked = try analyze(input, chunk: chunk, options: options)
        #expect(chunked.map(\.firstFrame) == whole.map(\.firstFrame))
        let (chunkedFrames, wholeFrames) = (frames(chunked), frames(whole))
        #expect(chunkedFrames.count == wholeFrames.count)
        if let (ours, theirs) = zip(chunkedFrames, wholeFrames).first(where: { $0 != $1 }) {
            let count = zip(ours, theirs).filter { $0 != $1 }.count
            Issue.record("frame \(ours[0]): F0 \(ours[1]) against \(theirs[1]); \(count) values differ")
        }
    }

    /// Each frame's F0, envelope and aperiodicity, whichever block it came in.
    private func frames(_ blocks: [StreamingAnalyzer.Block]) -> [[Double]] {
        blocks.flatMap { block in
            (0..<block.f0.count).map { row in
                [Double(block.firstFrame + row), block.f0[row]]
                    + block.spectrogram.storage[(row * block.spectrogram.columns)..<((row + 1) * block.spectrogram.columns)]
                    + block.aperiodicity.storage[(row * block.aperiodicity.columns)..<((row + 1) * block.aperiodicity.columns)]
            }
        }
    }

    @Test(arguments: [17, 4096])
    func chunkingDoesNotChangeHarvestFrames(chunk: Int) throws {
        var options = AnalysisOptions()
        options.f0Method = .harvest
        let input = Signals.vowel(f0: 180, sampleRate: sampleRate, duration: 0.4)
        let whole = try analyze(input, chunk: input.count, options: options)
        let chunked = try analyze(input, chunk: chunk, options: options)
        #expect(chunked.map(\.firstFrame) == whole.map(\.firstFrame))
        #expect(chunked.map(\.f0) == whole.map(\.f0))
        #expect(chunked.map(\.spectrogram) == whole.map(\.spectrogram))
        #expect(chunked.map(\.aperiodicity) == whole.map(\.aperiodicity))
    }

    /// Everything the blocks hold, block by block.
    private func contents(_ blocks: [StreamingAnalyzer.Block]) -> [[Double]] {
        blocks.flatMap { [[Double($0.firstFrame)], $0.f0, $0.spectrogram.storage, $0.aperiodicity.storage] }
    }

    @Test(arguments: [1, 17, 4096])
    func threadsDoNotChangeTheFrames(chunk: Int) throws {
        let input = signal()
        let single = contents(try analyze(input, chunk: input.count))
        for threads in [2, 3] {
            var options = AnalysisOptions()
            options.threads = threads
            let shared = contents(try analyze(input, chunk: chunk, options: options))
            #expect(shared == single, "\(threads) threads")
        }
    }

    /// Blocks handed back lend their arrays to later blocks: whether the consumer copied out what they held
    /// (the arrays are then reused in place) or keeps the blocks themselves (which must stay as they were).
    @Test(arguments: [AnalysisOptions.F0Method.dio, .harvest], [false, true])
    func recyclingBlocksDoesNotChangeTheFrames(method: AnalysisOptions.F0Method, keepsBlocks: Bool) throws {
        var options = AnalysisOptions()
        options.f0Method = method
        let input = signal()
        let expected = contents(try analyze(input, chunk: input.count, options: options))
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate, options: options)
        var kept: [StreamingAnalyzer.Block] = []
        var copied: [[Double]] = []
        var blocks: [StreamingAnalyzer.Block] = []
        for piece in pieces(of: input, length: 320) {
            try analyzer.push(piece, into: &blocks)
            if keepsBlocks {
                kept += blocks
            } else {
                copied += contents(blocks).map { values in values.map { $0 } }
            }
            blocks.forEach(analyzer.recycler.recycle)
            blocks.removeAll(keepingCapacity: true)
        }
        let last = contents(try analyzer.finish())
        #expect((keepsBlocks ? contents(kept) : copied) + last == expected)
    }

    @Test(arguments: [AnalysisOptions.F0Method.dio, .harvest])
    func threadsDoNotChangeTheFramesOfABigPush(method: AnalysisOptions.F0Method) throws {
        // 48 kHz, where D4C's love train scores frames; a whole-signal push settles many groups at once, and
        // a lone Harvest block shares its frames among the threads.
        let rate = 48000
        let input = Signals.vowel(f0: 140, sampleRate: rate, duration: 0.7)
            + Signals.whiteNoise(count: rate / 5, amplitude: 0.05)
            + Signals.vowel(f0: 210, sampleRate: rate, duration: 0.5, formants: [500, 1500, 2500])
        var options = AnalysisOptions()
        options.f0Method = method
        func blocks(threads: Int, chunk: Int) throws -> [StreamingAnalyzer.Block] {
            options.threads = threads
            let analyzer = try StreamingAnalyzer(sampleRate: rate, options: options)
            var blocks: [StreamingAnalyzer.Block] = []
            for start in stride(from: 0, to: input.count, by: chunk) {
                blocks += try analyzer.push(Array(input[start..<min(input.count, start + chunk)]))
            }
            return blocks + (try analyzer.finish())
        }
        let single = try blocks(threads: 1, chunk: 4096)
        #expect(single.contains { $0.f0.contains { $0 > 0 } && $0.aperiodicity.storage.contains { $0 < 0.5 } })
        #expect(try contents(blocks(threads: 2, chunk: input.count)) == contents(single))
        #expect(try contents(blocks(threads: 3, chunk: 4096)) == contents(single))
    }

    @Test(arguments: [AnalysisOptions.F0Method.dio, .harvest])
    func pendingBlocksAnalysedLaterAndElsewhereGiveWhatPushGives(method: AnalysisOptions.F0Method) throws {
        var options = AnalysisOptions()
        options.f0Method = method
        options.harvestBlock = 200
        let input = signal()
        let pushed = try analyze(input, chunk: 777, options: options)
        // Blocks analysed on other threads share the analyser's workspaces and recycler: it must know (VoiceShift's
        // threads make theirs so too), or those are unlocked, as for one thread.
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate, options: options, blocksCrossThreads: true)
        var pending: [StreamingAnalyzer.PendingBlock] = []
        for start in stride(from: 0, to: input.count, by: 777) {
            pending += try analyzer.pushPending(Array(input[start..<min(input.count, start + 777)]))
        }
        pending += try analyzer.finishPending()
        #expect(pending.count == pushed.count && pending.count > 3)
        // Last first, on other threads, while the analyser has long discarded the samples.
        let blocks = pending
        var later = [StreamingAnalyzer.Block?](repeating: nil, count: blocks.count)
        later.withUnsafeMutableBufferPointer { later in
            nonisolated(unsafe) let later = later
            DispatchQueue.concurrentPerform(iterations: blocks.count) { index in
                let last = blocks.count - 1 - index
                later[last] = blocks[last].analyzed(threads: index % 2 + 1)
            }
        }
        #expect(contents(later.map { $0! }) == contents(pushed))
    }

    @Test func framesCoverWorldsFrameCount() throws {
        let input = signal()
        let blocks = try analyze(input, chunk: 1000)
        let frames = blocks.reduce(0) { $0 + $1.f0.count }
        #expect(frames == F0Contour.frameCount(samples: input.count, sampleRate: sampleRate, framePeriod: 5))
        #expect(zip(blocks.dropFirst(), blocks).allSatisfy { $0.firstFrame == $1.firstFrame + $1.f0.count })
    }

    @Test func equalsWholeSignalAnalysisOnVowelsBetweenPauses() throws {
        // Whole-signal DIO subtracts the mean, which a stream cannot know; here it is zero up to rounding.
        let pause = [Double](repeating: 0, count: 1600)
        let vowels = pause + signal() + pause
        let noisy = zip(vowels, Signals.whiteNoise(count: vowels.count, amplitude: 0.001)).map(+)
        let mean = noisy.reduce(0, +) / Double(noisy.count)
        let input = noisy.map { $0 - mean }
        let blocks = try analyze(input, chunk: 4096)
        let streamed = blocks.flatMap(\.f0)
        let raw = try Dio(sampleRate: sampleRate).estimate(input)
        let offline = try StoneMask(sampleRate: sampleRate).refine(input, contour: raw)
        #expect(streamed.count == offline.frameCount)
        for (frame, (a, b)) in zip(streamed, offline.f0).enumerated() {
            #expect((a > 0) == (b > 0), "frame \(frame)")
            #expect(abs(a - b) <= 1e-9 * b, "frame \(frame): \(a) vs \(b) Hz")
        }
        let spectrogram = try CheapTrick(sampleRate: sampleRate).estimate(input, contour: offline)
        for block in blocks {
            for row in 0..<block.f0.count {
                let frame = block.firstFrame + row
                let envelope = zip(block.spectrogram.row(row), spectrogram.row(frame))
                #expect(envelope.allSatisfy { abs($0 / $1 - 1) < 1e-6 }, "frame \(frame)")
            }
        }
    }

    @Test func returnsEachFrameWithinItsLatency() throws {
        let input = signal()
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate)
        try expectFramesWithinLatency(of: analyzer, input)
        // DIO's 80 ms look-ahead and one 20 ms block.
        #expect(analyzer.latency <= sampleRate / 10 + 1)
    }

    /// Harvest's first block, with nothing behind it, reaches as far ahead as later blocks reach behind: its
    /// latency counts that. Found by the API fuzzer: every Harvest `VoiceChanger` fell behind its latency bound.
    @Test(arguments: [nil, 200.0])
    func harvestReturnsEachFrameWithinItsLatency(block: Double?) throws {
        var options = AnalysisOptions()
        options.f0Method = .harvest
        options.harvestBlock = block
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate, options: options)
        try expectFramesWithinLatency(of: analyzer, signal() + signal())
    }

    /// Live: no more than D4C's reach at the 71 Hz floor (2.25 periods, 31.7 ms, and a few samples of rounding)
    /// and one 5 ms block.
    @Test func liveReturnsEachFrameWithinItsShorterLatency() throws {
        var options = AnalysisOptions()
        options.live = true
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate, options: options)
        try expectFramesWithinLatency(of: analyzer, signal())
        #expect(analyzer.latency <= Int(Double(sampleRate) * 0.0375))
    }

    private func expectFramesWithinLatency(of analyzer: StreamingAnalyzer, _ input: [Double]) throws {
        let samplesPerFrame = 5.0 * Double(sampleRate) / 1000
        var returned = 0
        var end = 0
        for piece in pieces(of: input, length: 37) {
            end += piece.count
            returned += try analyzer.push(piece).reduce(0) { $0 + $1.f0.count }
            let due = Int((Double(end - analyzer.latency) / samplesPerFrame).rounded(.down)) + 1
            #expect(returned >= due, "after \(end) samples")
        }
    }

    @Test func keepsOnlyOneSegmentOfSamples() throws {
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate)
        let chunk = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.25)
        var largest = 0
        for _ in 0..<12 {
            _ = try analyzer.push(chunk)
            largest = max(largest, analyzer.retainedSampleCount)
        }
        #expect(largest < chunk.count + analyzer.latency * 2)
    }

    @Test func refusesNonFiniteSamples() throws {
        let analyzer = try StreamingAnalyzer(sampleRate: sampleRate)
        #expect(throws: WorldError.nonFiniteSample(index: 3)) {
            _ = try analyzer.push([0, 0, 0, .nan])
        }
    }

    /// Shorter than one window of whole-signal DIO and Harvest (three periods of the F0 floor), a stream is
    /// analysed as their unchecked forms, StoneMask, CheapTrick and D4C analyse it whole: WORLD's way, each frame's
    /// safeguard noise starting at WORLD's seed as in any stream.
    @Test(arguments: [16000, 44100], [AnalysisOptions.F0Method.dio, .harvest])
    func aStreamShorterThanAWindowIsAnalysedAsWorldDoes(rate: Int, method: AnalysisOptions.F0Method) throws {
        let shortest = SignalRequirements.minimumLength(sampleRate: rate, f0Floor: 71)
        var options = AnalysisOptions()
        options.f0Method = method
        for length in [1, 2, 441, shortest - 1] {
            let input = Array(Signals.vowel(f0: 150, sampleRate: rate, duration: 0.1).prefix(length))
            let contour = switch method {
            case .dio: try StoneMask(sampleRate: rate).refine(input, contour: Dio(sampleRate: rate).estimate(unchecked: input))
            case .harvest: try Harvest(sampleRate: rate).estimate(unchecked: input)
            }
            let cheapTrick = try CheapTrick(sampleRate: rate, options: .init(), shared: false, noise: .eachFrame)
            let spectrogram = try cheapTrick.estimate(input, contour: contour)
            let aperiodicity = try D4C(sampleRate: rate, fftSize: cheapTrick.fftSize, shared: false, noise: .eachFrame)
                .estimate(input, contour: contour)
            for chunk in [1, length] {
                let analyzer = try StreamingAnalyzer(sampleRate: rate, options: options)
                var blocks: [StreamingAnalyzer.Block] = []
                for start in stride(from: 0, to: length, by: chunk) {
                    blocks += try analyzer.push(Array(input[start..<min(length, start + chunk)]))
                }
                blocks += try analyzer.finish()
                let context = "\(length) samples in chunks of \(chunk)"
                #expect(blocks.flatMap(\.f0) == contour.f0, "\(context)")
                #expect(blocks.flatMap(\.spectrogram.storage) == spectrogram.storage, "\(context)")
                #expect(blocks.flatMap(\.aperiodicity.storage) == aperiodicity.storage, "\(context)")
            }
        }
    }

    @Test func liveAnalysesAStreamShorterThanAWindow() throws {
        var options = AnalysisOptions()
        options.live = true
        for length in [1, 2, 441] {
            let analyzer = try StreamingAnalyzer(sampleRate: sampleRate, options: options)
            let blocks = try analyzer.push(Array(signal().prefix(length))) + analyzer.finish()
            #expect(blocks.flatMap(\.f0).count == F0Contour.frameCount(samples: length, sampleRate: sampleRate, framePeriod: 5))
            #expect(blocks.allSatisfy { $0.spectrogram.storage.allSatisfy { $0.isFinite } && $0.aperiodicity.storage.allSatisfy { $0.isFinite } })
        }
    }

    @Test func anEmptyStreamHasNoFrames() throws {
        #expect(try StreamingAnalyzer(sampleRate: sampleRate).finish().isEmpty)
    }
}
