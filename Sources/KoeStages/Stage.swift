/// A streaming processor of one channel: the unit a conversion chain is made of. It speaks the stream's three
/// verbs, as every streaming object of koe does: `process`, `finish`, `reset`.
///
/// The contract every stage keeps:
/// - Push the channel's samples in order, in chunks of any size (empty chunks included), with `process`; each call
///   appends whatever output is ready, possibly nothing.
/// - `finish` ends the stream: it appends the rest of the output, the tail the stage held back.
/// - Stages are self-aligning: the concatenation of all outputs is exactly the aligned result. A stage with
///   internal delay trims its own start, and drains its tail in `finish`.
/// - The outputs of one stream total `(input length × lengthRatio).rounded()` samples, and they do not
///   depend on how the input was chunked.
/// - `reset` forgets the stream: the next `process` starts a new one, as a stage just made with the settings it
///   has now would (a glide under way is over, at its target). A stage serves one stream of one channel at a time.
/// - Output is appended to the caller's buffer, so a caller that keeps its buffers' capacity allocates nothing.
package protocol Stage: AnyObject {
    /// How many input samples past sample n must arrive before output sample n is available.
    var latency: Int { get }

    /// Output length over input length: 1 unless the stage changes the duration.
    var lengthRatio: Double { get }

    /// Takes the next chunk of input and appends the output that is ready to `output`; throws when the input
    /// cannot be processed (the vocoder refuses non-finite samples).
    func process(_ input: [Double], into output: inout [Double]) throws

    /// Ends the stream: appends the output still held back.
    func finish(into output: inout [Double]) throws

    /// Forgets the stream, keeping the settings. **Real time:** no; it may allocate what a new stream needs.
    func reset()
}

extension Stage {
    package var lengthRatio: Double { 1 }

    /// The output ready after `input`, as an array of its own.
    package func process(_ input: [Double]) throws -> [Double] {
        var output: [Double] = []
        try process(input, into: &output)
        return output
    }

    /// The end of the stream, as an array of its own.
    package func finish() throws -> [Double] {
        var output: [Double] = []
        try finish(into: &output)
        return output
    }
}

/// A stage that applies its output in place, sample for sample, with no delay: it holds nothing back, so it has
/// nothing to finish.
package protocol InPlaceStage: Stage {
    func apply(_ samples: UnsafeMutableBufferPointer<Double>)
}

extension InPlaceStage {
    package var latency: Int { 0 }

    package func process(_ input: [Double], into output: inout [Double]) {
        let start = output.count
        output.append(contentsOf: input)
        output.withUnsafeMutableBufferPointer { buffer in
            apply(UnsafeMutableBufferPointer(rebasing: buffer[start...]))
        }
    }

    package func finish(into output: inout [Double]) {}
}

/// How long a setting changed while a stream plays takes to reach its new value, so that a slider dragged
/// during playback never clicks: ratios move geometrically, gains and filters cross-fade, over 50 ms.
package enum Glide {
    static let seconds = 0.05

    /// The glide in samples at `sampleRate`.
    package static func samples(sampleRate: Int) -> Int {
        max(1, Int((seconds * Double(sampleRate)).rounded()))
    }

    /// The glide in analysis frames of `framePeriod` ms.
    package static func frames(framePeriod: Double) -> Int {
        max(1, Int((seconds * 1000 / framePeriod).rounded()))
    }
}
