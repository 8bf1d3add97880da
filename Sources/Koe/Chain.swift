import KoeStages

/// One channel's stages, run one after the other through buffers the chain keeps, so that once they have
/// grown to the largest chunk seen, running the chain allocates nothing of its own.
final class Chain {
    let stages: [any Stage]
    private var ping: [Double] = []
    private var pong: [Double] = []

    init(stages: [any Stage]) {
        self.stages = stages
    }

    /// Input samples that must arrive before the output for a sample is available.
    var latency: Int { stages.reduce(0) { $0 + $1.latency } }

    /// Output length over input length (1 / tempo).
    var lengthRatio: Double { stages.reduce(1.0) { $0 * $1.lengthRatio } }

    /// Makes room between the stages for chunks of up to `samples` samples: a stage hands on at most those and
    /// what it held back.
    func reserve(forChunksOf samples: Int) {
        ping.reserveCapacity(latency + 2 * samples)
        pong.reserveCapacity(latency + 2 * samples)
    }

    /// Runs the next chunk through every stage and appends the output that is ready to `output`.
    func process(_ input: [Double], into output: inout [Double]) throws {
        try pass(input, from: 0, into: &output)
    }

    /// Ends the stream: each stage in turn finishes, its tail passed on through the stages after it, which then
    /// finish too.
    func finish(into output: inout [Double]) throws {
        var tail: [Double] = []
        for (index, stage) in stages.enumerated() {
            tail.removeAll(keepingCapacity: true)
            try stage.finish(into: &tail)
            try pass(tail, from: index + 1, into: &output)
        }
    }

    /// Forgets the stream in every stage.
    func reset() {
        for stage in stages { stage.reset() }
    }

    /// Collects what the background stages finished, each stage's output passed on through the stages after it.
    func drain(into output: inout [Double]) throws {
        var drained: [Double] = []
        for (index, stage) in stages.enumerated() {
            guard let background = stage as? any BackgroundStage else { continue }
            drained.removeAll(keepingCapacity: true)
            try background.drain(into: &drained)
            try pass(drained, from: index + 1, into: &output)
        }
    }

    /// `input` through the stages from `first` on.
    private func pass(_ input: [Double], from first: Int, into output: inout [Double]) throws {
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
            return try stages[first].process(input, into: &output)
        }
        ping.removeAll(keepingCapacity: true)
        try stages[first].process(input, into: &ping)
        for index in (first + 1)..<last {
            pong.removeAll(keepingCapacity: true)
            try stages[index].process(ping, into: &pong)
            swap(&ping, &pong)
        }
        try stages[last].process(ping, into: &output)
    }
}
