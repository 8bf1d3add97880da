/// Resamples the frame sequence in time for a tempo change: output frame `j` takes the input parameters
/// at input frame `j * tempo`, interpolated between the two neighbouring frames. Only those two are kept.
struct TempoTimeline {
    private let tempo: Double
    private var earlier: ParameterFrame
    private var later: ParameterFrame
    private var output: ParameterFrame
    private var inputFrames = 0
    private(set) var emittedFrames = 0

    init(tempo: Double, bins: Int) {
        self.tempo = tempo
        earlier = ParameterFrame(bins: bins)
        later = ParameterFrame(bins: bins)
        output = ParameterFrame(bins: bins)
    }

    /// Takes the next input frame (its buffers are swapped in, not copied).
    mutating func add(_ frame: inout ParameterFrame) {
        swap(&earlier, &later)
        swap(&later, &frame)
        inputFrames += 1
    }

    /// The next output frame whose two neighbours have both arrived.
    mutating func nextOutputFrame() -> ParameterFrame? {
        let position = Double(emittedFrames) * tempo
        let newest = Double(inputFrames - 1)
        guard inputFrames > 0, position <= newest else { return nil }
        if position == newest {
            output.copy(from: later)
        } else {
            guard inputFrames >= 2 else { return nil }
            interpolate(weight: position - (newest - 1))
        }
        emittedFrames += 1
        return output
    }

    /// After the last input frame: the last frame again, for output frames past the end of the input.
    mutating func holdingLastFrame() -> ParameterFrame? {
        guard inputFrames > 0 else { return nil }
        output.copy(from: later)
        emittedFrames += 1
        return output
    }

    /// Envelopes and aperiodicity blend linearly; F0 blends only between voiced frames, otherwise the nearer
    /// frame decides, so voicing never fades through zero.
    private mutating func interpolate(weight: Double) {
        if earlier.f0 > 0 && later.f0 > 0 {
            output.f0 = earlier.f0 + weight * (later.f0 - earlier.f0)
        } else {
            output.f0 = weight < 0.5 ? earlier.f0 : later.f0
        }
        Self.blend(earlier.spectrum, later.spectrum, weight: weight, into: &output.spectrum)
        Self.blend(earlier.aperiodicity, later.aperiodicity, weight: weight, into: &output.aperiodicity)
    }

    /// `earlier + weight * (later - earlier)`, bin by bin, through buffers taken once.
    private static func blend(_ earlier: [Double], _ later: [Double], weight: Double, into output: inout [Double]) {
        output.withUnsafeMutableBufferPointer { output in
            earlier.withUnsafeBufferPointer { earlier in
                later.withUnsafeBufferPointer { later in
                    for i in output.indices {
                        output[i] = earlier[i] + weight * (later[i] - earlier[i])
                    }
                }
            }
        }
    }
}
