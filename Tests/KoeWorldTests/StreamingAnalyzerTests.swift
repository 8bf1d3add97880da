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

    private func analyze(_ signal: [Double], chunk: Int) throws -> [StreamingAnalyzer.Block] {
        let analyzer = StreamingAnalyzer(sampleRate: sampleRate)
        var blocks: [StreamingAnalyzer.Block] = []
        var start = 0
        while start < signal.count {
            let end = min(signal.count, start + chunk)
            blocks += try analyzer.push(Array(signal[start..<end]))
            start = end
        }
        return blocks + (try analyzer.finish())
    }

    @Test(arguments: [1, 17, 4096])
    func chunkingDoesNotChangeTheFrames(chunk: Int) throws {
        let input = signal()
        let whole = try analyze(input, chunk: input.count)
        let chunked = try analyze(input, chunk: chunk)
        #expect(chunked.map(\.firstFrame) == whole.map(\.firstFrame))
        #expect(chunked.map(\.f0) == whole.map(\.f0))
        #expect(chunked.map(\.spectrogram) == whole.map(\.spectrogram))
        #expect(chunked.map(\.aperiodicity) == whole.map(\.aperiodicity))
    }

    @Test func framesCoverWorldsFrameCount() throws {
        let input = signal()
        let blocks = try analyze(input, chunk: 1000)
        let frames = blocks.reduce(0) { $0 + $1.f0.count }
        #expect(frames == F0Contour.frameCount(samples: input.count, sampleRate: sampleRate, framePeriod: 5))
        #expect(zip(blocks.dropFirst(), blocks).allSatisfy { $0.firstFrame == $1.firstFrame + $1.f0.count })
    }

    @Test func agreesWithWholeSignalAnalysisOnSteadyVowels() throws {
        let input = signal()
        let streamed = try analyze(input, chunk: 4096).flatMap(\.f0)
        let raw = Dio(sampleRate: sampleRate).estimate(input)
        let offline = StoneMask(sampleRate: sampleRate).refine(input, contour: raw).f0
        #expect(streamed.count == offline.count)
        let agreeing = zip(streamed, offline).filter { ($0 > 0) == ($1 > 0) }.count
        #expect(Double(agreeing) / Double(offline.count) > 0.99)
        let voicedErrors = zip(streamed, offline).filter { $0 > 0 && $1 > 0 }.map { abs($0 / $1 - 1) }
        #expect(voicedErrors.sorted()[voicedErrors.count * 99 / 100] < 1e-6)
    }

    @Test func keepsOnlyOneSegmentOfSamples() throws {
        let analyzer = StreamingAnalyzer(sampleRate: sampleRate)
        let chunk = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.25)
        var largest = 0
        for _ in 0..<40 {
            _ = try analyzer.push(chunk)
            largest = max(largest, analyzer.retainedSampleCount)
        }
        #expect(largest < chunk.count + analyzer.latency * 2)
    }

    @Test func refusesNonFiniteSamplesAndTooShortStreams() throws {
        let analyzer = StreamingAnalyzer(sampleRate: sampleRate)
        #expect(throws: WorldError.nonFiniteSample(index: 3)) {
            _ = try analyzer.push([0, 0, 0, .nan])
        }
        let short = StreamingAnalyzer(sampleRate: sampleRate)
        _ = try short.push([Double](repeating: 0.1, count: 100))
        #expect(throws: WorldError.self) { _ = try short.finish() }
    }
}
