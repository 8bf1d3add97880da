import Foundation
@testable import KoeWorld
import Testing
import TestSupport

@Suite struct HarvestTests {
    /// Frames in the middle half of a contour, away from onset and release.
    private func middleFrames(_ contour: F0Contour) -> ArraySlice<Double> {
        contour.f0[(contour.frameCount / 4)..<(contour.frameCount * 3 / 4)]
    }

    @Test(arguments: [100.0, 200.0, 400.0])
    func tracksSyntheticVowel(f0: Double) throws {
        let signal = Signals.vowel(f0: f0, sampleRate: 8000, duration: 0.3)
        let contour = try Harvest(sampleRate: 8000).estimate(signal)
        let middle = middleFrames(contour)
        #expect(middle.allSatisfy { $0 > 0 }, "middle frames should be voiced: \(Array(middle))")
        for estimate in middle where estimate > 0 {
            #expect(abs(estimate - f0) / f0 < 0.01, "estimated \(estimate) Hz for \(f0) Hz")
        }
    }

    @Test func tracksVowelAfterDecimation() throws {
        let signal = Signals.vowel(f0: 150, sampleRate: 48000, duration: 0.3)
        let contour = try Harvest(sampleRate: 48000).estimate(signal)
        let middle = middleFrames(contour)
        #expect(middle.allSatisfy { abs($0 - 150) / 150 < 0.01 }, "\(Array(middle))")
    }

    @Test func silenceIsUnvoiced() throws {
        let contour = try Harvest(sampleRate: 8000).estimate([Double](repeating: 0, count: 2400))
        #expect(contour.f0.allSatisfy { $0 == 0 })
    }

    @Test func whiteNoiseIsAlmostAllUnvoiced() throws {
        let noise = Signals.whiteNoise(count: 2400, seed: 3)
        let contour = try Harvest(sampleRate: 8000).estimate(noise)
        let voiced = contour.f0.filter { $0 > 0 }.count
        #expect(Double(voiced) <= 0.05 * Double(contour.frameCount), "\(voiced) of \(contour.frameCount) frames voiced")
    }

    @Test func constantAndShortestInputsGiveFiniteContours() throws {
        let rate = 192_000
        let shortest = SignalRequirements.minimumLength(sampleRate: rate, f0Floor: 71)
        for signal in [[Double](repeating: 0.3, count: shortest), Signals.whiteNoise(count: shortest)] {
            let contour = try Harvest(sampleRate: rate).estimate(signal)
            #expect(contour.frameCount == 9)
            #expect(contour.f0.allSatisfy { $0.isFinite && $0 >= 0 })
        }
    }

    @Test func frameCountAndTimeAxisFollowWorld() throws {
        // 4001 samples at 8 kHz last 500.125 ms: frames at 0, 5, ..., 500 ms.
        let silence = [Double](repeating: 0, count: 4001)
        let contour = try Harvest(sampleRate: 8000).estimate(silence)
        #expect(contour.frameCount == 101)
        #expect(try Harvest(sampleRate: 8000).frameCount(samples: 4001) == 101)
        #expect(contour.time.first == 0)
        #expect(contour.time[1] == 0.005)
        #expect(contour.time.last == 0.5)

        let coarse = try Harvest(sampleRate: 8000, options: .init(framePeriod: 10)).estimate(silence)
        #expect(coarse.frameCount == 51)
        #expect(try Harvest(sampleRate: 8000, options: .init(framePeriod: 10)).frameCount(samples: 4001) == 51)
        #expect(coarse.time.last == 0.5)
    }

    @Test func framesAreTakenFromTheOneMillisecondContour() throws {
        let signal = Signals.vowel(f0: 180, sampleRate: 8000, duration: 0.2)
        let fine = try Harvest(sampleRate: 8000, options: .init(framePeriod: 1)).estimate(signal)
        let coarse = try Harvest(sampleRate: 8000, options: .init(framePeriod: 5)).estimate(signal)
        #expect(fine.frameCount == 201)
        for (frame, f0) in coarse.f0.enumerated() {
            #expect(f0 == fine.f0[frame * 5])
        }
    }

    @Test func searchRangeBoundsTheEstimate() throws {
        let signal = Signals.vowel(f0: 300, sampleRate: 8000, duration: 0.3)
        let contour = try Harvest(sampleRate: 8000, options: .init(f0Floor: 71, f0Ceil: 200)).estimate(signal)
        #expect(contour.f0.allSatisfy { $0 == 0 || $0 <= 200 })
    }

    /// One Harvest keeps its band filters' spectra between estimates; signals of other lengths (other FFT
    /// sizes, some too large to keep) in between must not change what it finds.
    @Test func reusedHarvestMatchesAFreshOne() throws {
        // At 8 kHz these are filtered in three, one and five blocks of the bank's one FFT size.
        let signals = [
            Signals.vowel(f0: 150, sampleRate: 8000, duration: 1.0),
            Signals.vowel(f0: 230, sampleRate: 8000, duration: 0.3),
            Signals.vowel(f0: 110, sampleRate: 8000, duration: 2.2),
        ]
        let fresh = try signals.map { try Harvest(sampleRate: 8000).estimate($0).f0 }
        let harvest = try Harvest(sampleRate: 8000)
        for index in [0, 1, 0, 2, 0] {
            #expect(try harvest.estimate(signals[index]).f0 == fresh[index], "signal \(index)")
        }
    }

    /// Exact zeros sit on neither side of a zero crossing: bursts of voice around digital silence keep their
    /// F0, and the silence stays unvoiced.
    @Test func burstsAroundDigitalSilence() throws {
        let burst = Signals.vowel(f0: 160, sampleRate: 8000, duration: 0.4)
        let signal = burst + [Double](repeating: 0, count: 4000) + burst
        let f0 = try Harvest(sampleRate: 8000).estimate(signal).f0
        // 5 ms frames: bursts over 0-400 ms and 900-1300 ms, silence between.
        let voiced = Array(f0[20..<60]) + Array(f0[200..<240])
        #expect(voiced.allSatisfy { abs($0 - 160) / 160 < 0.01 }, "\(voiced)")
        #expect(f0[100..<160].allSatisfy { $0 == 0 }, "\(Array(f0[100..<160]))")
    }

    @Test func defaultsAreWorlds() {
        let options = Harvest.Options()
        #expect(options.framePeriod == 5)
        #expect(options.f0Floor == 71)
        #expect(options.f0Ceil == 800)
    }
}
