import Foundation
import KoeWorld
import Testing
@testable import KoeStages

@Suite struct FrameModifierTests {
    private func modified(_ voice: VoiceSettings, f0: Double, spectrum: [Double], frame index: Int = 0) throws -> ParameterFrame {
        var modifier = FrameModifier(voice: voice, bins: spectrum.count)
        var frame = ParameterFrame(bins: spectrum.count)
        let matrix = try Matrix(rows: 1, columns: spectrum.count, storage: spectrum)
        modifier.modify(frame: index, f0: f0, spectrogram: matrix, aperiodicity: matrix, row: 0, into: &frame)
        return frame
    }

    private func editedF0(_ voice: VoiceSettings, f0: Double, frame: Int = 0) throws -> Double {
        try modified(voice, f0: f0, spectrum: [1, 1, 1], frame: frame).f0
    }

    @Test func formantRatioMovesAPeakUpTheAxis() throws {
        var spectrum = [Double](repeating: 1, count: 65)
        spectrum[20] = 10
        var voice = VoiceSettings()
        voice.formant = 1.5
        let frame = try modified(voice, f0: 100, spectrum: spectrum)
        #expect(frame.spectrum.firstIndex(of: frame.spectrum.max()!) == 30)
        #expect(frame.spectrum.last == 1)
    }

    @Test func pitchRatioScalesVoicedFramesOnly() throws {
        var voice = VoiceSettings()
        voice.pitch = 1.5
        #expect(try modified(voice, f0: 200, spectrum: [1, 1, 1]).f0 == 300)
        #expect(try modified(voice, f0: 0, spectrum: [1, 1, 1]).f0 == 0)
    }

    @Test func targetMedianMovesTheFirstVoicedFrameThere() throws {
        var voice = VoiceSettings()
        voice.pitchMedian = 220
        let f0 = try modified(voice, f0: 110, spectrum: [1, 1, 1]).f0
        #expect(abs(f0 / 220 - 1) < 0.001)
    }

    @Test func anF0TrackReplacesTheAnalysedF0AndTheRatioApplies() throws {
        var voice = VoiceSettings()
        voice.f0Track = try F0Track(values: [0, 200, 210])
        voice.pitch = 1.5
        #expect(try editedF0(voice, f0: 100, frame: 0) == 0, "the track's unvoiced frame")
        #expect(try editedF0(voice, f0: 100, frame: 1) == 300)
        #expect(try editedF0(voice, f0: 0, frame: 2) == 315, "voiced by the track where the analysis was not")
        #expect(try editedF0(voice, f0: 100, frame: 3) == 150, "past the track's end the analysis is kept")
    }

    /// A track's F0 far outside any voice, edited to 0 (5e-324 Hz an octave down), left subnormal (5e-324 Hz,
    /// whose ratio to A4 is 0) or past the largest `Double` (1e300 Hz spread ten times around a 100 Hz median;
    /// 1.7e308 Hz raised an octave by the vibrato's crest at frame 10), unvoices its frame: the snap trapped on
    /// the first three, synthesis was handed infinity.
    @Test(arguments: [(5e-324, 0.5, 1.0), (5e-324, 1.0, 1.0), (1e300, 1.0, 10.0), (1.7e308, 1.0, 1.0)])
    func anF0TheEditsCannotHoldUnvoicesItsFrame(track: Double, ratio: Double, range: Double) throws {
        var voice = VoiceSettings()
        voice.f0Track = try F0Track(values: [Double](repeating: track, count: 11))
        voice.pitch = ratio
        voice.pitchRange = range
        voice.referenceMedian = 100
        voice.snap = PitchSnap.Options()
        voice.vibrato = Vibrato.Options(rate: 5, depth: 1200)
        #expect(try editedF0(voice, f0: 150, frame: 10) == 0)
    }

    /// Frame 200 is 1 s of input at 5 ms frames: halfway along a curve from 1 at 0 s to 2 at 2 s.
    @Test func theCurveIsReadAtTheFramesInputTime() throws {
        var voice = VoiceSettings()
        voice.pitchCurve = try PitchCurve(points: [.init(time: 0, ratio: 1), .init(time: 2, ratio: 2)])
        voice.pitch = 1.2
        voice.tempo = 2
        #expect(abs(try editedF0(voice, f0: 100, frame: 200) - 180) < 1e-9)
        #expect(abs(try editedF0(voice, f0: 100, frame: 1000) - 240) < 1e-9)
        #expect(try editedF0(voice, f0: 0, frame: 200) == 0)
    }

    /// 180 Hz x 1.25 = 225 Hz, 36 cents above A3 (220 Hz): the snap works on the shifted F0.
    @Test func snapComesAfterTheRatiosAndVibratoLast() throws {
        var voice = VoiceSettings()
        voice.pitch = 1.25
        voice.snap = PitchSnap.Options()
        #expect(abs(try editedF0(voice, f0: 180) - 220) < 1e-9)
        // At tempo 2, input frame 10 (50 ms) plays at 25 ms of output: a quarter period of 10 Hz, the peak.
        voice.vibrato = Vibrato.Options(rate: 10, depth: 100)
        voice.tempo = 2
        #expect(abs(try editedF0(voice, f0: 180, frame: 10) - 220 * exp2(100.0 / 1200)) < 1e-9)
    }

    @Test func whisperOutranksEveryF0Edit() throws {
        var voice = VoiceSettings()
        voice.whisper = true
        voice.f0Track = try F0Track(values: [200])
        voice.vibrato = Vibrato.Options()
        #expect(try editedF0(voice, f0: 150) == 0)
    }

    @Test func whisperMakesEveryFrameUnvoicedAndAperiodic() throws {
        var voice = VoiceSettings()
        voice.whisper = true
        let frame = try modified(voice, f0: 150, spectrum: [0.5, 0.5, 0.5])
        #expect(frame.f0 == 0)
        #expect(frame.aperiodicity == [1, 1, 1])
    }

    @Test func medianTrackerFindsTheMiddleValueToACent() {
        var tracker = MedianTracker()
        for f0 in [100.0, 110, 120, 130, 400] { tracker.add(f0) }
        #expect(abs(tracker.value / 120 - 1) < 0.0006)
    }

    /// An F0 track's extremes (a subnormal F0's position, log2(0), trapped) count in the end bins.
    @Test func medianTrackerCountsExtremeValuesAtItsEnds() {
        var tracker = MedianTracker()
        for f0 in [Double.leastNonzeroMagnitude, .leastNonzeroMagnitude, 1e308] { tracker.add(f0) }
        #expect(abs(tracker.value / 20 - 1) < 0.0006)
        for f0 in [1e308, 1e308, 1e308] { tracker.add(f0) }
        #expect(abs(tracker.value / 5120 - 1) < 0.0006)
    }

    /// Against the middle of the sorted values after every addition, rising, falling and jumping about.
    @Test func medianTrackerFollowsTheSortedMiddleAsValuesArrive() {
        var tracker = MedianTracker()
        var seen: [Double] = []
        let scattered = (0..<300).map { index -> Double in 60 * exp2(Double((index * 37) % 101) / 25) }
        let falling = (0..<100).map { index -> Double in 900 - 8 * Double(index) }
        let values = scattered + falling
        for value in values {
            tracker.add(value)
            seen.append(value)
            let middle = seen.sorted()[seen.count / 2]
            #expect(abs(log2(tracker.value / middle)) < 1.0 / 1200, "after \(seen.count) values")
        }
    }

    // MARK: a voice that aims at a preset's target

    /// kawaii's voice as a stream plays it: the preset's ratios, aiming at its target.
    private var kawaii: VoiceSettings {
        var voice = VoiceSettings()
        let aiming = Preset.named("kawaii")!.aiming!
        (voice.pitch, voice.formant, voice.aiming) = (aiming.typicalPitch, aiming.typicalFormant, aiming)
        return voice
    }

    private let speaker = SpeakerProfile(f0Median: 100, f0Spread: 4, vocalTractLength: 17, voicedSeconds: 2)

    /// The ratios `modifier` gives frames `frames` of a steady 100 Hz voice.
    private func ratios(_ modifier: inout FrameModifier, frames: Range<Int>) throws -> [(pitch: Double, formant: Double)] {
        var frame = ParameterFrame(bins: 3)
        let matrix = try Matrix(rows: 1, columns: 3, storage: [1, 1, 1])
        return frames.map { index in
            modifier.modify(frame: index, f0: 100, spectrogram: matrix, aperiodicity: matrix, row: 0, into: &frame)
            return modifier.applied
        }
    }

    /// The largest change, in semitones, of the pitch or formant ratio within any `window` frames.
    private func largestStep(_ ratios: [(pitch: Double, formant: Double)], window: Int) -> Double {
        var largest = 0.0
        for start in ratios.indices {
            let span = ratios[start..<min(ratios.count, start + window + 1)]
            for ratio in [span.map(\.pitch), span.map(\.formant)] {
                largest = max(largest, 12 * log2(ratio.max()! / ratio.min()!))
            }
        }
        return largest
    }

    /// Until the profile is known the preset's ratios hold; then the ratios move to the target's, 300 Hz from
    /// 100 Hz and a 13.5 cm tract from 17 cm, at 12 semitones a second: no more than 0.6 semitones in any 50 ms.
    @Test func anAimedRatioMovesToTheTargetsAtTwelveSemitonesASecond() throws {
        var modifier = FrameModifier(voice: kawaii, bins: 3, framePeriod: 5, glideFrames: 10)
        modifier.schedule(speaker, fromFrame: 100)
        let applied = try ratios(&modifier, frames: 0..<600)
        #expect(applied[..<100].allSatisfy { $0 == (1.6, 1.2) })
        #expect(applied[100].pitch > 1.6 && applied[100].pitch < 1.6 * exp2(0.06 / 12 + 1e-9))
        #expect(applied.last!.pitch == 3 && abs(applied.last!.formant - 17 / 13.5) < 1e-12)
        // 1.6 to 3 is 10.9 semitones: 0.91 s at 12 a second.
        let arrived = try #require(applied.firstIndex { $0.pitch == 3 })
        #expect(abs(Double(arrived - 100) * 0.005 - 12 * log2(3 / 1.6) / 12) < 0.01, "\(arrived)")
        let step = largestStep(applied, window: 10)
        #expect(step > 0.59 && step <= 0.6 + 1e-9, "\(step)")
        #expect(modifier.latestAim?.pitch == 3 && modifier.latestAim?.clamped == false)
    }

    /// A profile known before the stream starts is taken by the first frame at once.
    @Test func aProfileKnownFromTheStartIsTakenAtOnce() throws {
        var modifier = FrameModifier(voice: kawaii, bins: 3, framePeriod: 5, glideFrames: 10)
        modifier.schedule(speaker, fromFrame: 0)
        let applied = try ratios(&modifier, frames: 0..<3)
        #expect(applied.allSatisfy { $0.pitch == 3 && abs($0.formant - 17 / 13.5) < 1e-12 })
    }

    /// A ratio set explicitly means what it says: the aim lets go and the ratio glides there as any change does,
    /// while the other ratio goes on aiming; back at the preset's own ratio, it aims again, gliding.
    @Test func aRatioSetExplicitlyStopsItsAim() throws {
        var modifier = FrameModifier(voice: kawaii, bins: 3, framePeriod: 5, glideFrames: 10)
        modifier.schedule(speaker, fromFrame: 0)
        _ = try ratios(&modifier, frames: 0..<10)
        var explicit = kawaii
        explicit.pitch = 1.3
        modifier.update(explicit, gliding: true)
        var applied = try ratios(&modifier, frames: 10..<30)
        #expect(applied[0].pitch < 3 && applied[0].pitch > 1.3 && applied[9].pitch == 1.3 && applied.last!.pitch == 1.3)
        #expect(applied.allSatisfy { abs($0.formant - 17 / 13.5) < 1e-12 })
        modifier.update(kawaii, gliding: true)
        applied = try ratios(&modifier, frames: 30..<50)
        #expect(applied[9].pitch == 3 && applied.last!.pitch == 3)
    }

    /// A profile that goes away (one known, then forgotten) lets the aimed ratios glide back to the preset's.
    @Test func aProfileForgottenGlidesBackToThePresetsRatios() throws {
        var modifier = FrameModifier(voice: kawaii, bins: 3, framePeriod: 5, glideFrames: 10)
        modifier.schedule(speaker, fromFrame: 0)
        modifier.schedule(nil, fromFrame: 20)
        let applied = try ratios(&modifier, frames: 0..<40)
        #expect(applied[19].pitch == 3 && abs(applied[19].formant - 17 / 13.5) < 1e-12)
        #expect(applied[29] == (1.6, 1.2) && applied.last! == (1.6, 1.2) && modifier.latestAim == nil)
    }
}
