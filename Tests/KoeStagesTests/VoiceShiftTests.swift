import Foundation
@testable import KoeDSP
import KoeStages
@testable import KoeWorld
import Testing
import TestSupport

@Suite struct VoiceShiftTests {
    private let sampleRate = 16000

    private func settings(_ change: (inout VoiceSettings) throws -> Void) rethrows -> VoiceSettings {
        var voice = VoiceSettings()
        try change(&voice)
        return voice
    }

    private func run(_ input: [Double], voice: VoiceSettings, chunk: Int, threads: Int = 1) throws -> [Double] {
        let stage = try VoiceShift(sampleRate: sampleRate, voice: voice, threads: threads)
        return try pieces(of: input, length: chunk).flatMap { try stage.process($0) } + stage.finish()
    }

    private func medianVoicedF0(_ signal: [Double]) throws -> Double {
        let contour = try Dio(sampleRate: sampleRate).estimate(signal)
        let voiced = try StoneMask(sampleRate: sampleRate).refine(signal, contour: contour).f0.filter { $0 > 0 }.sorted()
        return voiced.isEmpty ? 0 : voiced[voiced.count / 2]
    }

    @Test(arguments: [1, 17, 4096])
    func chunkingGivesTheWholeSignalResult(chunk: Int) throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        let voice = settings { $0.pitch = 1.3; $0.formant = 1.1 }
        #expect(try run(input, voice: voice, chunk: chunk) == run(input, voice: voice, chunk: input.count))
    }

    @Test(arguments: [1, 17, 4096])
    func threadsDoNotChangeTheOutput(chunk: Int) throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        let voice = settings { $0.pitch = 1.3; $0.formant = 1.1; $0.tempo = 0.9 }
        let single = try run(input, voice: voice, chunk: input.count)
        for threads in [2, 3] {
            #expect(try run(input, voice: voice, chunk: chunk, threads: threads) == single, "\(threads) threads")
        }
    }

    /// The F0 edits know each frame by its index in the stream, so chunks and threads cannot move them.
    @Test(arguments: [1, 17, 4096])
    func f0EditsAreTheSameForAnyChunkingAndThreads(chunk: Int) throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        let voice = try settings { voice in
            voice.pitchCurve = try PitchCurve(points: [.init(time: 0.1, ratio: 1), .init(time: 0.9, ratio: 1.5)])
            voice.snap = PitchSnap.Options(scale: try MusicalScale(parsing: "D:dorian"), speed: 20)
            voice.vibrato = Vibrato.Options(rate: 6, depth: 30)
            voice.tempo = 1.1
        }
        let whole = try run(input, voice: voice, chunk: input.count)
        let chunked = try run(input, voice: voice, chunk: chunk) == whole
        let threaded = try run(input, voice: voice, chunk: chunk, threads: 2) == whole
        #expect(chunked)
        #expect(threaded, "2 threads")
    }

    @Test func collectHandsOutWhatOneThreadWouldHave() throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        let voice = settings { $0.pitch = 0.8 }
        let single = try VoiceShift(sampleRate: sampleRate, voice: voice)
        let shared = try VoiceShift(sampleRate: sampleRate, voice: voice, threads: 2)
        var fromSingle: [Double] = []
        var fromShared: [Double] = []
        for start in stride(from: 0, to: input.count, by: 1000) {
            let chunk = Array(input[start..<min(input.count, start + 1000)])
            fromSingle += try single.process(chunk)
            fromShared += try shared.process(chunk)
            #expect(fromShared.count <= fromSingle.count)
            try shared.drain(into: &fromShared)
            #expect(fromShared == fromSingle, "after \(start + chunk.count) samples")
        }
        #expect(try shared.finish() == single.finish())
        #expect(shared.medianInputF0 == single.medianInputF0 && shared.medianOutputF0 == single.medianOutputF0)
    }

    @Test func aFailingStreamStopsCleanlyWithThreads() throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        for threads in [1, 2] {
            let stage = try VoiceShift(sampleRate: sampleRate, voice: settings { $0.pitch = 1.2 }, threads: threads)
            _ = try stage.process(Array(input.prefix(8000)))
            #expect(throws: WorldError.nonFiniteSample(index: 8002)) {
                _ = try stage.process([0, 0, .infinity])
            }
        }
    }

    /// A stream shorter than one analysis window (1864 samples at 44.1 kHz, 677 at 16 kHz) is analysed and
    /// resynthesised like any other, at WORLD's frame count for its length.
    @Test(arguments: [44100, 16000], [1, 2, 441])
    func aStreamShorterThanAWindowComesOutAtItsLength(rate: Int, length: Int) throws {
        let input = Signals.vowel(f0: 150, sampleRate: rate, duration: 0.05).suffix(length).map { $0 }
        for method in ["dio", "live", "harvest"] {
            var analysis = AnalysisOptions()
            analysis.live = method == "live"
            analysis.f0Method = method == "harvest" ? .harvest : .dio
            for (threads, tempo) in [(1, 1.0), (2, 1.0), (1, 0.8), (2, 0.8)] {
                let voice = settings { $0.pitch = 1.2; $0.tempo = tempo }
                let stage = try VoiceShift(sampleRate: rate, voice: voice, analysis: analysis, threads: threads)
                let output = try stage.process(input) + stage.finish()
                let context = "\(method), \(threads) threads, tempo \(tempo)"
                #expect(output.count == Int((Double(length) / tempo).rounded()), "\(context)")
                #expect(output.allSatisfy { $0.isFinite }, "\(context)")
                if length == 441 {
                    #expect(output.map(abs).max()! > 0.1, "\(context): silent")
                }
            }
        }
    }

    /// Below one analysis window the stage is WORLD resynthesis still, sample for sample: Dio, StoneMask,
    /// CheapTrick, D4C and Synthesis over the whole signal, which take any length (Dio's public check refuses it),
    /// each frame's safeguard noise starting at WORLD's seed as in any stream.
    /// The stream's DIO subtracts the same mean as whole-signal DIO here, as the stream ends within its opening.
    @Test(arguments: [44100, 16000])
    func aShortStreamIsResynthesisedAsWorldDoesIt(rate: Int) throws {
        let input = Signals.vowel(f0: 150, sampleRate: rate, duration: 0.05).suffix(441).map { $0 }
        let stage = try VoiceShift(sampleRate: rate, voice: settings { $0.pitch = 1 })
        let streamed = try stage.process(input) + stage.finish()
        let raw = try Dio(sampleRate: rate).estimate(unchecked: input)
        let contour = try StoneMask(sampleRate: rate).refine(input, contour: raw)
        let cheapTrick = try CheapTrick(sampleRate: rate, options: .init(), shared: false, noise: .eachFrame)
        let spectrogram = try cheapTrick.estimate(input, contour: contour)
        let aperiodicity = try D4C(sampleRate: rate, fftSize: cheapTrick.fftSize, shared: false, noise: .eachFrame)
            .estimate(input, contour: contour)
        let offline = try Synthesis(sampleRate: rate, framePeriod: 5)
            .synthesize(f0: contour.f0, spectrogram: spectrogram, aperiodicity: aperiodicity)
        #expect(streamed == Array(offline.prefix(input.count)))
    }

    @Test func anEmptyStreamEndsEmpty() throws {
        for threads in [1, 2] {
            let stage = try VoiceShift(sampleRate: sampleRate, voice: settings { $0.pitch = 1.2 }, threads: threads)
            #expect(try stage.finish().isEmpty)
        }
    }

    /// As a batch run in one process would: more streams than cores at once, each on a thread of the worker pool
    /// and each with vocoder threads of the same pool, every stream waiting for its own workers (and first for the
    /// other streams, so that all of them hold their threads at once). On a pool with as many threads as cores the
    /// streams' workers would wait in its queue behind the streams waiting for them; here every stream finishes,
    /// with the output one thread gives.
    @Test func moreStreamsOnThreadsThanCoresAllFinish() throws {
        let input = Signals.vowel(f0: 140, sampleRate: sampleRate, duration: 0.3)
        let voice = settings { $0.pitch = 1.2 }
        let expected = try run(input, voice: voice, chunk: 1000)
        let streams = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        final class Results: @unchecked Sendable {
            let lock = Lock()
            var started = 0
            var outputs: [[Double]] = []
        }
        let results = Results()
        for _ in 0..<streams {
            WorkerPool.shared.run { [self] in
                results.lock.withLock { results.started += 1 }
                results.lock.broadcast()
                results.lock.withLock {
                    let deadline = monotonicSeconds() + 60
                    while results.started < streams, results.lock.wait(until: deadline) {}
                }
                let output = (try? run(input, voice: voice, chunk: 1000, threads: 2)) ?? []
                results.lock.withLock { results.outputs.append(output) }
                results.lock.broadcast()
            }
        }
        let finished = results.lock.withLock {
            let deadline = monotonicSeconds() + 120
            while results.outputs.count < streams, results.lock.wait(until: deadline) {}
            return results.outputs
        }
        #expect(finished.count == streams, "\(finished.count) of \(streams) streams finished within two minutes")
        #expect(finished.allSatisfy { $0 == expected })
    }

    @Test func aStageLeftMidStreamStopsItsThreads() throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        for _ in 0..<20 {
            let stage = try VoiceShift(sampleRate: sampleRate, voice: settings { $0.pitch = 1.2 }, threads: 3)
            _ = try stage.process(input)
        }
    }

    @Test func unchangedVoiceMatchesOfflineWorldResynthesis() throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        let streamed = try run(input, voice: settings { $0.pitch = 1 }, chunk: 4096)
        let raw = try Dio(sampleRate: sampleRate).estimate(input)
        let contour = try StoneMask(sampleRate: sampleRate).refine(input, contour: raw)
        let cheapTrick = try CheapTrick(sampleRate: sampleRate)
        let spectrogram = try cheapTrick.estimate(input, contour: contour)
        let aperiodicity = try D4C(sampleRate: sampleRate, fftSize: cheapTrick.fftSize).estimate(input, contour: contour)
        let offline = try Synthesis(sampleRate: sampleRate, framePeriod: 5)
            .synthesize(f0: contour.f0, spectrogram: spectrogram, aperiodicity: aperiodicity)
        #expect(streamed.count == input.count)
        let signal = offline.prefix(input.count).reduce(0) { $0 + $1 * $1 }
        let noise = zip(streamed, offline).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
        #expect(10 * log10(signal / noise) >= 30)
    }

    @Test(arguments: [0.7, 1.25, 1.6])
    func pitchRatioScalesTheMedianF0(ratio: Double) throws {
        let input = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.8)
        let output = try run(input, voice: settings { $0.pitch = ratio }, chunk: 4096)
        #expect(try abs(medianVoicedF0(output) / medianVoicedF0(input) / ratio - 1) < 0.01)
    }

    @Test(arguments: [0.5, 1.5, 2.0])
    func tempoSetsTheLengthAndKeepsThePitch(tempo: Double) throws {
        let input = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.8)
        let output = try run(input, voice: settings { $0.tempo = tempo }, chunk: 1000)
        #expect(output.count == Int((Double(input.count) / tempo).rounded()))
        #expect(try abs(medianVoicedF0(output) / medianVoicedF0(input) - 1) < 0.01)
    }

    @Test func rangeZeroAroundAKnownMedianMakesTheVoiceMonotone() throws {
        let glide = Signals.vowel(f0: 110, sampleRate: sampleRate, duration: 0.4)
            + Signals.vowel(f0: 160, sampleRate: sampleRate, duration: 0.4)
        let voice = settings { $0.pitchRange = 0; $0.referenceMedian = 135 }
        let output = try run(glide, voice: voice, chunk: 4096)
        let contour = try Dio(sampleRate: sampleRate).estimate(output)
        let voiced = try StoneMask(sampleRate: sampleRate).refine(output, contour: contour).f0.filter { $0 > 0 }
        let trimmed = Array(voiced.dropFirst(10).dropLast(10))
        let mean = trimmed.reduce(0, +) / Double(trimmed.count)
        let deviation = (trimmed.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(trimmed.count)).squareRoot()
        #expect(abs(mean / 135 - 1) < 0.01)
        #expect(deviation < 1)
    }

    @Test func formantRatioStretchesTheEnvelope() throws {
        let input = Signals.vowel(f0: 120, sampleRate: sampleRate, duration: 0.6, formants: [700, 1200, 2600])
        let output = try run(input, voice: settings { $0.formant = 1.2 }, chunk: 4096)
        let before = try logEnvelope(input)
        let after = try logEnvelope(output)
        let candidates = stride(from: 0.9, through: 1.5, by: 0.005)
        let best = candidates.min { warpDistance(before, after, ratio: $0) < warpDistance(before, after, ratio: $1) }!
        #expect(abs(best - 1.2) < 0.02)
    }

    /// Mean log envelope over the middle frames, one value a bin.
    private func logEnvelope(_ signal: [Double]) throws -> [Double] {
        let contour = try StoneMask(sampleRate: sampleRate).refine(signal, contour: Dio(sampleRate: sampleRate).estimate(signal))
        let spectrogram = try CheapTrick(sampleRate: sampleRate).estimate(signal, contour: contour)
        let rows = (spectrogram.rows / 4)..<(spectrogram.rows * 3 / 4)
        return (0..<spectrogram.columns).map { bin in
            rows.reduce(0) { $0 + log(spectrogram[$1, bin]) } / Double(rows.count)
        }
    }

    /// How far `after` is from `before` stretched by `ratio`, over 300 Hz to 4 kHz.
    private func warpDistance(_ before: [Double], _ after: [Double], ratio: Double) -> Double {
        let hertzPerBin = Double(sampleRate) / Double(2 * (before.count - 1))
        let bins = Int(300 / hertzPerBin)..<Int(4000 / hertzPerBin)
        return bins.reduce(0) { sum, bin in
            let source = Double(bin) / ratio
            let index = Int(source)
            let value = before[index] + (source - Double(index)) * (before[index + 1] - before[index])
            return sum + (after[bin] - value) * (after[bin] - value)
        }
    }

    @Test func whisperLeavesNoPeriodicity() throws {
        let input = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.6)
        let output = try run(input, voice: settings { $0.whisper = true }, chunk: 4096)
        let contour = try Dio(sampleRate: sampleRate).estimate(output)
        #expect(Double(contour.f0.filter { $0 > 0 }.count) < 0.2 * Double(contour.frameCount))
    }

    @Test func identitySettingsAreRecognised() {
        #expect(VoiceSettings().isIdentity)
        #expect(!settings { $0.tempo = 1.1 }.isIdentity)
    }
}
