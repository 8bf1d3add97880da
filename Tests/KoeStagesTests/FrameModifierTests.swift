import Foundation
import KoeWorld
import Testing
@testable import KoeStages

@Suite struct FrameModifierTests {
    private func modified(_ voice: VoiceSettings, f0: Double, spectrum: [Double]) -> ParameterFrame {
        var modifier = FrameModifier(voice: voice, bins: spectrum.count)
        var frame = ParameterFrame(bins: spectrum.count)
        let matrix = Matrix(rows: 1, columns: spectrum.count, storage: spectrum)
        modifier.modify(f0: f0, spectrogram: matrix, aperiodicity: matrix, row: 0, into: &frame)
        return frame
    }

    @Test func formantRatioMovesAPeakUpTheAxis() {
        var spectrum = [Double](repeating: 1, count: 65)
        spectrum[20] = 10
        var voice = VoiceSettings()
        voice.formantRatio = 1.5
        let frame = modified(voice, f0: 100, spectrum: spectrum)
        #expect(frame.spectrum.firstIndex(of: frame.spectrum.max()!) == 30)
        #expect(frame.spectrum.last == 1)
    }

    @Test func pitchRatioScalesVoicedFramesOnly() {
        var voice = VoiceSettings()
        voice.pitchRatio = 1.5
        #expect(modified(voice, f0: 200, spectrum: [1, 1, 1]).f0 == 300)
        #expect(modified(voice, f0: 0, spectrum: [1, 1, 1]).f0 == 0)
    }

    @Test func targetMedianMovesTheFirstVoicedFrameThere() {
        var voice = VoiceSettings()
        voice.targetMedian = 220
        let f0 = modified(voice, f0: 110, spectrum: [1, 1, 1]).f0
        #expect(abs(f0 / 220 - 1) < 0.001)
    }

    @Test func whisperMakesEveryFrameUnvoicedAndAperiodic() {
        var voice = VoiceSettings()
        voice.whisper = true
        let frame = modified(voice, f0: 150, spectrum: [0.5, 0.5, 0.5])
        #expect(frame.f0 == 0)
        #expect(frame.aperiodicity == [1, 1, 1])
    }

    @Test func medianTrackerFindsTheMiddleValueToACent() {
        var tracker = MedianTracker()
        for f0 in [100.0, 110, 120, 130, 400] { tracker.add(f0) }
        #expect(abs(tracker.value / 120 - 1) < 0.0006)
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
}
