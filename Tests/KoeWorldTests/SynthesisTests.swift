import Foundation
import KoeWorld
import Testing

@Suite struct SynthesisTests {
    /// Parameters held constant over `frames` frames.
    private func steadyParameters(
        frames: Int, bins: Int, f0: Double, power: Double, aperiodicity: Double
    ) throws -> (f0: [Double], spectrogram: Matrix, aperiodicity: Matrix) {
        (
            [Double](repeating: f0, count: frames),
            try Matrix(rows: frames, columns: bins, repeating: power),
            try Matrix(rows: frames, columns: bins, repeating: aperiodicity)
        )
    }

    /// Autocorrelation at `lag`, normalised by the energy at lag 0.
    private func normalisedAutocorrelation(_ x: ArraySlice<Double>, lag: Int) -> Double {
        let samples = Array(x)
        let energy = samples.reduce(0) { $0 + $1 * $1 }
        var sum = 0.0
        for i in 0..<(samples.count - lag) {
            sum += samples[i] * samples[i + lag]
        }
        return sum / energy
    }

    @Test func constantF0WithoutAperiodicityRepeatsEveryPeriod() throws {
        let sampleRate = 16000
        let parameters = try steadyParameters(frames: 100, bins: 513, f0: 200, power: 1e-4, aperiodicity: 0)
        let output = try Synthesis(sampleRate: sampleRate, framePeriod: 5).synthesize(
            f0: parameters.f0, spectrogram: parameters.spectrogram, aperiodicity: parameters.aperiodicity)

        let middle = output[2000..<6000]
        let lags = (sampleRate / 400)...(sampleRate / 100)
        let best = lags.max { normalisedAutocorrelation(middle, lag: $0) < normalisedAutocorrelation(middle, lag: $1) }!
        #expect(best == sampleRate / 200)
        #expect(normalisedAutocorrelation(middle, lag: best) > 0.9)
    }

    @Test func unvoicedFullAperiodicityGivesNoiseAtTheEnvelopeLevel() throws {
        let power = 1e-4
        let parameters = try steadyParameters(frames: 100, bins: 513, f0: 0, power: power, aperiodicity: 1)
        let output = try Synthesis(sampleRate: 16000, framePeriod: 5).synthesize(
            f0: parameters.f0, spectrogram: parameters.spectrogram, aperiodicity: parameters.aperiodicity)

        let middle = output[1000..<7000]
        let rms = (middle.reduce(0) { $0 + $1 * $1 } / Double(middle.count)).squareRoot()
        // A flat power spectrum p filters unit-variance noise into noise of variance p.
        #expect(abs(rms / power.squareRoot() - 1) < 0.1)
        for lag in 1...320 {
            #expect(abs(normalisedAutocorrelation(middle, lag: lag)) < 0.1)
        }
    }

    @Test(arguments: [
        (sampleRate: 16000, framePeriod: 5.0, frames: 100, expected: 8000),
        (sampleRate: 44100, framePeriod: 1.0, frames: 7, expected: 308),
        (sampleRate: 22050, framePeriod: 10.0, frames: 3, expected: 661),
        (sampleRate: 8000, framePeriod: 2.5, frames: 1, expected: 20),
    ])
    func outputLengthIsFramesTimesPeriodTruncated(sampleRate: Int, framePeriod: Double, frames: Int, expected: Int) throws {
        let synthesis = try Synthesis(sampleRate: sampleRate, framePeriod: framePeriod)
        #expect(synthesis.outputLength(frameCount: frames) == expected)
        let parameters = try steadyParameters(frames: frames, bins: 257, f0: 150, power: 1e-4, aperiodicity: 0.2)
        let output = try synthesis.synthesize(
            f0: parameters.f0, spectrogram: parameters.spectrogram, aperiodicity: parameters.aperiodicity)
        #expect(output.count == expected)
    }

    @Test func twoCallsGiveIdenticalOutput() throws {
        let frames = 60
        let f0 = (0..<frames).map { $0 % 20 < 12 ? 120 + Double($0) : 0 }
        let spectrogram = try Matrix(rows: frames, columns: 513, repeating: 1e-3)
        let aperiodicity = try Matrix(rows: frames, columns: 513, repeating: 0.5)
        let synthesis = try Synthesis(sampleRate: 16000, framePeriod: 5)
        let first = try synthesis.synthesize(f0: f0, spectrogram: spectrogram, aperiodicity: aperiodicity)
        let second = try synthesis.synthesize(f0: f0, spectrogram: spectrogram, aperiodicity: aperiodicity)
        #expect(first == second)
        #expect(first.contains { $0 != 0 })
    }

    @Test(arguments: [
        (sampleRate: 8000, framePeriod: 1.0, bins: 129, f0: 0.0, power: 1e-4, aperiodicity: 0.0),
        (sampleRate: 8000, framePeriod: 5.0, bins: 129, f0: 30.0, power: 1e-4, aperiodicity: 0.0),
        (sampleRate: 16000, framePeriod: 10.0, bins: 513, f0: 200.0, power: 0.0, aperiodicity: 0.0),
        (sampleRate: 16000, framePeriod: 5.0, bins: 513, f0: 0.0, power: 0.0, aperiodicity: 1.0),
        (sampleRate: 192_000, framePeriod: 5.0, bins: 4097, f0: 800.0, power: 1e-4, aperiodicity: 0.0),
    ])
    func degenerateParametersGiveFiniteOutput(
        sampleRate: Int, framePeriod: Double, bins: Int, f0: Double, power: Double, aperiodicity: Double
    ) throws {
        let synthesis = try Synthesis(sampleRate: sampleRate, framePeriod: framePeriod)
        for frames in [1, 2, 10] {
            let parameters = try steadyParameters(
                frames: frames, bins: bins, f0: f0, power: power, aperiodicity: aperiodicity)
            let output = try synthesis.synthesize(
                f0: parameters.f0, spectrogram: parameters.spectrogram, aperiodicity: parameters.aperiodicity)
            #expect(output.count == synthesis.outputLength(frameCount: frames))
            #expect(output.allSatisfy { $0.isFinite })
        }
    }

    @Test func noFramesGiveNoSamples() throws {
        let output = try Synthesis(sampleRate: 16000, framePeriod: 5).synthesize(
            f0: [], spectrogram: try Matrix(rows: 0, columns: 513), aperiodicity: Matrix(rows: 0, columns: 513))
        #expect(output.isEmpty)
    }
}
