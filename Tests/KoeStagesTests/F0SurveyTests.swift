import KoeStages
import Testing
import TestSupport

@Suite struct F0SurveyTests {
    @Test func findsTheMedianOfTheVoicedFrames() throws {
        var survey = try F0Survey(sampleRate: 16000, f0Floor: 71, f0Ceil: 800)
        survey.add(Signals.vowel(f0: 120, sampleRate: 16000, duration: 0.4))
        survey.add([Double](repeating: 0, count: 8000))
        survey.add(Signals.vowel(f0: 150, sampleRate: 16000, duration: 0.8))
        let median = survey.finish()
        #expect(median.map { abs($0 / 150 - 1) < 0.01 } == true)
    }

    @Test func silenceHasNoMedian() throws {
        var survey = try F0Survey(sampleRate: 16000, f0Floor: 71, f0Ceil: 800)
        survey.add([Double](repeating: 0, count: 16000))
        #expect(survey.finish() == nil)
    }
}
