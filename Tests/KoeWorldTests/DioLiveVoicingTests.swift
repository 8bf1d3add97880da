import Foundation
import Testing
import TestSupport
@testable import KoeWorld

/// Live mode's voicing decision (`Dio.LiveVoicing`) on scripted frames, its periodicity measure on generated
/// signals, and `StreamingDio`'s live mode on a deep voice with creak.
@Suite struct DioLiveVoicingTests {
    private let margin = 7

    /// One frame of scripted input: DIO's F0, the bands' candidates and scores, and the input's correlation at
    /// any F0.
    private struct Frame {
        var dio = 0.0
        var candidates = [0.0, 0.0, 0.0]
        var scores = [1.0, 1.0, 1.0]
        var correlation = 0.0
        /// The correlation at each F0, where it is not `correlation` at every one.
        var correlationAt: ((Double) -> Double)?
        /// The input's largest magnitude around the frame.
        var peak = 0.5
    }

    /// Decides `frames` in order, after the leading margin, each with the frames after it as its look-ahead;
    /// returns the F0 of each.
    private func decide(_ frames: [Frame], frameCount: Int? = nil) -> [Double] {
        var voicing = Dio.LiveVoicing(options: Dio.Options(), margin: margin)
        let bands = frames.first?.candidates.count ?? 0
        let allCandidates = frames.flatMap(\.candidates), allScores = frames.flatMap(\.scores)
        return frames.enumerated().map { index, frame in
            allCandidates.withUnsafeBufferPointer { candidates in
                allScores.withUnsafeBufferPointer { scores in
                    let cells = (index * bands)..<((index + 1) * bands)
                    let ahead = Dio.LiveVoicing.Ahead(
                        candidates: UnsafeBufferPointer(rebasing: candidates[cells.upperBound...]),
                        scores: UnsafeBufferPointer(rebasing: scores[cells.upperBound...]), bands: bands)
                    return voicing.decide(
                        frame: margin + index, dio: frame.dio, candidates: UnsafeBufferPointer(rebasing: candidates[cells]),
                        scores: UnsafeBufferPointer(rebasing: scores[cells]), ahead: ahead, peak: frame.peak,
                        frameCount: frameCount.map { $0 + margin }) { frame.correlationAt?($0) ?? frame.correlation }
                }
            }
        }
    }

    /// A frame DIO voices on clearly periodic input at `f0`, its band agreeing.
    private func clear(_ f0: Double) -> Frame {
        Frame(dio: f0, candidates: [f0, 0, 0], scores: [0.02, 1, 1], correlation: 0.95)
    }

    /// A frame DIO leaves unvoiced, one band offering `f0`, the input correlating as told.
    private func weak(_ f0: Double, correlation: Double = 0.2) -> Frame {
        Frame(dio: 0, candidates: [f0, 0, 0], scores: [0.3, 1, 1], correlation: correlation)
    }

    @Test func keepsEveryFrameDioVoices() {
        let frames = (0..<20).map { clear(100 + Double($0)) }
        #expect(decide(frames) == frames.map(\.dio))
    }

    /// Hysteresis: after clearly periodic frames a run carries on through weakly periodic ones that a band still
    /// follows, for `creditFrames` of them, and no further.
    @Test func holdsARunThroughWeakFramesForItsCredit() {
        let frames = Array(repeating: clear(90), count: 10) + Array(repeating: weak(91), count: 20)
        let f0 = decide(frames)
        let held = Dio.LiveVoicing.creditFrames
        #expect(f0[10..<(10 + held)].allSatisfy { $0 == 91 }, "\(f0)")
        #expect(f0[(10 + held)...].allSatisfy { $0 == 0 }, "\(f0)")
    }

    /// Where DIO's window jumps off a running voice (to a harmonic or a subharmonic) while a band still follows the
    /// voice, the run keeps to the voice if the input is clearly periodic there, as whole-signal DIO's repair
    /// would; a jump the input bears out better, on a run without credit, is DIO's to keep.
    @Test func keepsARunsF0WhereDioJumpsOffIt() {
        var jumped = Frame(dio: 150, candidates: [91, 150, 0], scores: [0.3, 0.02, 1])
        jumped.correlationAt = { $0 < 120 ? 0.9 : 0.7 }
        #expect(decide([clear(90), clear(90), jumped, clear(150)]) == [90, 90, 91, 150])
        var better = jumped
        better.correlationAt = { $0 < 120 ? 0.5 : 0.9 }
        let creditSpending = Frame(dio: 91, candidates: [91, 0, 0], scores: [0.02, 1, 1], correlation: 0.2)
        let creditSpent = [clear(90)] + Array(repeating: creditSpending, count: Dio.LiveVoicing.creditFrames)
        #expect(decide(creditSpent + [better]).last == 150)
        #expect(decide(creditSpent + [jumped]).last == 91)
    }

    /// A frame far quieter than the voice lately (a fading tail, a hum in a pause) is unvoiced whatever DIO and the
    /// correlation say; the run goes on beneath it, so a voice that grows loud again at a weaker candidate is
    /// still followed rather than waiting to start afresh.
    @Test func unvoicesSilenceButKeepsTheRunBeneathIt() {
        var quiet = weak(91, correlation: 0.9)
        quiet.peak = 0.5 * Dio.LiveVoicing.silence * 0.9
        var loudAgain = weak(92, correlation: 0.7)
        loudAgain.peak = 0.4
        let f0 = decide([clear(90), clear(90), quiet, quiet, loudAgain])
        #expect(f0 == [90, 90, 0, 0, 92], "\(f0)")
        var quietDio = clear(90)
        quietDio.peak = quiet.peak
        #expect(decide([clear(90), quietDio, clear(90)]) == [90, 0, 90])
        #expect(decide(Array(repeating: quietDio, count: 3)) == [90, 90, 90], "quiet alone is not silence")
    }

    /// A run holds as long as the input stays clearly periodic at a band's candidate, however long.
    @Test func holdsARunWhileTheInputIsClearlyPeriodic() {
        let frames = [clear(90)] + Array(repeating: weak(92, correlation: 0.9), count: 40)
        #expect(decide(frames).allSatisfy { $0 > 0 })
    }

    /// Continuity: the run follows the candidate nearest its last F0, whichever band offers it (here the lowest,
    /// though another band scores better), and stops where none is within DIO's allowed range.
    @Test func followsTheCandidateNearestTheLastF0() {
        var drifting = weak(0)
        drifting.candidates = [86, 172, 0]
        drifting.scores = [0.4, 0.01, 1]
        var jumped = weak(0)
        jumped.candidates = [0, 120, 0]
        jumped.scores = [1, 0.01, 1]
        let f0 = decide([clear(90), clear(90), drifting, jumped])
        #expect(f0[2] == 86)
        #expect(f0[3] == 0)
    }

    /// A continued frame takes the steadiest candidate within the allowed range of the nearest one, as DIO picks
    /// among agreeing bands, while the run goes on from the nearest: 80.5 Hz is within range of 89 but not of 93.
    @Test func continuesAtTheNearestCandidateButGivesTheSteadiest() {
        var agreeing = weak(0)
        agreeing.candidates = [89, 93, 0]
        agreeing.scores = [0.3, 0.1, 1]
        let f0 = decide([clear(90), clear(90), agreeing, weak(80.5)])
        #expect(f0[2] == 93)
        #expect(f0[3] == 80.5)
    }

    /// Where no band follows the run but the input is clearly periodic at its last F0, the run holds that F0.
    @Test func holdsTheLastF0OnClearlyPeriodicInputWithoutACandidate() {
        let silentBands = Frame(dio: 0, candidates: [0, 0, 0], scores: [1, 1, 1], correlation: 0.9)
        let f0 = decide([clear(90), silentBands, silentBands])
        #expect(f0[1...] == [90, 90])
        var aperiodic = silentBands
        aperiodic.correlation = 0.5
        #expect(decide([clear(90), aperiodic])[1] == 0)
    }

    /// A run starts where DIO's window cannot tell, on a steady candidate the input is clearly periodic at; not
    /// on an unsteady candidate, nor on input less than clearly periodic.
    @Test func startsARunOnlyOnASteadyClearlyPeriodicCandidate() {
        let onset = Frame(dio: 0, candidates: [0, 140, 280], scores: [1, 0.05, 0.2], correlation: 0.9)
        #expect(decide([onset]) == [140])
        var unsteady = onset
        unsteady.scores = [1, 0.15, 0.2]
        #expect(decide([unsteady]) == [0])
        var weakly = onset
        weakly.correlation = 0.8
        #expect(decide([weakly]) == [0])
    }

    /// A deep voice's run that broke off (DIO's window lost it) resumes on a steady candidate the input is only
    /// fairly periodic at, while the run's credit lasts and the look-ahead's frames carry on from it; without a
    /// run before, or where the look-ahead does not carry on, it waits for clearly periodic input.
    @Test func resumesARecentRunWhereTheLookAheadCarriesItOn() {
        let lost = Frame(dio: 0, candidates: [0, 0, 0], scores: [1, 1, 1], correlation: 0.3)
        let fair = Frame(dio: 0, candidates: [80, 0, 0], scores: [0.02, 1, 1], correlation: 0.7)
        let confirming = Dio.LiveVoicing.confirmingFrames
        let resumed = decide([clear(84), lost, lost] + Array(repeating: fair, count: confirming + 1))
        #expect(resumed[0] == 84 && resumed[1...2] == [0, 0])
        #expect(resumed[3] == 80, "\(resumed)")
        #expect(decide(Array(repeating: fair, count: confirming + 1))[0] == 0)
        let unconfirmed = decide([clear(84), lost, fair] + Array(repeating: lost, count: confirming))
        #expect(unconfirmed[2] == 0, "\(unconfirmed)")
        let credit = Dio.LiveVoicing.creditFrames
        let creditSpent = decide([clear(84)] + Array(repeating: lost, count: credit) + Array(repeating: fair, count: confirming + 1))
        #expect(creditSpent[credit + 1] == 0, "\(creditSpent)")
    }

    /// DIO also voices background noise: a run it would start on input not even weakly periodic is refused,
    /// unless a voice was heard lately (the run's credit).
    @Test func refusesARunDioStartsOnAperiodicInputWithoutCredit() {
        var noise = clear(120)
        noise.correlation = 0.1
        #expect(decide([noise, noise]) == [0, 0])
        let gap = Frame(dio: 0, candidates: [0, 0, 0], scores: [1, 1, 1], correlation: 0)
        #expect(decide([clear(120), gap, noise]) == [120, 0, 120])
    }

    /// WORLD's margins stay as DIO has them: nothing is voiced in the last frames of a finished signal.
    @Test func leavesTheMarginsToDio() {
        let frames = [clear(100)] + Array(repeating: weak(100, correlation: 0.95), count: margin + 2)
        let f0 = decide(frames, frameCount: frames.count)
        #expect(f0[0..<3].allSatisfy { $0 > 0 })
        #expect(f0[3...].allSatisfy { $0 == 0 }, "\(f0)")
    }

    // MARK: Periodicity

    /// Clearly periodic at a voice's F0 (and at a DIO candidate a few per cent off it), not at a wrong one; white
    /// noise is not even weakly periodic. The same at every rate.
    @Test(arguments: [8000, 16000, 44100, 48000])
    func measuresAVoiceAsPeriodicAndNoiseAsNot(sampleRate: Int) {
        let voice = Signals.vowel(f0: 85, sampleRate: sampleRate, duration: 0.3)
        var periodicity = Dio.Periodicity(rate: Double(sampleRate), f0Floor: 71)
        periodicity.push(voice)
        let centre = voice.count / 2
        #expect(periodicity.correlation(around: centre, f0: 85, available: voice.count) > 0.95)
        #expect(periodicity.correlation(around: centre, f0: 85 * 1.07, available: voice.count) > 0.95)
        #expect(periodicity.correlation(around: centre, f0: 85 * 1.5, available: voice.count) < 0.4)
        var noise = Dio.Periodicity(rate: Double(sampleRate), f0Floor: 71)
        noise.push(Signals.whiteNoise(count: voice.count))
        #expect(noise.correlation(around: centre, f0: 85, available: voice.count) < 0.4)
    }

    /// Only the samples before `available` count, however many are held, and discarding what lies before the
    /// reach changes nothing.
    @Test func readsNothingPastTheAvailableSamples() {
        let voice = Signals.vowel(f0: 120, sampleRate: 16000, duration: 0.2)
        let cut = 2000
        var whole = Dio.Periodicity(rate: 16000, f0Floor: 71)
        whole.push(voice.enumerated().map { $0 < cut ? $1 : 0.9 * sin(Double($0)) })
        var part = Dio.Periodicity(rate: 16000, f0Floor: 71)
        part.push(Array(voice[..<cut]))
        part.discard(before: cut - 10 - part.reach)
        for centre in [cut - 400, cut - 100, cut - 1] {
            #expect(whole.correlation(around: centre, f0: 120, available: cut)
                    == part.correlation(around: centre, f0: 120, available: cut))
        }
    }

    // MARK: Streaming

    /// Deep voices (75 and 85 Hz) whose middle 150 ms creaks: periods irregular by up to 12 %, pulses alternately
    /// strong and half as strong, each of uneven strength; three draws of the jitter each, at 16 and 48 kHz.
    /// Whole-signal DIO voices 356 of the 360 creak frames. DIO's live window alone voiced 235 of them (66 %,
    /// losing whole creaks at 48 kHz) and agreed with whole-signal DIO's voicing on 91.0 % of all frames; live
    /// mode now voices 345 (96.9 %) and agrees on 96.9 %.
    @Test func holdsDeepVoicesThroughCreak() throws {
        var creakVoiced = 0
        var creakKept = 0
        var frames = 0
        var agreeing = 0
        var silent = 0
        var silentVoiced = 0
        for f0 in [75.0, 85] {
            for seed: UInt64 in [7, 11, 13] {
                for sampleRate in [16000, 48000] {
                    let input = Self.creakyVoice(f0: f0, seed: seed, sampleRate: sampleRate)
                    let live = Self.liveF0(input, sampleRate: sampleRate)
                    let whole = try Dio(sampleRate: sampleRate).estimate(input).f0
                    let voiced = Self.creakFrames.filter { whole[$0] > 0 }
                    creakVoiced += voiced.count
                    creakKept += voiced.filter { live[$0] > 0 }.count
                    let loudness = Self.framePeaks(input, frames: whole.count, sampleRate: sampleRate)
                    for frame in whole.indices {
                        if loudness[frame] >= Dio.LiveVoicing.silence {
                            frames += 1
                            agreeing += (live[frame] > 0) == (whole[frame] > 0) ? 1 : 0
                        } else if loudness[frame] < Dio.LiveVoicing.silence / 2 {
                            silent += 1
                            silentVoiced += live[frame] > 0 ? 1 : 0
                        }
                    }
                }
            }
        }
        #expect(creakVoiced >= 340, "whole-signal DIO voices \(creakVoiced) of 360 creak frames")
        #expect(Double(creakKept) >= 0.95 * Double(creakVoiced), "\(creakKept) of \(creakVoiced) creak frames kept")
        #expect(Double(agreeing) >= 0.95 * Double(frames), "\(agreeing) of \(frames) frames agree")
        #expect(silentVoiced == 0, "\(silentVoiced) of \(silent) silent frames voiced")
    }

    /// Each frame's largest sample within `Dio.LiveVoicing.peakHalfSpan` of its centre, as a share of the signal's.
    private static func framePeaks(_ input: [Double], frames: Int, sampleRate: Int) -> [Double] {
        let peak = input.map(abs).max() ?? 1
        let half = Int(Dio.LiveVoicing.peakHalfSpan * Double(sampleRate))
        let period = Dio.Options().framePeriod / 1000
        return (0..<frames).map { frame in
            let centre = Int((Double(frame) * period * Double(sampleRate)).rounded())
            let span = max(0, centre - half)..<min(input.count, centre + half + 1)
            return span.isEmpty ? 0 : input[span].map(abs).max()! / peak
        }
    }

    /// Live mode's DIO F0 at the analyzer's look-ahead, pushed in 10 ms pieces.
    private static func liveF0(_ input: [Double], sampleRate: Int) -> [Double] {
        var options = StreamingDio.Options()
        options.live = true
        options.lookAhead = 31.7
        let dio = StreamingDio(sampleRate: sampleRate, options: options)
        return pieces(of: input, length: sampleRate / 100).flatMap(dio.push) + dio.finish()
    }

    /// Frames 70 to 99: the creak, 0.35 to 0.5 s.
    private static let creakFrames = 70..<100

    /// 0.1 s of silence, 0.25 s of a steady voice at `f0`, 0.15 s of creak, 0.25 s steady again, 0.1 s of silence,
    /// through three formants.
    private static func creakyVoice(f0: Double, seed: UInt64, sampleRate: Int) -> [Double] {
        let rate = Double(sampleRate)
        var pulses = [Double](repeating: 0, count: Int(0.85 * rate))
        // Reproducible jitter and shimmer.
        var state = seed
        func unit() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        var time = 0.1
        var strong = false
        while time < 0.75 {
            let creaking = time >= 0.35 && time < 0.5
            strong.toggle()
            pulses[Int(time * rate)] = creaking ? (1 - 0.6 * unit()) * (strong ? 1 : 0.5) : 1
            time += (creaking ? 1 + 0.24 * (unit() - 0.5) : 1) / f0
        }
        var signal = pulses
        for formant in [500.0, 1100, 2400] {
            let radius = exp(-Double.pi * 80 / rate)
            let a1 = 2 * radius * cos(2 * .pi * formant / rate)
            let a2 = -radius * radius
            var y1 = 0.0
            var y2 = 0.0
            signal = signal.map { sample in
                let y = sample + a1 * y1 + a2 * y2
                y2 = y1
                y1 = y
                return y
            }
        }
        let peak = signal.map(abs).max() ?? 1
        return signal.map { 0.5 * $0 / peak }
    }
}
