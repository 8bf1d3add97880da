import Foundation
import KoeWorld
import Testing
import TestSupport

/// The whole vocoder on a steady vowel: analysis, synthesis, and analysis again must agree.
@Suite struct AnalysisSynthesisTests {
    private struct Analysis {
        let f0: [Double]
        let spectrogram: Matrix
    }

    private func analyze(_ signal: [Double], sampleRate: Int) throws -> (Analysis, Matrix) {
        let raw = try Dio(sampleRate: sampleRate).estimate(signal)
        let contour = try StoneMask(sampleRate: sampleRate).refine(signal, contour: raw)
        let cheapTrick = try CheapTrick(sampleRate: sampleRate)
        let spectrogram = try cheapTrick.estimate(signal, contour: contour)
        let aperiodicity = try D4C(sampleRate: sampleRate, fftSize: cheapTrick.fftSize).estimate(signal, contour: contour)
        return (Analysis(f0: contour.f0, spectrogram: spectrogram), aperiodicity)
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// Mean natural-log envelope over the middle half of the frames.
    private func meanLogEnvelope(_ spectrogram: Matrix) -> [Double] {
        let rows = (spectrogram.rows / 4)..<(spectrogram.rows * 3 / 4)
        return (0..<spectrogram.columns).map { bin in
            rows.reduce(0) { $0 + log(spectrogram[$1, bin]) } / Double(rows.count)
        }
    }

    @Test(arguments: [16000, 48000])
    func steadyVowelKeepsItsF0AndEnvelope(sampleRate: Int) throws {
        let vowel = Signals.vowel(f0: 160, sampleRate: sampleRate, duration: 0.8)
        let (first, aperiodicity) = try analyze(vowel, sampleRate: sampleRate)
        let resynthesized = try Synthesis(sampleRate: sampleRate, framePeriod: 5)
            .synthesize(f0: first.f0, spectrogram: first.spectrogram, aperiodicity: aperiodicity)
        let (second, _) = try analyze(resynthesized, sampleRate: sampleRate)

        let before = median(first.f0.filter { $0 > 0 })
        let after = median(second.f0.filter { $0 > 0 })
        #expect(abs(before / 160 - 1) < 0.01)
        #expect(abs(after / before - 1) < 0.01)

        let hertzPerBin = Double(sampleRate) / Double(2 * (first.spectrogram.columns - 1))
        let band = Int(100 / hertzPerBin)..<Int(4000 / hertzPerBin)
        let original = meanLogEnvelope(first.spectrogram)
        let again = meanLogEnvelope(second.spectrogram)
        let squared = band.reduce(0.0) { sum, bin in
            let decibels = 10 / log(10.0) * (again[bin] - original[bin])
            return sum + decibels * decibels
        }
        #expect((squared / Double(band.count)).squareRoot() < 1.5)
    }
}
