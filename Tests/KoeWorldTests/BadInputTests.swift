import Foundation
@testable import KoeWorld
import Testing
import TestSupport

/// What a caller can pass the public algorithms throws `WorldError`; none of it traps.
@Suite struct BadInputTests {
    private let vowel = Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.3)

    private func isInvalidOption(_ error: any Error) -> Bool {
        if case WorldError.invalidOption = error { return true }
        return false
    }

    private func isInvalidParameters(_ error: any Error) -> Bool {
        if case WorldError.invalidParameters = error { return true }
        return false
    }

    @Test(arguments: [0, -48000, 100, 7999, 192_001, Int.max])
    func everyAlgorithmRefusesARateOutsideItsRange(sampleRate: Int) {
        let refused = WorldError.unsupportedSampleRate(sampleRate)
        #expect(throws: refused) { try Dio(sampleRate: sampleRate) }
        #expect(throws: refused) { try Harvest(sampleRate: sampleRate) }
        #expect(throws: refused) { try StoneMask(sampleRate: sampleRate) }
        #expect(throws: refused) { try CheapTrick(sampleRate: sampleRate) }
        #expect(throws: refused) { try D4C(sampleRate: sampleRate, fftSize: 1024) }
        #expect(throws: refused) { try Synthesis(sampleRate: sampleRate, framePeriod: 5) }
        #expect(throws: refused) { try StreamingSynthesizer(sampleRate: sampleRate, framePeriod: 5, fftSize: 1024) }
        #expect(throws: refused) { try StreamingAnalyzer(sampleRate: sampleRate) }
        #expect(throws: refused) { try SpectralEnvelopeCoding(sampleRate: sampleRate, fftSize: 1024, dimensions: 40) }
        #expect(throws: refused) { try AperiodicityCoding(sampleRate: sampleRate, fftSize: 1024) }
        #expect(throws: refused) { try AperiodicityCoding.bandCount(sampleRate: sampleRate) }
    }

    @Test(arguments: [-1, Int.min, SignalRequirements.longestSignal + 1, Int.max])
    func frameCountsOfImpossibleLengthsAreRefused(samples: Int) throws {
        var fastest = Dio.Options()
        fastest.framePeriod = SignalRequirements.framePeriods.lowerBound
        let dio = try Dio(sampleRate: 8000, options: fastest)
        let harvest = try Harvest(sampleRate: 8000, options: .init(framePeriod: fastest.framePeriod))
        #expect(throws: WorldError.self) { try dio.frameCount(samples: samples) }
        #expect(throws: WorldError.self) { try harvest.frameCount(samples: samples) }
    }

    @Test func frameCountOfTheLongestSignalAtTheShortestPeriodFits() throws {
        var fastest = Dio.Options()
        fastest.framePeriod = SignalRequirements.framePeriods.lowerBound
        let frames = try Dio(sampleRate: 8000, options: fastest).frameCount(samples: SignalRequirements.longestSignal)
        #expect(frames == SignalRequirements.longestSignal * 125 + 1)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, 0, -5, 1e-9, 10_001])
    func framePeriodsOutsideTheRangeAreRefused(framePeriod: Double) {
        var dio = Dio.Options()
        dio.framePeriod = framePeriod
        #expect(performing: { try Dio(sampleRate: 16000, options: dio) }, throws: isInvalidOption)
        #expect(performing: { try Harvest(sampleRate: 16000, options: .init(framePeriod: framePeriod)) }, throws: isInvalidOption)
        #expect(performing: { try Synthesis(sampleRate: 16000, framePeriod: framePeriod) }, throws: isInvalidOption)
        #expect(performing: { try StreamingSynthesizer(sampleRate: 16000, framePeriod: framePeriod, fftSize: 1024) },
                throws: isInvalidOption)
        var streaming = AnalysisOptions()
        streaming.framePeriod = framePeriod
        #expect(performing: { try StreamingAnalyzer(sampleRate: 16000, options: streaming) }, throws: isInvalidOption)
    }

    @Test(arguments: [(Double.nan, 800.0), (71, .nan), (0, 800), (-71, 800), (9.9, 800), (300, 200), (71, 8000), (71, .infinity)])
    func f0RangesAnAnalysisCannotSearchAreRefused(floor: Double, ceil: Double) {
        var dio = Dio.Options()
        (dio.f0Floor, dio.f0Ceil) = (floor, ceil)
        #expect(performing: { try Dio(sampleRate: 16000, options: dio) }, throws: isInvalidOption)
        #expect(performing: { try Harvest(sampleRate: 16000, options: .init(f0Floor: floor, f0Ceil: ceil)) },
                throws: isInvalidOption)
        var streaming = AnalysisOptions()
        (streaming.f0Floor, streaming.f0Ceil) = (floor, ceil)
        #expect(performing: { try StreamingAnalyzer(sampleRate: 16000, options: streaming) }, throws: isInvalidOption)
    }

    @Test func optionsOutOfTheirRangeAreRefused() {
        for channels in [0, -1, .nan, .infinity, 101] {
            var options = Dio.Options()
            options.channelsInOctave = channels
            #expect(performing: { try Dio(sampleRate: 16000, options: options) }, throws: isInvalidOption)
        }
        for allowedRange in [-0.1, .nan, .infinity] {
            var options = Dio.Options()
            options.allowedRange = allowedRange
            #expect(performing: { try Dio(sampleRate: 16000, options: options) }, throws: isInvalidOption)
        }
        for q1 in [Double.nan, .infinity] {
            #expect(performing: { try CheapTrick(sampleRate: 16000, options: .init(q1: q1)) }, throws: isInvalidOption)
        }
        for fftSize in [Int.min, -2, 0, 1, 2, 1023, 64, 1 << 17] {
            #expect(performing: { try CheapTrick(sampleRate: 16000, options: .init(fftSize: fftSize)) }, throws: isInvalidOption)
            #expect(performing: { try D4C(sampleRate: 16000, fftSize: fftSize) }, throws: isInvalidOption)
            #expect(performing: { try StreamingSynthesizer(sampleRate: 16000, framePeriod: 5, fftSize: fftSize) },
                    throws: isInvalidOption)
        }
        #expect(performing: { try D4C(sampleRate: 16000, fftSize: 1024, options: .init(threshold: .nan)) }, throws: isInvalidOption)
        for lookAhead in [-1, .nan, .infinity, 10_001] {
            var options = AnalysisOptions()
            options.lookAhead = lookAhead
            #expect(performing: { try StreamingAnalyzer(sampleRate: 16000, options: options) }, throws: isInvalidOption)
        }
        var liveHarvest = AnalysisOptions()
        (liveHarvest.live, liveHarvest.f0Method) = (true, .harvest)
        #expect(performing: { try StreamingAnalyzer(sampleRate: 16000, options: liveHarvest) }, throws: isInvalidOption)
        for milliseconds: Double in [-.infinity, -1, 10_001, .infinity, .nan] {
            for path in [\AnalysisOptions.harvestBlock, \.lookAhead, \.lookBehind] {
                var options = AnalysisOptions()
                options.f0Method = .harvest
                options[keyPath: path] = milliseconds
                #expect(performing: { try StreamingAnalyzer(sampleRate: 16000, options: options) }, throws: isInvalidOption)
            }
        }
    }

    @Test func signalsTheAnalysesCannotReadAreRefused() throws {
        let minimum = Int((3 * 16000 / 71.0).rounded(.up))
        let short = [Double](repeating: 0.1, count: minimum - 1)
        let tooShort = WorldError.signalTooShort(samples: minimum - 1, minimum: minimum)
        #expect(throws: tooShort) { try Dio(sampleRate: 16000).estimate(short) }
        #expect(throws: tooShort) { try Harvest(sampleRate: 16000).estimate(short) }
        var poisoned = vowel
        poisoned[1234] = .nan
        #expect(throws: WorldError.nonFiniteSample(index: 1234)) { try Dio(sampleRate: 16000).estimate(poisoned) }
        #expect(throws: WorldError.nonFiniteSample(index: 1234)) { try Harvest(sampleRate: 16000).estimate(poisoned) }

        let contour = F0Contour(f0: [150, 150, 150], framePeriod: 5)
        for signal in [[], poisoned] {
            #expect(throws: WorldError.self) { try StoneMask(sampleRate: 16000).refine(signal, contour: contour) }
            #expect(throws: WorldError.self) { try CheapTrick(sampleRate: 16000).estimate(signal, contour: contour) }
            #expect(throws: WorldError.self) { try D4C(sampleRate: 16000, fftSize: 1024).estimate(signal, contour: contour) }
        }
        for time in [Double.nan, .infinity, -2e6, 2e6] {
            let strange = try F0Contour(time: [0, time], f0: [150, 150])
            #expect(performing: { try StoneMask(sampleRate: 16000).refine(vowel, contour: strange) }, throws: isInvalidParameters)
            #expect(performing: { try CheapTrick(sampleRate: 16000).estimate(vowel, contour: strange) }, throws: isInvalidParameters)
            #expect(performing: { try D4C(sampleRate: 16000, fftSize: 1024).estimate(vowel, contour: strange) },
                    throws: isInvalidParameters)
        }
    }

    @Test func shapesThatDoNotFitAreRefused() {
        #expect(performing: { try F0Contour(time: [0, 0.005], f0: [100]) }, throws: isInvalidParameters)
        #expect(performing: { try Matrix(rows: -1, columns: 3) }, throws: isInvalidParameters)
        #expect(performing: { try Matrix(rows: Int.max, columns: 2) }, throws: isInvalidParameters)
        // 10^18 values fit in `Int` but not in memory: the allocation trapped.
        #expect(performing: { try Matrix(rows: 1_000_000_000, columns: 1_000_000_000) }, throws: isInvalidParameters)
        #expect(performing: { try Matrix(rows: 2, columns: 3, storage: [1, 2, 3]) }, throws: isInvalidParameters)
    }

    /// The codecs take the logarithm of every value they code.
    @Test(arguments: [0.0, -0.5, .nan, .infinity, -.infinity])
    func theCodecsRefuseSpectraNotPositiveAndFinite(bad: Double) throws {
        var spectrum = try Matrix(rows: 3, columns: 513, repeating: 0.5)
        spectrum[2, 100] = bad
        #expect(throws: WorldError.invalidParameters(
            "the aperiodicity's frame 2, bin 100 is \(bad); an aperiodicity must be positive and finite")) {
            try AperiodicityCoding(sampleRate: 16000, fftSize: 1024).code(spectrum)
        }
        #expect(throws: WorldError.invalidParameters(
            "the spectrogram's frame 2, bin 100 is \(bad); a power spectrum must be positive and finite")) {
            try SpectralEnvelopeCoding(sampleRate: 16000, fftSize: 1024, dimensions: 40).code(spectrum)
        }
    }

    /// A contour of a few MB asks CheapTrick and D4C at 192 kHz for 32,769 bins a frame: here four times this
    /// machine's memory, whose allocation trapped.
    @Test func outputsLargerThanMemoryAreRefused() throws {
        let cheapTrick = try CheapTrick(sampleRate: 192_000, options: .init(f0Floor: 10))
        let bins = cheapTrick.fftSize / 2 + 1
        let frames = Int(4 * ProcessInfo.processInfo.physicalMemory / UInt64(bins * 8))
        let contour = F0Contour(f0: [Double](repeating: 0, count: frames), framePeriod: 5)
        #expect(performing: { try cheapTrick.estimate([0.1], contour: contour) }, throws: isInvalidParameters)
        let d4c = try D4C(sampleRate: 192_000, fftSize: cheapTrick.fftSize)
        #expect(performing: { try d4c.estimate([0.1], contour: contour) }, throws: isInvalidParameters)
    }

    @Test func synthesisRefusesParametersThatDoNotFitTogether() throws {
        let synthesis = try Synthesis(sampleRate: 16000, framePeriod: 5)
        let envelope = try Matrix(rows: 3, columns: 513, repeating: 1e-4)
        let aperiodicity = try Matrix(rows: 3, columns: 513, repeating: 0.5)
        let f0: [Double] = [150, 150, 150]
        #expect(try synthesis.synthesize(f0: f0, spectrogram: envelope, aperiodicity: aperiodicity).count == 240)
        let cases: [(f0: [Double], envelope: Matrix, aperiodicity: Matrix)] = [
            ([150, 150], envelope, aperiodicity),
            (f0, envelope, try Matrix(rows: 3, columns: 257, repeating: 0.5)),
            (f0, try Matrix(rows: 3, columns: 2), try Matrix(rows: 3, columns: 2)),
            (f0, try Matrix(rows: 3, columns: 40_000), try Matrix(rows: 3, columns: 40_000)),
            ([150, .nan, 150], envelope, aperiodicity),
            (f0, try Matrix(rows: 3, columns: 513, storage: envelope.storage.enumerated().map { $0.offset == 600 ? .infinity : $0.element }),
             aperiodicity),
        ]
        for (f0, envelope, aperiodicity) in cases {
            #expect(performing: { try synthesis.synthesize(f0: f0, spectrogram: envelope, aperiodicity: aperiodicity) },
                    throws: isInvalidParameters)
        }
        let everlasting = try Synthesis(sampleRate: 192_000, framePeriod: 10_000)
        let frames = 1200
        #expect(performing: {
            try everlasting.synthesize(
                f0: [Double](repeating: 0, count: frames), spectrogram: try Matrix(rows: frames, columns: 2049, repeating: 1),
                aperiodicity: try Matrix(rows: frames, columns: 2049, repeating: 1))
        }, throws: isInvalidParameters)
    }

    @Test func aStreamingSynthesizerRefusesBadFramesAndFramesAfterItsEnd() throws {
        let synthesizer = try StreamingSynthesizer(sampleRate: 16000, framePeriod: 5, fftSize: 1024)
        let row = [Double](repeating: 1e-4, count: 513)
        var nan = row
        nan[7] = .nan
        #expect(performing: { try synthesizer.push(f0: 150, spectrum: Array(row.prefix(512)), aperiodicity: row) },
                throws: isInvalidParameters)
        #expect(performing: { try synthesizer.push(f0: .nan, spectrum: row, aperiodicity: row) }, throws: isInvalidParameters)
        #expect(performing: { try synthesizer.push(f0: 150, spectrum: nan, aperiodicity: row) }, throws: isInvalidParameters)
        #expect(performing: { try synthesizer.push(f0: 150, spectrum: row, aperiodicity: nan) }, throws: isInvalidParameters)
        for _ in 0..<4 {
            try synthesizer.push(f0: 150, spectrum: row, aperiodicity: row)
        }
        var output: [Double] = []
        _ = synthesizer.drain(into: &output)
        _ = synthesizer.finish(into: &output)
        #expect(output.count == 320)
        #expect(throws: WorldError.streamFinished) { try synthesizer.push(f0: 150, spectrum: row, aperiodicity: row) }
    }

    @Test func aStreamingAnalyzerRefusesSamplesAfterItsEnd() throws {
        let analyzer = try StreamingAnalyzer(sampleRate: 16000)
        _ = try analyzer.push(vowel)
        _ = try analyzer.finish()
        #expect(throws: WorldError.streamFinished) { try analyzer.push(vowel) }
        #expect(throws: WorldError.streamFinished) { try analyzer.finish() }
    }
}

extension BadInputTests {
    /// Finite samples far beyond full scale overflow a power spectrum to infinity; the analyses still return.
    @Test(arguments: [1e150, 1e300, Double.greatestFiniteMagnitude])
    func hugeFiniteSamplesDoNotTrap(amplitude: Double) throws {
        let loud = vowel.map { $0 * amplitude }
        let contour = try Dio(sampleRate: 16000).estimate(loud)
        let refined = try StoneMask(sampleRate: 16000).refine(loud, contour: contour)
        _ = try Harvest(sampleRate: 16000).estimate(loud)
        let voiced = F0Contour(f0: [Double](repeating: 150, count: refined.frameCount), framePeriod: 5)
        let cheapTrick = try CheapTrick(sampleRate: 16000)
        _ = try cheapTrick.estimate(loud, contour: voiced)
        _ = try D4C(sampleRate: 16000, fftSize: cheapTrick.fftSize).estimate(loud, contour: voiced)
        let analyzer = try StreamingAnalyzer(sampleRate: 16000)
        _ = try analyzer.push(loud) + analyzer.finish()
    }
}

extension BadInputTests {
    /// Synthesis takes any finite parameters: F0 far past Nyquist or below zero, envelopes of 0, negative or huge
    /// power, aperiodicity outside [0, 1].
    @Test(arguments: [1e300, -1e300, 1e-300, 7999, 1e9])
    func anyFiniteParametersSynthesizeWithoutTrapping(f0: Double) throws {
        let synthesis = try Synthesis(sampleRate: 16000, framePeriod: 5)
        for (power, aperiodicity) in [(1e300, 0.5), (0, 0), (-1, 2), (1e-4, -5), (.greatestFiniteMagnitude, 1)] {
            let output = try synthesis.synthesize(
                f0: [f0, 150, f0, 0, f0], spectrogram: try Matrix(rows: 5, columns: 513, repeating: power),
                aperiodicity: try Matrix(rows: 5, columns: 513, repeating: aperiodicity))
            #expect(output.count == 400)
        }
    }
}
