import Foundation
@testable import KoeWorld
import TestSupport
import Testing

@Suite struct CheapTrickTests {
    private func decibels(_ power: [Double]) -> [Double] {
        power.map { 10 * log10($0) }
    }

    @Test func fftSizeFollowsWorldsRule() throws {
        #expect(CheapTrick.fftSize(sampleRate: 8000, f0Floor: 71) == 512)
        #expect(CheapTrick.fftSize(sampleRate: 16000, f0Floor: 71) == 1024)
        #expect(CheapTrick.fftSize(sampleRate: 44100, f0Floor: 71) == 2048)
        #expect(CheapTrick.fftSize(sampleRate: 48000, f0Floor: 71) == 2048)
        #expect(CheapTrick.fftSize(sampleRate: 48000, f0Floor: 70) == 4096)
        #expect(try CheapTrick(sampleRate: 16000).fftSize == 1024)
        #expect(try CheapTrick(sampleRate: 16000, options: .init(fftSize: 2048)).fftSize == 2048)
    }

    @Test func vowelEnvelopePeaksAtItsFormants() throws {
        let sampleRate = 16000
        let formants = [700.0, 1200, 2600]
        let vowel = Signals.vowel(f0: 120, sampleRate: sampleRate, duration: 0.3, formants: formants)
        let analysis = try CheapTrick(sampleRate: sampleRate)
        let envelope = decibels(try analysis.estimate(vowel, contour: steadyContour(f0: 120, duration: 0.3)).row(1))
        let binWidth = Double(sampleRate) / Double(analysis.fftSize)
        let peaks = (1..<(envelope.count - 1)).filter { envelope[$0] > envelope[$0 - 1] && envelope[$0] >= envelope[$0 + 1] }
        for formant in formants {
            let nearest = peaks.map { abs(Double($0) * binWidth - formant) }.min() ?? .infinity
            #expect(nearest < 60, "no envelope peak near \(formant) Hz")
        }
        let valley = envelope[Int(1900 / binWidth)]
        #expect(envelope[Int(1200 / binWidth)] - valley > 6)
        #expect(envelope[Int(2600 / binWidth)] - valley > 6)
    }

    @Test func pulseTrainEnvelopeIsFlat() throws {
        let sampleRate = 16000
        let pulses = Signals.pulseTrain(f0: 125, sampleRate: sampleRate, duration: 0.3)
        let analysis = try CheapTrick(sampleRate: sampleRate)
        let envelope = decibels(try analysis.estimate(pulses, contour: steadyContour(f0: 125, duration: 0.3)).row(1))
        let binWidth = Double(sampleRate) / Double(analysis.fftSize)
        let band = envelope[Int(200 / binWidth)...Int(7500 / binWidth)]
        #expect(band.max()! - band.min()! < 0.5)
    }

    @Test func everyFrameIsFinitePositiveWhateverTheInput() throws {
        let sampleRate = 8000
        let count = 2400
        let inputs: [[Double]] = [
            [Double](repeating: 0, count: count),
            [Double](repeating: 0.5, count: count),
            Signals.whiteNoise(count: count),
        ]
        let contour = try F0Contour(time: [0, 0.1, 0.2, 0.3, 0.4], f0: [0, 120, -5, 3999, 1e6])
        let analysis = try CheapTrick(sampleRate: sampleRate)
        for signal in inputs {
            let spectrogram = try analysis.estimate(signal, contour: contour)
            #expect(spectrogram.rows == 5 && spectrogram.columns == analysis.fftSize / 2 + 1)
            #expect(spectrogram.storage.allSatisfy { $0.isFinite && $0 > 0 })
        }
    }

    @Test func shortInputAtTheHighestRate() throws {
        let sampleRate = 192_000
        let signal = Signals.vowel(f0: 200, sampleRate: sampleRate, duration: 0.045)
        let analysis = try CheapTrick(sampleRate: sampleRate)
        let spectrogram = try analysis.estimate(signal, contour: F0Contour(f0: [0, 200], framePeriod: 5))
        #expect(analysis.fftSize == 8192)
        #expect(spectrogram.storage.allSatisfy { $0.isFinite && $0 > 0 })
    }

    @Test func unvoicedFramesAreAnalysedLikeWorldsDefaultF0() throws {
        let sampleRate = 16000
        let noise = Signals.whiteNoise(count: 4800)
        let analysis = try CheapTrick(sampleRate: sampleRate)
        let spectrogram = try analysis.estimate(noise, contour: F0Contour(time: [0.15, 0.15], f0: [0, 500]))
        for bin in 0..<spectrogram.columns {
            #expect(abs(spectrogram[0, bin] / spectrogram[1, bin] - 1) < 1e-6)
        }
    }

    /// Half silence (where only the safeguard noise shapes the spectrum), half vowel with a gliding F0.
    private func silenceThenVowel(sampleRate: Int) -> (signal: [Double], contour: F0Contour) {
        let vowel = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.5)
        let signal = [Double](repeating: 0, count: vowel.count) + vowel
        let frameCount = F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: 5)
        let f0 = (0..<frameCount).map { $0 < frameCount / 2 ? 0 : 120 + Double($0 % 40) * 3 }
        return (signal, F0Contour(f0: f0, framePeriod: 5))
    }

    @Test func anyThreadCountGivesTheSameSpectrogram() throws {
        let (signal, contour) = silenceThenVowel(sampleRate: 8000)
        let analysis = try CheapTrick(sampleRate: 8000)
        let single = try analysis.estimate(signal, contour: contour)
        for threads in [2, 3, 8] {
            #expect(try analysis.estimate(signal, contour: contour, threads: threads) == single, "\(threads) threads")
        }
    }

    /// Restarted at each frame (as in a stream), the noise leaves a frame's envelope independent of the other
    /// frames of its call; WORLD's single sequence makes it depend on every frame before.
    @Test func framesRestartingTheNoiseDoNotDependOnTheirCall() throws {
        let (signal, contour) = silenceThenVowel(sampleRate: 8000)
        let first = contour.frameCount / 3
        let later = try F0Contour(time: Array(contour.time[first...]), f0: Array(contour.f0[first...]))
        for noise in [SafeguardNoise.throughCall, .eachFrame] {
            let analysis = try CheapTrick(sampleRate: 8000, options: .init(), shared: false, noise: noise)
            let whole = try analysis.estimate(signal, contour: contour)
            let part = try analysis.estimate(signal, contour: later)
            let unchanged = (0..<later.frameCount).allSatisfy { part.row($0) == whole.row(first + $0) }
            #expect(unchanged == (noise == .eachFrame), "\(noise)")
        }
    }

    @Test func repeatedCallsGiveTheSameSpectrogram() throws {
        let (signal, contour) = silenceThenVowel(sampleRate: 8000)
        let analysis = try CheapTrick(sampleRate: 8000)
        let first = try analysis.estimate(signal, contour: contour)
        #expect(try analysis.estimate(signal, contour: contour) == first)
        #expect(try CheapTrick(sampleRate: 8000).estimate(signal, contour: contour) == first)
    }

    /// A matrix reused from call to call, larger or smaller than the next result, holds exactly that result.
    @Test func estimatingIntoAReusedMatrixGivesTheSameSpectrogram() throws {
        let (signal, contour) = silenceThenVowel(sampleRate: 8000)
        let analysis = try CheapTrick(sampleRate: 8000)
        try expectReusedMatrixHoldsEachResult(
            signal: signal, contour: contour, fewerFrames: 3, initial: try Matrix(rows: 1, columns: 7, repeating: -1),
            estimate: { try analysis.estimate(signal, contour: $0) },
            estimateInto: { analysis.estimate($0, contour: $1, threads: $2, into: &$3) })
    }
}
