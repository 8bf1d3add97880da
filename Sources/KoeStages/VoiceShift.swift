import Foundation
import KoeWorld

/// The vocoder stage: WORLD analysis of the stream, the voice changes frame by frame, and WORLD synthesis.
///
/// Output is aligned with the input and exactly `round(input / tempo)` samples long: the stage holds back
/// what the analyser and synthesiser still need, and drains it when the stream ends.
///
/// With two threads or more, the analysis shares its frames among the threads, and the changes and synthesis
/// run on a thread of their own, a chunk behind the analysis: `process` returns the output synthesised so far,
/// and `settle` waits for the rest. The output is the same for any number of threads.
public final class VoiceShift: BackgroundStage {
    public let sampleRate: Int
    public let voice: VoiceSettings
    /// Threads the stage uses (at least 1).
    public let threads: Int
    public let latency: Int

    private let analyzer: StreamingAnalyzer
    private let synthesis: SynthesisRoute
    private var received = 0
    private var emitted = 0
    private var pending: [Double] = []

    /// `threads` replaces `analysis.threads`.
    public init(sampleRate: Int, voice: VoiceSettings, analysis: StreamingAnalyzer.Options = .init(), threads: Int = 1) {
        self.sampleRate = sampleRate
        self.voice = voice
        self.threads = max(1, threads)
        var analysis = analysis
        analysis.threads = self.threads
        analyzer = StreamingAnalyzer(sampleRate: sampleRate, options: analysis)
        let resynthesis = Resynthesis(
            voice: voice, sampleRate: sampleRate, framePeriod: analysis.framePeriod, fftSize: analyzer.fftSize)
        latency = analyzer.latency + resynthesis.latency
        synthesis = self.threads > 1 ? .background(SynthesisThread(resynthesis)) : .inline(resynthesis)
    }

    deinit {
        if case .background(let thread) = synthesis {
            thread.stop()
        }
    }

    /// Median F0 of the voiced input frames synthesised so far, in Hz; nil before any.
    public var medianInputF0: Double? { synthesis.medians.input }

    /// Median F0 of the voiced frames sent to synthesis so far, in Hz; nil before any.
    public var medianOutputF0: Double? { synthesis.medians.output }

    public var lengthRatio: Double { 1 / voice.tempo }

    public func process(_ input: [Double], isFinal: Bool) throws -> [Double] {
        received += input.count
        var blocks = try analyzer.push(input)
        if isFinal {
            blocks += try analyzer.finish()
        }
        let job = SynthesisJob(blocks: blocks, finalLength: isFinal ? outputLength : nil)
        switch synthesis {
        case .inline(let resynthesis):
            resynthesis.run(job, into: &pending)
        case .background(let thread):
            // Without new frames the synthesis has nothing to add: no need to wake its thread.
            if !blocks.isEmpty || isFinal { thread.submit(job) }
            if isFinal { thread.waitUntilIdle() }
            pending.append(contentsOf: thread.takeOutput())
        }
        return release(isFinal: isFinal)
    }

    public func settle() throws -> [Double] {
        if case .background(let thread) = synthesis {
            thread.waitUntilIdle()
            pending.append(contentsOf: thread.takeOutput())
        }
        return release(isFinal: false)
    }

    private var outputLength: Int {
        Int((Double(received) / voice.tempo).rounded())
    }

    /// Hands out what is ready, never past the output length; the final call pads a short synthesis with silence.
    private func release(isFinal: Bool) -> [Double] {
        let limit = isFinal ? outputLength : min(outputLength, emitted + pending.count)
        var count = min(pending.count, max(0, limit - emitted))
        var output = Array(pending.prefix(count))
        pending.removeFirst(count)
        if isFinal, emitted + count < limit {
            output.append(contentsOf: repeatElement(0, count: limit - emitted - count))
            count = limit - emitted
        }
        emitted += count
        if isFinal { pending.removeAll() }
        return output
    }
}

/// Analysed frames for synthesis; on the last job, the output length the stream ends at.
private struct SynthesisJob: Sendable {
    var blocks: [StreamingAnalyzer.Block]
    var finalLength: Int?
}

/// The stage's second half, frames in and samples out: the voice changes, the tempo, and WORLD synthesis.
private final class Resynthesis {
    private let sampleRate: Int
    private let framePeriod: Double
    private let synthesizer: StreamingSynthesizer
    private var modifier: FrameModifier
    private var timeline: TempoTimeline
    private var scratch: ParameterFrame
    private var inputMedian = MedianTracker()
    private var outputMedian = MedianTracker()

    init(voice: VoiceSettings, sampleRate: Int, framePeriod: Double, fftSize: Int) {
        self.sampleRate = sampleRate
        self.framePeriod = framePeriod
        synthesizer = StreamingSynthesizer(sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize)
        modifier = FrameModifier(voice: voice, sampleRate: sampleRate, fftSize: fftSize)
        timeline = TempoTimeline(tempo: voice.tempo, bins: fftSize / 2 + 1)
        scratch = ParameterFrame(bins: fftSize / 2 + 1)
    }

    var latency: Int { synthesizer.latency }

    var medians: (input: Double?, output: Double?) {
        (inputMedian.value > 0 ? inputMedian.value : nil, outputMedian.value > 0 ? outputMedian.value : nil)
    }

    /// Synthesises the job's frames and appends the samples that became final.
    func run(_ job: SynthesisJob, into output: inout [Double]) {
        for block in job.blocks {
            feed(block)
        }
        if let finalLength = job.finalLength {
            feedRemainingFrames(outputLength: finalLength)
            _ = synthesizer.finish(into: &output)
        } else {
            _ = synthesizer.drain(into: &output)
        }
    }

    private func feed(_ block: StreamingAnalyzer.Block) {
        for row in 0..<block.f0.count {
            modifier.modify(
                f0: block.f0[row], spectrogram: block.spectrogram, aperiodicity: block.aperiodicity, row: row,
                into: &scratch)
            if block.f0[row] > 0 { inputMedian.add(block.f0[row]) }
            if scratch.f0 > 0 { outputMedian.add(scratch.f0) }
            timeline.add(&scratch)
            while let output = timeline.nextOutputFrame() {
                append(output)
            }
        }
    }

    /// At the end, output frames past the last input frame hold the last frame, until WORLD's frame count
    /// for the output length is reached.
    private func feedRemainingFrames(outputLength: Int) {
        let total = F0Contour.frameCount(samples: outputLength, sampleRate: sampleRate, framePeriod: framePeriod)
        while timeline.emittedFrames < total, let output = timeline.holdingLastFrame() {
            append(output)
        }
    }

    private func append(_ frame: ParameterFrame) {
        frame.spectrum.withUnsafeBufferPointer { spectrum in
            frame.aperiodicity.withUnsafeBufferPointer { aperiodicity in
                synthesizer.append(f0: frame.f0, spectrum: spectrum, aperiodicity: aperiodicity)
            }
        }
    }
}

/// Where analysed frames are synthesised: on the caller's thread, or on a thread of their own.
private enum SynthesisRoute {
    case inline(Resynthesis)
    case background(SynthesisThread)

    var medians: (input: Double?, output: Double?) {
        switch self {
        case .inline(let resynthesis): resynthesis.medians
        case .background(let thread): thread.medians
        }
    }
}

/// Runs a `Resynthesis` on a thread of its own, one job after another in the order submitted. `submit` waits
/// while `capacity` jobs are queued, so the analysis runs at most that far ahead and memory stays bounded;
/// the output collects until taken.
private final class SynthesisThread: @unchecked Sendable {
    /// Guards every property below it, and signals each change of them.
    private let condition = NSCondition()
    private var queue: [SynthesisJob] = []
    private var isRunningJob = false
    private var output: [Double] = []
    private var latestMedians: (input: Double?, output: Double?) = (nil, nil)
    private var isStopping = false
    private var hasExited = false
    /// Touched only by the thread once it has started.
    private let resynthesis: Resynthesis

    /// Jobs queued beyond the one running: enough to keep the thread busy while the next is analysed.
    private static let capacity = 2

    init(_ resynthesis: Resynthesis) {
        self.resynthesis = resynthesis
        let thread = Thread { [self] in runJobs() }
        thread.name = "koe synthesis"
        thread.start()
    }

    func submit(_ job: SynthesisJob) {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= Self.capacity {
            condition.wait()
        }
        queue.append(job)
        condition.broadcast()
    }

    func waitUntilIdle() {
        condition.lock()
        defer { condition.unlock() }
        while !queue.isEmpty || isRunningJob {
            condition.wait()
        }
    }

    /// The samples synthesised since the last call.
    func takeOutput() -> [Double] {
        condition.lock()
        defer { condition.unlock() }
        let taken = output
        output = []
        return taken
    }

    var medians: (input: Double?, output: Double?) {
        condition.lock()
        defer { condition.unlock() }
        return latestMedians
    }

    /// Ends the thread, dropping jobs not yet started, and returns once it has exited.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        isStopping = true
        condition.broadcast()
        while !hasExited {
            condition.wait()
        }
    }

    private func runJobs() {
        condition.lock()
        while let job = nextJob() {
            isRunningJob = true
            condition.broadcast()
            condition.unlock()
            var produced: [Double] = []
            resynthesis.run(job, into: &produced)
            let medians = resynthesis.medians
            condition.lock()
            output.append(contentsOf: produced)
            latestMedians = medians
            isRunningJob = false
            condition.broadcast()
        }
        hasExited = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for a job, with the lock held; nil once the thread is to stop.
    private func nextJob() -> SynthesisJob? {
        while queue.isEmpty && !isStopping {
            condition.wait()
        }
        return isStopping ? nil : queue.removeFirst()
    }
}
