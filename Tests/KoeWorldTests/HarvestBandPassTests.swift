import Foundation
import KoeDSP
import Testing
import TestSupport
@testable import KoeWorld

/// Harvest's block-wise parts against WORLD's whole-signal computations, written out here as WORLD does them.
@Suite struct HarvestBandPassTests {
    /// Voice, exact digital silence and white noise (whose Nyquist bin is large, so WORLD's mirroring is too),
    /// several blocks long.
    private func testSignal() -> [Double] {
        let noise = Signals.whiteNoise(count: 6000, amplitude: 0.3, seed: 7)
        return Signals.vowel(f0: 140, sampleRate: 8000, duration: 1.2) + [Double](repeating: 0, count: 5000) + noise
            + Signals.vowel(f0: 230, sampleRate: 8000, duration: 0.6)
    }

    /// WORLD's band-pass of the whole signal at one FFT size, the top two bins mirrored in place as WORLD leaves
    /// them (`mirrored`) or the true product.
    private func worldBandPass(
        _ samples: [Double], filter: HarvestFilterBank.Filter, longest: HarvestFilterBank.Filter, rate: Double,
        mirrored: Bool
    ) -> [Double] {
        let fftSize = Matlab.suitableFFTSize(samples.count + 5 + 2 * Int(2.0 * rate / longest.centre))
        let signal = ForwardRealFFT(size: fftSize)
        for (i, sample) in samples.enumerated() {
            signal.waveform[i] = sample
        }
        signal.execute()
        let taps = ForwardRealFFT(size: fftSize)
        for (i, tap) in filter.taps.enumerated() {
            taps.waveform[i] = tap
        }
        taps.execute()
        let inverse = InverseRealFFT(size: fftSize)
        let half = fftSize / 2
        for k in 0...half {
            inverse.spectrum[k] = signal.spectrum[k] * taps.spectrum[k]
        }
        if mirrored {
            let below = inverse.spectrum[half - 1]
            inverse.spectrum[half] = signal.spectrum[half] * below
            inverse.spectrum[half - 1] = inverse.spectrum[half]
        }
        inverse.execute()
        return (0..<samples.count).map { inverse.waveform[$0 + filter.half + 1] / Double(fftSize) }
    }

    @Test func blockWiseBandPassIsWorldsWholeSignalProduct() {
        let signal = Harvest.DecimatedSignal(testSignal(), sampleRate: 8000)
        let bank = HarvestFilterBank(centres: [64.6, 101.0, 333.0, 880.0], sampleRate: signal.sampleRate)
        let bandPass = Harvest.BandPass(signal: signal, filterBank: bank)
        let scale = Double(bank.spectra.fftSize)
        let inverseFFT = InverseRealFFT(size: bandPass.fftSize)
        var output = [Double](repeating: 0, count: signal.samples.count)
        for (channel, filter) in bank.filters.enumerated() {
            output.withUnsafeMutableBufferPointer {
                bandPass.filter(channel: channel, into: $0, inverseFFT: inverseFFT)
            }
            let world = worldBandPass(
                signal.samples, filter: filter, longest: bank.filters[0], rate: signal.sampleRate, mirrored: true)
            let unmirrored = worldBandPass(
                signal.samples, filter: filter, longest: bank.filters[0], rate: signal.sampleRate, mirrored: false)
            let peak = world.map(abs).max()!
            let error = zip(output, world).map { abs($0 / scale - $1) }.max()!
            let mirroring = zip(world, unmirrored).map { abs($0 - $1) }.max()!
            // The mirroring itself is far above rounding here, so a block-wise filter without it would fail.
            #expect(mirroring > 100 * error, "channel \(channel): mirroring \(mirroring), error \(error)")
            #expect(error <= 1e-14 * peak, "channel \(channel): error \(error) of peak \(peak)")
        }
    }

    /// WORLD's smoothing: the whole padded contour through the forward-backward low-pass once per voiced section.
    private func worldSmoothed(_ f0: [Double]) -> [Double] {
        let (b0, b1, a0, a1) = (0.0078202080334971724, 0.015640416066994345, 1.7347257688092754, -0.76600660094326412)
        let padding = 300
        let padded = [Double](repeating: 0, count: padding) + f0 + [Double](repeating: 0, count: padding)
        var result = [Double](repeating: 0, count: f0.count)
        for section in Harvest.voicedSections(padded) {
            let held = padded.indices.map { padded[min(max($0, section.start), section.end)] }
            var forward = [Double](repeating: 0, count: held.count)
            var (w0, w1) = (0.0, 0.0)
            for i in held.indices {
                let w = held[i] + a0 * w0 + a1 * w1
                forward[i] = b0 * w + b1 * w0 + b0 * w1
                (w1, w0) = (w0, w)
            }
            (w0, w1) = (0.0, 0.0)
            for i in held.indices.reversed() {
                let w = forward[i] + a0 * w0 + a1 * w1
                if i >= section.start && i <= section.end {
                    result[i - padding] = b0 * w + b1 * w0 + b0 * w1
                }
                (w1, w0) = (w0, w)
            }
        }
        return result
    }

    @Test func smoothingGivesWorldsValuesExactly() {
        var random = SeededRandom(seed: 11)
        var f0: [Double] = []
        // Sections of 1 to 900 frames, at the ends too, between gaps of 0 to 700 frames.
        f0 += (0..<40).map { _ in Double.random(in: 100...300, using: &random) }
        for _ in 0..<30 {
            f0 += [Double](repeating: 0, count: Int.random(in: 1...700, using: &random))
            let level = Double.random(in: 80...600, using: &random)
            f0 += (0..<Int.random(in: 1...900, using: &random)).map { _ in level * Double.random(in: 0.9...1.1, using: &random) }
        }
        #expect(Harvest.smoothed(f0) == worldSmoothed(f0))
    }
}
