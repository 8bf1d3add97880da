import Testing
@testable import KoeStages

@Suite struct TempoTimelineTests {
    private func frame(f0: Double, level: Double) -> ParameterFrame {
        var frame = ParameterFrame(bins: 3)
        frame.f0 = f0
        frame.spectrum = [level, level, level]
        frame.aperiodicity = [level / 10, level / 10, level / 10]
        return frame
    }

    private func outputs(tempo: Double, inputs: [ParameterFrame]) -> [ParameterFrame] {
        var timeline = TempoTimeline(tempo: tempo, bins: 3)
        var result: [ParameterFrame] = []
        for input in inputs {
            var next = input
            timeline.add(&next)
            while let output = timeline.nextOutputFrame() { result.append(output) }
        }
        return result
    }

    @Test func tempoOnePassesFramesThroughExactly() {
        let inputs = (0..<5).map { frame(f0: 100 + Double($0), level: Double($0)) }
        let result = outputs(tempo: 1, inputs: inputs)
        #expect(result.map(\.f0) == inputs.map(\.f0))
        #expect(result.map(\.spectrum) == inputs.map(\.spectrum))
    }

    @Test func doubleTempoTakesEveryOtherFrame() {
        let inputs = (0..<9).map { frame(f0: 100 + Double($0), level: Double($0)) }
        #expect(outputs(tempo: 2, inputs: inputs).map(\.f0) == [100, 102, 104, 106, 108])
    }

    @Test func halfTempoInterpolatesBetweenFrames() {
        let inputs = [frame(f0: 100, level: 0), frame(f0: 110, level: 2)]
        let result = outputs(tempo: 0.5, inputs: inputs)
        #expect(result.map(\.f0) == [100, 105, 110])
        #expect(result[1].spectrum == [1, 1, 1])
    }

    @Test func voicingIsNeverInterpolatedThroughZero() {
        let inputs = [frame(f0: 0, level: 1), frame(f0: 200, level: 1)]
        let result = outputs(tempo: 0.25, inputs: inputs)
        #expect(result.map(\.f0) == [0, 0, 200, 200, 200])
    }
}
