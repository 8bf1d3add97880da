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

    /// Returns nothing until collected or ended, as a stage whose work runs late would.
    private final class LateStage: BackgroundStage {
        private var held: [Double] = []
        let latency = 0

        func process(_ input: [Double], isFinal: Bool, into output: inout [Double]) throws {
            held += input
            if isFinal { try collect(into: &output) }
        }

        func collect(into output: inout [Double]) throws {
            output += held
            held = []
        }
    }

    @Test func collectGathersLateOutputThroughTheRestOfTheChain() throws {
        let input = interleavedStereo()
        let late = try Pipeline(channels: 2) { [LateStage()] + (try makeChain()) }
        let prompt = try Pipeline(channels: 2, makeChain: makeChain)
        var fromLate: [Double] = []
        var fromPrompt: [Double] = []
        for start in stride(from: 0, to: input.count, by: 1000) {
            let chunk = Array(input[start..<min(input.count, start + 1000)])
            #expect(try late.process(interleaved: chunk, isFinal: false).isEmpty)
            fromLate += try late.collect()
            fromPrompt += try prompt.process(interleaved: chunk, isFinal: false)
            #expect(fromLate == fromPrompt)
        }
        #expect(try late.process(interleaved: [], isFinal: true) == prompt.process(interleaved: [], isFinal: true))
    }

    @Test(arguments: [1, 17, 4096])
    func vocoderThreadsDoNotChangeTheOutput(chunkFrames: Int) throws {
        let input = Signals.vowel(f0: 140, sampleRate: 16000, duration: 0.4) + Signals.whiteNoise(count: 2000, amplitude: 0.05)
        var voice = VoiceSettings()
        voice.pitchRatio = 1.2
        func run(threads: Int) throws -> [Double] {
            let pipeline = try Pipeline(channels: 1) { [VoiceShift(sampleRate: 16000, voice: voice, threads: threads)] }
            var output: [Double] = []
            for start in stride(from: 0, to: input.count, by: chunkFrames) {
                output += try pipeline.process(interleaved: Array(input[start..<min(input.count, start + chunkFrames)]), isFinal: false)
                if start % (chunkFrames * 3) == 0 { output += try pipeline.collect() }
            }
            return output + (try pipeline.process(interleaved: [], isFinal: true))
        }
        let single = try run(threads: 1)
        #expect(single.count == input.count)
        #expect(try run(threads: 2) == single)
    }

    @Test func emptyChainPassesAudioThrough() throws {
        let pipeline = try Pipeline(channels: 2) { [] }
        let input = interleavedStereo()
        #expect(pipeline.isPassThrough)
        #expect(try pipeline.process(interleaved: input, isFinal: true) == input)
    }
}
