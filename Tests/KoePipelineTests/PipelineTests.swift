import KoePipeline
import KoeStages
import Testing
import TestSupport

@Suite struct PipelineTests {
    private func interleavedStereo() -> [Double] {
        let left = Signals.whiteNoise(count: 3000, seed: 1)
        let right = Signals.whiteNoise(count: 3000, seed: 2)
        return zip(left, right).flatMap { [$0, $1] }
    }

    private func makeChain() throws -> [any Stage] {
        [try Equalizer(bands: [EqualizerBand(parsing: "peak:1000:6:1.4")], sampleRate: 16000), try Gain(decibels: -3)]
    }

    private func run(_ input: [Double], chunkFrames: Int) throws -> [Double] {
        let pipeline = try Pipeline(channels: 2, makeChain: makeChain)
        var output: [Double] = []
        var start = 0
        while start < input.count {
            let end = min(input.count, start + chunkFrames * 2)
            output += try pipeline.process(interleaved: Array(input[start..<end]), isFinal: false)
            start = end
        }
        return output + (try pipeline.process(interleaved: [], isFinal: true))
    }

    @Test(arguments: [1, 17, 4096])
    func chunkingGivesTheWholeSignalResult(chunkFrames: Int) throws {
        let input = interleavedStereo()
        #expect(try run(input, chunkFrames: chunkFrames) == run(input, chunkFrames: input.count))
    }

    @Test func channelsAreProcessedIndependently() throws {
        let input = interleavedStereo()
        let stereo = try run(input, chunkFrames: 256)
        let left = stride(from: 0, to: input.count, by: 2).map { input[$0] }
        let mono = try Pipeline(channels: 1, makeChain: makeChain)
        let alone = try mono.process(interleaved: left, isFinal: true)
        #expect(stride(from: 0, to: stereo.count, by: 2).map { stereo[$0] } == alone)
    }

    @Test func threadsDoNotChangeTheOutput() throws {
        let input = interleavedStereo()
        let single = try Pipeline(channels: 2, threads: 1, makeChain: makeChain)
        let parallel = try Pipeline(channels: 2, threads: 2, makeChain: makeChain)
        var first: [Double] = []
        var second: [Double] = []
        for start in stride(from: 0, to: input.count, by: 512) {
            let chunk = Array(input[start..<min(input.count, start + 512)])
            first += try single.process(interleaved: chunk, isFinal: false)
            second += try parallel.process(interleaved: chunk, isFinal: false)
        }
        first += try single.process(interleaved: [], isFinal: true)
        second += try parallel.process(interleaved: [], isFinal: true)
        #expect(first == second)
        #expect(first.count == input.count)
    }

    @Test func emptyChainPassesAudioThrough() throws {
        let pipeline = Pipeline(channels: 2) { [] }
        let input = interleavedStereo()
        #expect(pipeline.isPassThrough)
        #expect(try pipeline.process(interleaved: input, isFinal: true) == input)
    }
}
