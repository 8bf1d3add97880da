import Testing
import TestSupport
@testable import KoeWorld

@Suite struct StoneMaskTests {
    @Test(arguments: [0.97, 1.03])
    func pullsAnOffF0TowardsTheSine(ratio: Double) throws {
        let truth = 150.0
        let sampleRate = 16000
        let signal = Signals.sine(frequency: truth, sampleRate: sampleRate, duration: 0.4)
        let frames = F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: 5)
        let initial = F0Contour(f0: Array(repeating: truth * ratio, count: frames), framePeriod: 5)
        let refined = try StoneMask(sampleRate: sampleRate).refine(signal, contour: initial)
        #expect(refined.time == initial.time)
        // Leakage of the sine into the second harmonic's bin biases the estimate slightly (0.2 %),
        // but the 3 % error must shrink at least tenfold.
        let initialError = abs(truth * ratio - truth)
        for frame in DioTests.middleFrames(of: refined, duration: 0.4) {
            #expect(abs(refined.f0[frame] - truth) < initialError / 10, "frame \(frame): \(refined.f0[frame]) Hz")
        }
    }

    @Test(arguments: [100.0, 200.0, 400.0])
    func refinedDioContourStaysOnTheVowel(f0: Double) throws {
        let duration = 0.5
        let signal = Signals.vowel(f0: f0, sampleRate: 16000, duration: duration)
        let contour = try Dio(sampleRate: 16000).estimate(signal)
        let refined = try StoneMask(sampleRate: 16000).refine(signal, contour: contour)
        for frame in DioTests.middleFrames(of: refined, duration: duration) {
            #expect(abs(refined.f0[frame] - f0) < 0.01 * f0, "frame \(frame): \(refined.f0[frame]) Hz")
        }
    }

    @Test func framesOutsideTheRefinableRangeAreUnvoiced() throws {
        let sampleRate = 8000
        let signal = Signals.sine(frequency: 150, sampleRate: sampleRate, duration: 0.2)
        // Unvoiced, below StoneMask's 40 Hz floor, and above a twelfth of the sample rate.
        let initial = F0Contour(f0: [0, 30, 40, 700, 0], framePeriod: 5)
        let refined = try StoneMask(sampleRate: sampleRate).refine(signal, contour: initial)
        #expect(refined.f0 == [0, 0, 0, 0, 0])
    }

    @Test func silenceKeepsTheInitialF0() throws {
        // Nothing to measure: WORLD falls back to the initial estimate rather than inventing one.
        let signal = [Double](repeating: 0, count: 4000)
        let initial = F0Contour(f0: [0, 120, 120, 0], framePeriod: 5)
        let refined = try StoneMask(sampleRate: 8000).refine(signal, contour: initial)
        #expect(refined.f0 == initial.f0)
    }

    @Test func aReusedRefinerGivesTheSameF0() throws {
        let sampleRate = 16000
        let signal = Signals.vowel(f0: 130, sampleRate: sampleRate, duration: 0.3)
        let contour = try Dio(sampleRate: sampleRate).estimate(signal)
        let expected = try StoneMask(sampleRate: sampleRate).refine(signal, contour: contour).f0
        let refiner = StoneMask.Refiner(sampleRate: sampleRate)
        var f0 = [Double](repeating: -1, count: contour.frameCount + 3)
        signal.withUnsafeBufferPointer { samples in
            refiner.refine(samples, contour: contour, into: &f0)
            #expect(f0 == expected)
            refiner.refine(samples, contour: contour, into: &f0)
            #expect(f0 == expected)
        }
    }

    @Test func refiningFromTheSamplesAroundEachFrameEqualsWholeSignalRefinement() throws {
        let sampleRate = 16000
        let signal = Signals.vowel(f0: 130, sampleRate: sampleRate, duration: 0.3)
        let contour = try Dio(sampleRate: sampleRate).estimate(signal)
        let whole = try StoneMask(sampleRate: sampleRate).refine(signal, contour: contour)
        let refiner = StoneMask.Refiner(sampleRate: sampleRate)
        let reach = StoneMask.reach(sampleRate: sampleRate, lowestF0: 71)
        for frame in contour.f0.indices {
            let centre = Int(contour.time[frame] * Double(sampleRate))
            let range = max(0, centre - reach)..<min(signal.count, centre + reach + 1)
            let refined = Array(signal[range]).withUnsafeBufferPointer { samples in
                refiner.refined(
                    contour.f0[frame], at: contour.time[frame],
                    in: SignalView(samples: samples, start: range.lowerBound, length: signal.count))
            }
            #expect(refined == whole.f0[frame], "frame \(frame)")
        }
    }
}
