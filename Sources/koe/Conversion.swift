import Foundation
import KoePipeline
import KoeStages
import KoeWorld

/// Drives one conversion: reads chunks, pushes them through the pipeline, writes what comes out.
struct Conversion {
    let source: AudioSource
    let pipeline: Pipeline
    let sink: AudioSink
    let chunkFrames: Int

    private var framesIn = 0
    private var framesOut = 0
    private var seconds = 0.0
    /// The most input, in frames, that had arrived without its output having left: the latency this run had,
    /// work still queued on other threads included.
    private var heldBackPeak = 0.0

    init(source: AudioSource, pipeline: Pipeline, sink: AudioSink, chunkFrames: Int) {
        self.source = source
        self.pipeline = pipeline
        self.sink = sink
        self.chunkFrames = chunkFrames
    }

    /// Frames read and processed at a time unless told otherwise.
    static let defaultChunkFrames = 4096

    /// Converts all of `source` through the stages `chain` plans. The sink is opened by `openSink` only once the
    /// chain is known to fit the input, so a refused input leaves no output behind; it is complete on return.
    /// Channels run on up to `threads` threads at once, and each channel's vocoder works on an equal share of
    /// `threads` (threads of its own when the share is 2 or more), so the cores are not oversubscribed.
    static func convert(
        _ source: AudioSource, through chain: ChainPlan, threads: Int, chunkFrames: Int, progress: ProgressBar?,
        openingSink openSink: (AudioSource) throws -> AudioSink
    ) throws -> ConversionStatistics {
        try chain.check(sampleRate: source.sampleRate)
        try chain.surveyMedians(of: source)
        let threadsPerChannel = max(1, threads / source.channels)
        let pipeline = try Pipeline(channels: source.channels, threads: threads) {
            try chain.makeStages(sampleRate: source.sampleRate, threads: threadsPerChannel)
        }
        var conversion = Conversion(source: source, pipeline: pipeline, sink: try openSink(source), chunkFrames: chunkFrames)
        try conversion.run(progress: progress)
        return conversion.statistics(voice: chain.voiceStages.first)
    }

    mutating func run(progress: ProgressBar?) throws {
        let start = DispatchTime.now()
        while let chunk = try source.read(maxFrames: chunkFrames) {
            try source.requireFinite(chunk, firstFrame: framesIn)
            framesIn += chunk.count / source.channels
            try write(try blamingInput { try pipeline.process(interleaved: chunk, isFinal: false) })
            if source.mayWaitForInput {
                try write(try blamingInput { try pipeline.settle() })
            }
            heldBackPeak = max(heldBackPeak, Double(framesIn) - Double(framesOut) / pipeline.lengthRatio)
            progress?.update(framesDone: framesIn)
        }
        try source.requireAudio(framesRead: framesIn)
        try write(try blamingInput { try pipeline.process(interleaved: [], isFinal: true) })
        try sink.finish()
        seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    /// The pipeline's work, with a signal the vocoder cannot analyse reported as this input's fault.
    private func blamingInput(_ work: () throws -> [Double]) throws -> [Double] {
        do {
            return try work()
        } catch let error as WorldError {
            throw CommandError.badInput(path: source.name, reason: error.description)
        }
    }

    private mutating func write(_ interleaved: [Double]) throws {
        framesOut += interleaved.count / source.channels
        try sink.write(interleaved)
    }

    func statistics(voice: VoiceShift?) -> ConversionStatistics {
        let rate = Double(source.sampleRate)
        return ConversionStatistics(
            inputSeconds: Double(framesIn) / rate,
            outputSeconds: Double(framesOut) / rate,
            sampleRate: source.sampleRate,
            channels: source.channels,
            processingSeconds: seconds,
            latencyMilliseconds: heldBackPeak / rate * 1000,
            latencyBoundMilliseconds: Double(pipeline.latency) / rate * 1000,
            clippedSamples: sink.clippedSamples,
            medianF0In: voice?.medianInputF0,
            medianF0Out: voice?.medianOutputF0)
    }
}

extension AudioSource {
    /// True when the next read may have to wait: standard input with nothing in it yet. A file never keeps its
    /// reader waiting.
    fileprivate var mayWaitForInput: Bool {
        guard case .standardInput(let reader) = self else { return false }
        return !reader.hasInputWaiting
    }
}

/// What `--json` reports at the end of a conversion.
struct ConversionStatistics: Encodable {
    let inputSeconds: Double
    let outputSeconds: Double
    let sampleRate: Int
    let channels: Int
    let processingSeconds: Double
    /// The latency this conversion had: the most input held back before its output was released (in a file
    /// conversion on several threads, the work queued for them counts too).
    let latencyMilliseconds: Double
    /// The stages' guaranteed bound on it, for any signal.
    let latencyBoundMilliseconds: Double
    let clippedSamples: Int
    let medianF0In: Double?
    let medianF0Out: Double?

    var realTimeFactor: Double { inputSeconds > 0 ? processingSeconds / inputSeconds : 0 }

    private enum CodingKeys: String, CodingKey {
        case inputSeconds = "input_seconds", outputSeconds = "output_seconds", sampleRate = "sample_rate"
        case channels, processingSeconds = "processing_seconds", realTimeFactor = "real_time_factor"
        case latencyMilliseconds = "latency_ms", latencyBoundMilliseconds = "latency_bound_ms"
        case clippedSamples = "clipped_samples"
        case medianF0In = "median_f0_in", medianF0Out = "median_f0_out"
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(inputSeconds, forKey: .inputSeconds)
        try container.encode(outputSeconds, forKey: .outputSeconds)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(channels, forKey: .channels)
        try container.encode(processingSeconds, forKey: .processingSeconds)
        try container.encode(realTimeFactor, forKey: .realTimeFactor)
        try container.encode(latencyMilliseconds, forKey: .latencyMilliseconds)
        try container.encode(latencyBoundMilliseconds, forKey: .latencyBoundMilliseconds)
        try container.encode(clippedSamples, forKey: .clippedSamples)
        try container.encode(medianF0In, forKey: .medianF0In)
        try container.encode(medianF0Out, forKey: .medianF0Out)
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
