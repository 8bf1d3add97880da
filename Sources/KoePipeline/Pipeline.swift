import Dispatch
import KoeStages

/// Runs interleaved multi-channel audio through one chain of stages per channel, chunk by chunk.
///
/// Each channel's chain is independent, so channels may run on several threads at once with the same
/// result; output is released only as far as every channel has produced it, so frames stay whole. The
/// stages align themselves, so the concatenated output is the aligned result whatever the chunk sizes.
/// A stage working in the background (`BackgroundStage`) may return a chunk's output on a later call;
/// `settle` collects it before the caller waits for input.
public final class Pipeline {
    public let channels: Int
    /// Channels processed at the same time, at most.
    public let threads: Int
    private let lanes: [Lane]

    /// `makeChain` is called once per channel; an empty chain passes audio through unchanged.
    public init(channels: Int, threads: Int = 1, makeChain: () throws -> [any Stage]) rethrows {
        precondition(channels > 0, "a pipeline needs at least one channel")
        self.channels = channels
        self.threads = max(1, min(threads, channels))
        lanes = try (0..<channels).map { _ in Lane(stages: try makeChain()) }
    }

    /// Input samples that must arrive before the output for a sample is available, over the whole chain.
    public var latency: Int {
        lanes[0].stages.reduce(0) { $0 + $1.latency }
    }

    /// Output length over input length (1 / tempo).
    public var lengthRatio: Double {
        lanes[0].stages.reduce(1.0) { $0 * $1.lengthRatio }
    }

    /// True when no stage is in the chain: output is the input.
    public var isPassThrough: Bool { lanes.allSatisfy(\.stages.isEmpty) }

    /// Takes interleaved samples (a whole number of frames) and returns the interleaved output now ready.
    /// With `isFinal`, every stage drains and the rest of the output is returned.
    public func process(interleaved input: [Double], isFinal: Bool) throws -> [Double] {
        precondition(input.count % channels == 0, "input must hold whole frames")
        let channels = channels
        if threads > 1 {
            // Worker `group` alone touches the lanes of channels group, group + threads, ...
            nonisolated(unsafe) let lanes = lanes
            let groups = threads
            DispatchQueue.concurrentPerform(iterations: groups) { group in
                for channel in stride(from: group, to: channels, by: groups) {
                    lanes[channel].run(Self.deinterleave(input, channel: channel, of: channels), isFinal: isFinal)
                }
            }
        } else {
            for channel in 0..<channels {
                lanes[channel].run(Self.deinterleave(input, channel: channel, of: channels), isFinal: isFinal)
            }
        }
        if let failure = lanes.lazy.compactMap(\.failure).first { throw failure }
        return releaseWholeFrames()
    }

    /// Waits for the stages still working in the background and returns the interleaved output now ready.
    /// Call it before waiting for more input, so a live stream is not held back.
    public func settle() throws -> [Double] {
        for lane in lanes {
            lane.settle()
        }
        if let failure = lanes.lazy.compactMap(\.failure).first { throw failure }
        return releaseWholeFrames()
    }

    private static func deinterleave(_ input: [Double], channel: Int, of channels: Int) -> [Double] {
        guard channels > 1 else { return input }
        return stride(from: channel, to: input.count, by: channels).map { input[$0] }
    }

    private func releaseWholeFrames() -> [Double] {
        let frames = lanes.map(\.ready.count).min() ?? 0
        guard frames > 0 else { return [] }
        if channels == 1 { return lanes[0].take(frames) }
        var output = [Double](repeating: 0, count: frames * channels)
        for (channel, lane) in lanes.enumerated() {
            for (frame, sample) in lane.take(frames).enumerated() {
                output[frame * channels + channel] = sample
            }
        }
        return output
    }
}

/// One channel's chain and the output it has ready; touched by one thread at a time.
private final class Lane {
    let stages: [any Stage]
    private(set) var ready: [Double] = []
    private(set) var failure: Error?

    init(stages: [any Stage]) {
        self.stages = stages
    }

    func run(_ input: [Double], isFinal: Bool) {
        guard failure == nil else { return }
        do {
            ready.append(contentsOf: try pass(input, from: 0, isFinal: isFinal))
        } catch {
            failure = error
        }
    }

    /// Collects what the background stages finished, each stage's output passed on through the stages after it.
    func settle() {
        guard failure == nil else { return }
        do {
            for (index, stage) in stages.enumerated() {
                guard let background = stage as? any BackgroundStage else { continue }
                ready.append(contentsOf: try pass(try background.settle(), from: index + 1, isFinal: false))
            }
        } catch {
            failure = error
        }
    }

    /// `input` through the stages from `first` on.
    private func pass(_ input: [Double], from first: Int, isFinal: Bool) throws -> [Double] {
        var signal = input
        for stage in stages[first...] {
            signal = try stage.process(signal, isFinal: isFinal)
        }
        return signal
    }

    func take(_ count: Int) -> [Double] {
        ready.takeFirst(count)
    }
}
