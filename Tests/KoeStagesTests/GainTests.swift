import Foundation
import KoeStages
import TestSupport
import Testing

@Suite struct GainTests {
    @Test func decibelsBecomeAFactor() throws {
        #expect(abs(try Gain(decibels: 20 * log10(2.0)).factor - 2) < 1e-12)
        #expect(abs(try Gain(decibels: -20).factor - 0.1) < 1e-12)
        let gain = try Gain(decibels: -6)
        #expect(try gain.process([0.5, -1, 0]) + gain.finish() == [0.5 * gain.factor, -gain.factor, 0])
        #expect(gain.latency == 0 && gain.lengthRatio == 1)
    }

    @Test func zeroDecibelsMakesNoStage() throws {
        #expect(try Gain.make(decibels: 0) == nil)
        #expect(try Gain.make(decibels: 0.5) != nil)
    }

    @Test func refusesNonFiniteGain() {
        #expect(throws: KoeError.self) { try Gain(decibels: .infinity) }
        #expect(throws: KoeError.self) { try Gain.make(decibels: .nan) }
    }

    @Test(arguments: [1, 17, 4096])
    func chunkedEqualsWhole(chunkSize: Int) throws {
        let signal = Signals.whiteNoise(count: 10000, amplitude: 0.3, seed: 3)
        let whole = try Gain(decibels: 4.5).process(signal)
        let streamed = try Gain(decibels: 4.5)
        var output: [Double] = []
        for start in stride(from: 0, to: signal.count, by: chunkSize) {
            let end = min(start + chunkSize, signal.count)
            output += try streamed.process(Array(signal[start..<end]))
        }
        #expect(output == whole)
    }

    @Test(.enabled(if: Sox.isInstalled, "sox is not installed"), arguments: [-12.0, 3.5])
    func matchesSox(decibels: Double) throws {
        let signal = Sox.testSignal(sampleRate: 16000)
        let ours = try Gain(decibels: decibels).process(signal)
        let theirs = try Sox.apply(["gain", "\(decibels)"], to: signal, sampleRate: 16000)
        let snr = Sox.snr(ours, reference: theirs)
        print("gain \(decibels) dB vs sox gain: SNR \(String(format: "%.1f", snr)) dB")
        #expect(theirs.count == signal.count)
        #expect(snr >= 60)
    }
}
