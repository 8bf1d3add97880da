@testable import KoeWorld
import Testing
import TestSupport

@Suite struct DioTests {
    /// Frames at least 0.1 s away from either end, where the estimate has settled.
    static func middleFrames(of contour: F0Contour, duration: Double) -> [Int] {
        contour.time.indices.filter { contour.time[$0] >= 0.1 && contour.time[$0] <= duration - 0.1 }
    }

    @Test(arguments: [100.0, 200.0, 400.0])
    func findsTheF0OfASyntheticVowel(f0: Double) throws {
        let duration = 0.5
        let signal = Signals.vowel(f0: f0, sampleRate: 16000, duration: duration)
        let contour = try Dio(sampleRate: 16000).estimate(signal)
        let middle = Self.middleFrames(of: contour, duration: duration)
        #expect(!middle.isEmpty)
        for frame in middle {
            #expect(abs(contour.f0[frame] - f0) < 0.01 * f0, "frame \(frame): \(contour.f0[frame]) Hz")
        }
    }

    @Test(arguments: [8000, 44100])
    func findsTheF0AtOtherRates(sampleRate: Int) throws {
        let duration = 0.4
        let signal = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: duration)
        let contour = try Dio(sampleRate: sampleRate).estimate(signal)
        for frame in Self.middleFrames(of: contour, duration: duration) {
            #expect(abs(contour.f0[frame] - 150) < 1.5, "frame \(frame): \(contour.f0[frame]) Hz")
        }
    }

    @Test func silenceIsUnvoiced() throws {
        let contour = try Dio(sampleRate: 16000).estimate([Double](repeating: 0, count: 8000))
        #expect(contour.f0.allSatisfy { $0 == 0 })
    }

    @Test func constantSignalIsUnvoiced() throws {
        let contour = try Dio(sampleRate: 16000).estimate([Double](repeating: 0.3, count: 8000))
        #expect(contour.f0.allSatisfy { $0 == 0 })
    }

    @Test func whiteNoiseIsAlmostEntirelyUnvoiced() throws {
        let contour = try Dio(sampleRate: 16000).estimate(Signals.whiteNoise(count: 8000))
        let voiced = contour.f0.filter { $0 > 0 }.count
        #expect(Double(voiced) <= 0.05 * Double(contour.frameCount))
    }

    @Test func frameCountAndTimeAxisFollowWorld() throws {
        // One frame at 0 s, then one every period while it still starts inside the signal.
        let oneSecond = try Dio(sampleRate: 16000).estimate(Signals.vowel(f0: 120, sampleRate: 16000, duration: 1))
        #expect(oneSecond.frameCount == 201)
        #expect(oneSecond.time.first == 0)
        #expect(oneSecond.time.last == 1.0)

        let justShort = try Dio(sampleRate: 16000).estimate(Array(repeating: 0, count: 15999))
        #expect(justShort.frameCount == 200)
        #expect(try Dio(sampleRate: 16000).frameCount(samples: 16000) == 201)
        #expect(try Dio(sampleRate: 16000).frameCount(samples: 15999) == 200)

        var options = Dio.Options()
        options.framePeriod = 10
        let tenMilliseconds = try Dio(sampleRate: 22050, options: options).estimate(Array(repeating: 0, count: 11025))
        #expect(tenMilliseconds.frameCount == 51)
        #expect(try Dio(sampleRate: 22050, options: options).frameCount(samples: 11025) == 51)
        for (frame, time) in tenMilliseconds.time.enumerated() {
            #expect(time == Double(frame) * 10 / 1000)
        }
    }

    @Test func everySpeedGivesAFiniteContourOfTheSameLength() throws {
        let signal = Signals.vowel(f0: 180, sampleRate: 16000, duration: 0.3)
        let frames = F0Contour.frameCount(samples: signal.count, sampleRate: 16000, framePeriod: 5)
        for speed in 1...12 {
            var options = Dio.Options()
            options.speed = speed
            let contour = try Dio(sampleRate: 16000, options: options).estimate(signal)
            #expect(contour.frameCount == frames)
            #expect(contour.f0.allSatisfy { $0.isFinite && $0 >= 0 })
        }
    }

    @Test(arguments: [8000, 192_000])
    func shortestValidInputDoesNotTrap(sampleRate: Int) throws {
        let length = SignalRequirements.minimumLength(sampleRate: sampleRate, f0Floor: 71)
        let signals = Signals.edgeCases(count: length, sampleRate: sampleRate)
        for signal in signals {
            var options = Dio.Options()
            for speed in [1, 12] {
                options.speed = speed
                let contour = try Dio(sampleRate: sampleRate, options: options).estimate(signal)
                #expect(contour.frameCount == F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: 5))
                #expect(contour.f0.allSatisfy { $0.isFinite && $0 >= 0 })
            }
        }
    }
}
