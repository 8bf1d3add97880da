import KoeStages

/// Runs interleaved multi-channel audio through one chain of stages per channel, chunk by chunk.
///
/// Each channel's chain is independent; output is released only as far as every channel has produced it,
/// so frames stay whole. The stages align themselves, so the concatenated output is the aligned result
/// whatever the chunk sizes.
public final class Pipeline {
    public let channels: Int
    private let chains: [[any Stage]]
    private var ready: [[Double]]

    /// `makeChain` is called once per channel; an empty chain passes audio through unchanged.
    public init(channels: Int, makeChain: () throws -> [any Stage]) rethrows {
        precondition(channels > 0, "a pipeline needs at least one channel")
        self.channels = channels
        chains = try (0..<channels).map { _ in try makeChain() }
        ready = Array(repeating: [], count: channels)
    }

    /// Input samples that must arrive before the output for a sample is available, over the whole chain.
    public var latency: Int {
        chains.first?.reduce(0) { $0 + $1.latency } ?? 0
    }

    /// Output length over input length (1 / tempo).
    public var lengthRatio: Double {
        chains.first?.reduce(1.0) { $0 * $1.lengthRatio } ?? 1
    }

    /// True when no stage is in the chain: output is the input.
    public var isPassThrough: Bool { chains.allSatisfy(\.isEmpty) }

    /// Takes interleaved samples (a whole number of frames) and returns the interleaved output now ready.
    /// With `isFinal`, every stage drains and the rest of the output is returned.
    public func process(interleaved input: [Double], isFinal: Bool) throws -> [Double] {
        precondition(input.count % channels == 0, "input must hold whole frames")
        for channel in 0..<channels {
            var signal = deinterleave(input, channel: channel)
            for stage in chains[channel] {
                signal = try stage.process(signal, isFinal: isFinal)
            }
            ready[channel].append(contentsOf: signal)
        }
        return releaseWholeFrames()
    }

    private func deinterleave(_ input: [Double], channel: Int) -> [Double] {
        guard channels > 1 else { return input }
        return stride(from: channel, to: input.count, by: channels).map { input[$0] }
    }

    private func releaseWholeFrames() -> [Double] {
        let frames = ready.map(\.count).min() ?? 0
        guard frames > 0 else { return [] }
        if channels == 1 {
            defer { ready[0].removeFirst(frames) }
            return Array(ready[0].prefix(frames))
        }
        var output = [Double](repeating: 0, count: frames * channels)
        for channel in 0..<channels {
            for frame in 0..<frames {
                output[frame * channels + channel] = ready[channel][frame]
            }
            ready[channel].removeFirst(frames)
        }
        return output
    }
}
