import Dispatch
import KoeStages

/// Runs interleaved multi-channel audio through one chain of stages per channel, chunk by chunk.
///
/// Each channel's chain is independent, so channels may run on several threads at once with the same
/// result; output is released only as far as every channel has produced it, so frames stay whole. The
/// stages align themselves, so the concatenated output is the aligned result whatever the chunk sizes.
/// A stage working in the background (`BackgroundStage`) may return a chunk's output on a later call;
/// `collect` gathers it before the caller waits for input.
package final class Pipeline {
    package let channels: Int
    /// Channels processed at the same time, at most.
    package let threads: Int
    private let lanes: [Lane]

    /// `makeChain` is called once per channel; an empty chain passes audio through unchanged.
    package init(channels: Int, threads: Int = 1, makeChain: () throws -> [any Stage]) throws {
        guard channels > 0 else { throw StageError("a pipeline needs at least one channel (got \(channels))") }
        self.channels = channels
        self.threads = max(1, min(threads, channels))
        lanes = try (0..<channels).map { _ in Lane(Chain(stages: try makeChain())) }
    }

    /// Input samples that must arrive before the output for a sample is available, over the whole chain.
    package var latency: Int { lanes[0].chain.latency }

    /// Output length over input length (1 / tempo).
    package var lengthRatio: Double { lanes[0].chain.lengthRatio }

    /// True when no stage is in the chain: output is the input.
    package var isPassThrough: Bool { lanes.allSatisfy(\.chain.stages.isEmpty) }

    /// The stages of each channel's chain, in channel order.
    package var chains: [Chain] { lanes.map(\.chain) }

    /// Takes interleaved samples (a whole number of frames) and returns the interleaved output now ready.
    /// With `isFinal`, every stage drains and the rest of the output is returned.
    package func process(interleaved input: [Double], isFinal: Bool) throws -> [Double] {
        guard input.count % channels == 0 else {
            throw StageError("\(input.count) interleaved samples do not make whole frames of \(channels) channels")
        }
        let channels = channels
        if threads > 1 {
            // Worker `group` alone touches the lanes of channels group, group + threads, ...
            nonisolated(unsafe) let lanes = lanes
            let groups = threads
            DispatchQueue.concurrentPerform(iterations: groups) { group in
                for channel in stride(from: group, to: channels, by: groups) {
                    lanes[channel].run(input, channel: channel, of: channels, isFinal: isFinal)
                }
            }
        } else {
            for channel in 0..<channels {
                lanes[channel].run(input, channel: channel, of: channels, isFinal: isFinal)
            }
        }
        if let failure = lanes.lazy.compactMap(\.failure).first { throw failure }
        return releaseWholeFrames()
    }

    /// Waits for the stages still working in the background and returns the interleaved output now ready.
    /// Call it before waiting for more input, so a live stream is not held back.
    package func collect() throws -> [Double] {
        for lane in lanes {
            lane.collect()
        }
        if let failure = lanes.lazy.compactMap(\.failure).first { throw failure }
        return releaseWholeFrames()
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

/// One channel's stages, run one after the other through buffers the chain keeps, so that once they have
/// grown to the largest chunk seen, running the chain allocates nothing of its own.
package final class Chain {
    package let stages: [any Stage]
    private var ping: [Double] = []
    private var pong: [Double] = []

    package init(stages: [any Stage]) {
        self.stages = stages
    }

    /// Input samples that must arrive before the output for a sample is available.
    package var latency: Int { stages.reduce(0) { $0 + $1.latency } }

    /// Makes room between the stages for chunks of up to `samples` samples: a stage hands on at most those and
    /// what it held back.
    package func reserve(forChunksOf samples: Int) {
        ping.reserveCapacity(latency + 2 * samples)
        pong.reserveCapacity(latency + 2 * samples)
    }

    /// Output length over input length (1 / tempo).
    package var lengthRatio: Double { stages.reduce(1.0) { $0 * $1.lengthRatio } }

    /// Runs the next chunk through every stage and appends the output that is ready to `output`.
    package func process(_ input: [Double], isFinal: Bool, into output: inout [Double]) throws {
        try pass(input, from: 0, isFinal: isFinal, into: &output)
    }

    /// Collects what the background stages finished, each stage's output passed on through the stages after it.
    package func collect(into output: inout [Double]) throws {
        var collected: [Double] = []
        for (index, stage) in stages.enumerated() {
            guard let background = stage as? any BackgroundStage else { continue }
            collected.removeAll(keepingCapacity: true)
            try background.collect(into: &collected)
            try pass(collected, from: index + 1, isFinal: false, into: &output)
        }
    }

    /// `input` through the stages from `first` on.
    private func pass(_ input: [Double], from first: Int, isFinal: Bool, into output: inout [Double]) throws {
        guard first < stages.count else {
            output.append(contentsOf: input)
            return
        }
        // The buffers are moved out while in use, so each stays uniquely owned and keeps its capacity.
        var ping: [Double] = []
        var pong: [Double] = []
        swap(&ping, &self.ping)
        swap(&pong, &self.pong)
        defer {
            self.ping = ping
            self.pong = pong
        }
        let last = stages.count - 1
        if first == last {
            return try stages[first].process(input, isFinal: isFinal, into: &output)
        }
        ping.removeAll(keepingCapacity: true)
        try stages[first].process(input, isFinal: isFinal, into: &ping)
        for index in (first + 1)..<last {
            pong.removeAll(keepingCapacity: true)
            try stages[index].process(ping, isFinal: isFinal, into: &pong)
            swap(&ping, &pong)
        }
        try stages[last].process(ping, isFinal: isFinal, into: &output)
    }
}

/// One channel's chain in a pipeline and the output it has ready; touched by one thread at a time.
private final class Lane {
    let chain: Chain
    private(set) var ready: [Double] = []
    private(set) var failure: Error?
    private var input: [Double] = []

    init(_ chain: Chain) {
        self.chain = chain
    }

    func run(_ interleaved: [Double], channel: Int, of channels: Int, isFinal: Bool) {
        guard failure == nil else { return }
        do {
            if channels == 1 {
                try chain.process(interleaved, isFinal: isFinal, into: &ready)
            } else {
                input.removeAll(keepingCapacity: true)
                for index in stride(from: channel, to: interleaved.count, by: channels) {
                    input.append(interleaved[index])
                }
                try chain.process(input, isFinal: isFinal, into: &ready)
            }
        } catch {
            failure = error
        }
    }

    func collect() {
        guard failure == nil else { return }
        do {
            try chain.collect(into: &ready)
        } catch {
            failure = error
        }
    }

    func take(_ count: Int) -> [Double] {
        ready.takeFirst(count)
    }
}
