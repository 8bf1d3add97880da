@testable import Koe
import Testing
import TestSupport

@Suite struct EngineTests {
    private let sampleRate = 16000

    private func interleavedStereo() -> [Double] {
        let left = Signals.whiteNoise(count: 3000, seed: 1)
        let right = Signals.whiteNoise(count: 3000, seed: 2)
        return zip(left, right).flatMap { [$0, $1] }
    }

    /// EQ and gain, no vocoder: what a conversion plans for these settings.
    private func equalizerAndGain(threads: Int = 1) throws -> ConversionSettings {
        var settings = ConversionSettings()
        settings.equalizer = [try EqualizerBand(parsing: "peak:1000:6:1.4")]
        settings.gainDB = -3
        settings.limitsOutput = false
        settings.threads = threads
        return settings
    }

    private func engine(_ settings: ConversionSettings, channels: Int = 2) throws -> Engine {
        try Engine(
            sampleRate: sampleRate, channels: channels, settings: settings, isChangeable: false, delaysOutput: false,
            fullScale: 1)
    }

    private func run(_ engine: Engine, _ input: [Double], chunkFrames: Int, collectEvery: Int? = nil) throws -> [Double] {
        var output: [Double] = []
        var start = 0
        var chunks = 0
        while start < input.count {
            let end = min(input.count, start + chunkFrames * engine.channels)
            output += try engine.process(interleaved: Array(input[start..<end]))
            chunks += 1
            if let collectEvery, chunks % collectEvery == 0 { output += try engine.drain() }
            start = end
        }
        return output + (try engine.finishInterleaved())
    }

    @Test(arguments: [1, 17, 4096])
    func chunkingGivesTheWholeSignalResult(chunkFrames: Int) throws {
        let input = interleavedStereo()
        let settings = try equalizerAndGain()
        #expect(try run(engine(settings), input, chunkFrames: chunkFrames) == run(engine(settings), input, chunkFrames: input.count))
    }

    @Test func channelsAreProcessedIndependently() throws {
        let input = interleavedStereo()
        let stereo = try run(engine(equalizerAndGain()), input, chunkFrames: 256)
        let left = stride(from: 0, to: input.count, by: 2).map { input[$0] }
        let alone = try run(engine(equalizerAndGain(), channels: 1), left, chunkFrames: left.count)
        #expect(stride(from: 0, to: stereo.count, by: 2).map { stereo[$0] } == alone)
    }

    @Test func threadsDoNotChangeTheOutput() throws {
        let input = interleavedStereo()
        let single = try run(engine(equalizerAndGain(threads: 1)), input, chunkFrames: 512)
        let parallel = try run(engine(equalizerAndGain(threads: 2)), input, chunkFrames: 512)
        #expect(single == parallel)
        #expect(single.count == input.count)
    }

    @Test(arguments: [1, 17, 4096])
    func vocoderThreadsDoNotChangeTheOutput(chunkFrames: Int) throws {
        let input = Signals.vowel(f0: 140, sampleRate: sampleRate, duration: 0.4) + Signals.whiteNoise(count: 2000, amplitude: 0.05)
        func run(threads: Int) throws -> [Double] {
            var settings = ConversionSettings()
            settings.voice.pitch = 1.2
            settings.threads = threads
            return try self.run(engine(settings, channels: 1), input, chunkFrames: chunkFrames, collectEvery: 3)
        }
        let single = try run(threads: 1)
        #expect(single.count == input.count)
        #expect(try run(threads: 2) == single)
    }

    @Test func settingsThatChangeNothingPlanNoStageAndPassAudioThrough() throws {
        let engine = try engine(ConversionSettings())
        let input = interleavedStereo()
        #expect(engine.latency == 0)
        #expect(try run(engine, input, chunkFrames: input.count) == input)
    }

    /// A changeable engine keeps every stage, at identity, and delays its output by exactly its latency: the
    /// fixed delay a live changer promises whatever its settings.
    @Test func aChangeableEngineAtIdentityDelaysItsInputByItsLatency() throws {
        let input = Signals.vowel(f0: 140, sampleRate: sampleRate, duration: 0.3)
        let engine = try Engine.stream(sampleRate: sampleRate, channels: 1, analysis: AnalysisOptions(), threads: 1)
        #expect(engine.latency > 0)
        let output = try engine.process(planar: [input])[0]
        #expect(output == Array(repeating: 0, count: engine.latency) + input.prefix(input.count - engine.latency))
    }

    @Test func refusesChunksOfPartFrames() throws {
        #expect(throws: KoeError.self) { try engine(ConversionSettings()).process(interleaved: [0, 0, 0]) }
    }
}
