import Foundation
import KoeDSP
@testable import KoeWorld
import TestSupport
import Testing

@Suite struct D4CTests {
    private func decibels(_ amplitude: [Double]) -> [Double] {
        amplitude.map { 20 * log10($0) }
    }

    private func level(_ row: [Double], at frequency: Double, sampleRate: Int, fftSize: Int) -> Double {
        decibels(row)[Int(frequency * Double(fftSize) / Double(sampleRate))]
    }

    @Test func whiteNoiseIsAperiodicEverywhere() throws {
        let sampleRate = 48000
        let noise = Signals.whiteNoise(count: 14400)
        let fftSize = CheapTrick.fftSize(sampleRate: sampleRate, f0Floor: 71)
        let contour = try steadyContour(f0: 150, duration: 0.3, frames: 2)
        let judged = try D4C(sampleRate: sampleRate, fftSize: fftSize).estimate(noise, contour: contour)
        #expect(judged.storage.allSatisfy { abs($0 - 1) < 1e-9 }, "the love train should call noise unvoiced")

        let forced = try D4C(sampleRate: sampleRate, fftSize: fftSize, options: .init(threshold: 0)).estimate(noise, contour: contour)
        for frame in 0..<forced.rows {
            let row = forced.row(frame)
            for band in stride(from: 3000.0, through: 15000, by: 3000) {
                let level = level(row, at: band, sampleRate: sampleRate, fftSize: fftSize)
                #expect(level > -6, "\(band) Hz at \(level) dB")
            }
        }
    }

    @Test func pulseTrainVowelIsPeriodicInLowBands() throws {
        let sampleRate = 16000
        let vowel = Signals.vowel(f0: 120, sampleRate: sampleRate, duration: 0.3)
        let fftSize = CheapTrick.fftSize(sampleRate: sampleRate, f0Floor: 71)
        let aperiodicity = try D4C(sampleRate: sampleRate, fftSize: fftSize).estimate(vowel, contour: steadyContour(f0: 120, duration: 0.3))
        for frame in 0..<aperiodicity.rows {
            let row = aperiodicity.row(frame)
            #expect(level(row, at: 1000, sampleRate: sampleRate, fftSize: fftSize) < -30)
            #expect(level(row, at: 3000, sampleRate: sampleRate, fftSize: fftSize) < -15)
            #expect(row.allSatisfy { $0 > 0 && $0 <= 1 })
        }
    }

    @Test func unvoicedFramesStayFullyAperiodic() throws {
        let sampleRate = 16000
        let vowel = Signals.vowel(f0: 120, sampleRate: sampleRate, duration: 0.3)
        let contour = try F0Contour(time: [0.1, 0.15, 0.2], f0: [0, 120, 0])
        let aperiodicity = try D4C(sampleRate: sampleRate, fftSize: 1024).estimate(vowel, contour: contour)
        #expect(aperiodicity.rows == 3 && aperiodicity.columns == 513)
        for frame in [0, 2] {
            #expect(aperiodicity.row(frame).allSatisfy { abs($0 - 1) < 1e-9 })
        }
        #expect(aperiodicity.row(1).contains { $0 < 0.5 })
    }

    /// Below 15.8 kHz the love train's band ends at Nyquist. At 8 kHz all of it lies below 4 kHz, so every
    /// F0 frame is analysed; at 12 kHz the train still tells a vowel from noise.
    @Test func lowSampleRatesCutTheLoveTrainAtNyquist() throws {
        let vowelAt8k = Signals.vowel(f0: 120, sampleRate: 8000, duration: 0.3)
        let contour = try steadyContour(f0: 120, duration: 0.3)
        let fftSizeAt8k = CheapTrick.fftSize(sampleRate: 8000, f0Floor: 71)
        let at8k = try D4C(sampleRate: 8000, fftSize: fftSizeAt8k).estimate(vowelAt8k, contour: contour)
        for frame in 0..<at8k.rows {
            #expect(level(at8k.row(frame), at: 1000, sampleRate: 8000, fftSize: fftSizeAt8k) < -30)
        }

        let fftSizeAt12k = CheapTrick.fftSize(sampleRate: 12000, f0Floor: 71)
        let d4cAt12k = try D4C(sampleRate: 12000, fftSize: fftSizeAt12k)
        let vowelAt12k = try d4cAt12k.estimate(Signals.vowel(f0: 120, sampleRate: 12000, duration: 0.3), contour: contour)
        #expect((0..<vowelAt12k.rows).allSatisfy { vowelAt12k.row($0).contains { $0 < 0.5 } })
        let noiseAt12k = try d4cAt12k.estimate(Signals.whiteNoise(count: 3600), contour: contour)
        #expect(noiseAt12k.storage.allSatisfy { abs($0 - 1) < 1e-9 }, "the love train should call noise unvoiced")
    }

    @Test func anyInputGivesAperiodicityInRange() throws {
        let inputs: [(rate: Int, signal: [Double])] = [
            (16000, [Double](repeating: 0, count: 2400)),
            (16000, [Double](repeating: -0.5, count: 2400)),
            (16000, Signals.whiteNoise(count: 700)),
            (192_000, Signals.vowel(f0: 200, sampleRate: 192_000, duration: 0.02)),
        ]
        let contour = try F0Contour(time: [0, 0.01, 0.02, 0.03, 0.04, 0.05], f0: [0, 120, -5, 7000, .nan, .infinity])
        for input in inputs {
            let fftSize = CheapTrick.fftSize(sampleRate: input.rate, f0Floor: 71)
            let aperiodicity = try D4C(sampleRate: input.rate, fftSize: fftSize, options: .init(threshold: 0))
                .estimate(input.signal, contour: contour)
            #expect(aperiodicity.rows == contour.frameCount && aperiodicity.columns == fftSize / 2 + 1)
            #expect(aperiodicity.storage.allSatisfy { $0 > 0 && $0 <= 1 }, "at \(input.rate) Hz")
        }
    }

    /// Silence then a vowel with a gliding F0 at 48 kHz, where the love train runs and noise shapes every frame.
    private func silenceThenVowel() -> (signal: [Double], contour: F0Contour) {
        let sampleRate = 48000
        let vowel = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.12)
        let signal = [Double](repeating: 0, count: vowel.count / 2) + vowel
        let frameCount = F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: 5)
        let f0 = (0..<frameCount).map { (frame: Int) -> Double in frame % 7 == 3 ? 0 : 110 + Double(frame % 30) * 4 }
        return (signal, F0Contour(f0: f0, framePeriod: 5))
    }

    @Test func anyThreadCountGivesTheSameAperiodicity() throws {
        let (signal, contour) = silenceThenVowel()
        let analysis = try D4C(sampleRate: 48000, fftSize: 2048, options: .init(threshold: 0))
        let single = try analysis.estimate(signal, contour: contour)
        for threads in [2, 5] {
            #expect(try analysis.estimate(signal, contour: contour, threads: threads) == single, "\(threads) threads")
        }
    }

    /// Restarted at each frame (as in a stream), the noise leaves a frame's aperiodicity independent of the other
    /// frames of its call; WORLD's single sequence makes it depend on every voiced frame before.
    @Test func framesRestartingTheNoiseDoNotDependOnTheirCall() throws {
        let (signal, contour) = silenceThenVowel()
        let first = contour.frameCount / 3
        let later = try F0Contour(time: Array(contour.time[first...]), f0: Array(contour.f0[first...]))
        for noise in [SafeguardNoise.throughCall, .eachFrame] {
            let analysis = try D4C(sampleRate: 48000, fftSize: 2048, options: .init(threshold: 0), shared: false, noise: noise)
            let whole = try analysis.estimate(signal, contour: contour)
            let part = try analysis.estimate(signal, contour: later)
            let unchanged = (0..<later.frameCount).allSatisfy { part.row($0) == whole.row(first + $0) }
            #expect(unchanged == (noise == .eachFrame), "\(noise)")
        }
    }

    @Test func repeatedCallsGiveTheSameAperiodicity() throws {
        let (signal, contour) = silenceThenVowel()
        let analysis = try D4C(sampleRate: 48000, fftSize: 2048)
        let first = try analysis.estimate(signal, contour: contour)
        #expect(try analysis.estimate(signal, contour: contour) == first)
        #expect(try D4C(sampleRate: 48000, fftSize: 2048).estimate(signal, contour: contour) == first)
    }

    /// A matrix reused from call to call, larger or smaller than the next result, holds exactly that result.
    @Test func estimatingIntoAReusedMatrixGivesTheSameAperiodicity() throws {
        let (signal, contour) = silenceThenVowel()
        let analysis = try D4C(sampleRate: 48000, fftSize: 2048)
        try expectReusedMatrixHoldsEachResult(
            signal: signal, contour: contour, fewerFrames: 5, initial: try Matrix(rows: 2, columns: 5, repeating: -1),
            estimate: { try analysis.estimate(signal, contour: $0) },
            estimateInto: { analysis.estimate($0, contour: $1, threads: $2, into: &$3) })
    }
}
