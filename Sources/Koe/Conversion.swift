import KoeDSP
import KoeIO
import KoeStages
import KoeWorld

/// Converts `input` into `output`: an audio file into another, or a stream of samples (raw PCM through a pipe,
/// say) into either. A file output's format follows its extension (wav, flac, ogg, aiff, …), with the input's
/// sample rate, channels and, where the format holds it, sample encoding. Each chunk converted is written at once,
/// so a stream's output flows while its input still arrives; the samples are the same whatever the endpoints.
///
/// A file output appears only complete: it is written to a temporary file beside it and renamed at the end, so a
/// refused or failed conversion leaves nothing behind. `progress` is called on the caller's thread after each
/// chunk. Throws `KoeError` for settings or input it cannot convert, and what a stream's closures throw.
public func convert(
    _ input: ConversionInput, to output: ConversionOutput, settings: ConversionSettings = ConversionSettings(),
    progress: ((ConversionProgress) -> Void)? = nil
) throws(KoeError) -> ConversionStatistics {
    let source = try AudioSource(input)
    return try Conversion.run(source, settings: settings, progress: progress) { source throws(KoeError) in
        try AudioSink(output, like: source)
    }
}

/// How far a conversion has come.
public struct ConversionProgress: Sendable {
    /// Input frames converted so far.
    public let framesDone: Int
    /// Frames the input holds, when known (a file; not a stream).
    public let totalFrames: Int?
    public let sampleRate: Int
}

/// What a conversion did, for reports and `--json`.
public struct ConversionStatistics: Sendable {
    public let inputSeconds: Double
    public let outputSeconds: Double
    public let sampleRate: Int
    public let channels: Int
    public let processingSeconds: Double
    /// The latency this conversion had: the most input held back before its output was released (in a file
    /// conversion on several threads, the work queued for them counts too).
    public let latencyMilliseconds: Double
    /// The stages' guaranteed bound on it, for any signal.
    public let latencyBoundMilliseconds: Double
    /// Whether the analysis and synthesis were live ones (`AnalysisOptions.live`).
    public let live: Bool
    public let clippedSamples: Int
    public let medianF0In: Double?
    public let medianF0Out: Double?
    /// The speaker's profile a voice preset aimed from: measured on the file first, or as a stream (or a live
    /// conversion) ran, as it stood at the end (nil when nothing was aimed).
    package var profile: SpeakerProfile?
    /// What the preset's target asked of this voice and whether a bound bit (nil when nothing was aimed); a
    /// stream's at its end.
    package var aim: Preset.Aim?
    /// The pitch and formant ratios the vocoder applied (1 without it); a stream that aimed, those at its end.
    package var pitchRatio = 1.0
    package var formantRatio = 1.0

    package var realTimeFactor: Double { inputSeconds > 0 ? processingSeconds / inputSeconds : 0 }
}

/// Drives one conversion: reads chunks, pushes them through the engine, writes what comes out.
struct Conversion {
    private let source: AudioSource
    private let engine: Engine
    private let sink: AudioSink
    private let chunkFrames: Int

    private var framesIn = 0
    private var framesOut = 0
    private var seconds = 0.0
    /// The most input, in frames, that had arrived without its output having left: the latency this run had,
    /// work still queued on other threads included.
    private var heldBackPeak = 0.0

    /// Converts all of `source` with `settings`. The sink is opened by `openSink` only once the engine is known
    /// to fit the input, so a refused input leaves no output behind; it is complete on return. The threads are
    /// the engine's budget: channels side by side, each channel's vocoder its share.
    package static func run(
        _ source: AudioSource, settings: ConversionSettings, progress: ((ConversionProgress) -> Void)?,
        openingSink openSink: (AudioSource) throws(KoeError) -> AudioSink
    ) throws(KoeError) -> ConversionStatistics {
        try settings.validate()
        let (settings, profile, aim) = try aimed(settings, at: source)
        try check(settings, sampleRate: source.sampleRate, frames: source.totalFrames, source: source.name)
        let medians = try KoeError.wrapping(source: source.name) { try referenceMedians(settings, of: source) }
        let sink = try openSink(source)
        let engine = try KoeError.wrapping {
            try Engine(
                sampleRate: source.sampleRate, channels: source.channels, settings: settings, isChangeable: false,
                delaysOutput: false, fullScale: sink.fullScale, referenceMedians: medians)
        }
        var conversion = Conversion(source: source, engine: engine, sink: sink, chunkFrames: settings.chunkFrames)
        try KoeError.wrapping(source: source.name) {
            try conversion.run(progress: progress) { framesIn in
                try checkF0Track(settings, inputFrames: framesIn, sampleRate: source.sampleRate, source: source.name)
            }
        }
        var statistics = conversion.statistics(voice: engine.firstVoiceStage, live: settings.analysis.live)
        statistics.profile = profile
        statistics.aim = aim
        if settings.usesVocoder {
            statistics.pitchRatio = settings.voice.pitch
            statistics.formantRatio = settings.voice.formant
        }
        if settings.voice.aiming != nil, let state = engine.aimState {
            statistics.profile = engine.speakerProfile
            statistics.aim = state.aim.map { $0.applied(pitch: settings.voice.aimsPitch, formant: settings.voice.aimsFormant) }
            statistics.pitchRatio = state.pitch
            statistics.formantRatio = state.formant
        }
        return statistics
    }

    /// `settings` with a voice preset's ratios aimed at its target (`Preset.aim(for:)`) from the profile of the
    /// file's voice, measured in a first pass (or known before); the ratios set explicitly stay. A file with no
    /// voice in it keeps the preset's typical ratios. A stream cannot be measured first, and a live conversion
    /// plays a file as a stream would: their voice aims from the profile estimated as it runs (`aimingVoice`).
    private static func aimed(
        _ settings: ConversionSettings, at source: AudioSource
    ) throws(KoeError) -> (ConversionSettings, SpeakerProfile?, Preset.Aim?) {
        let (aimsPitch, aimsFormant) = settings.aimedRatios
        guard aimsPitch || aimsFormant, let preset = settings.preset else { return (settings, nil, nil) }
        guard case .file(let file) = source, !settings.analysis.live else {
            var running = settings
            running.voice = settings.aimingVoice
            return (running, nil, nil)
        }
        let profile: SpeakerProfile
        if let known = settings.speakerProfile {
            profile = known
        } else {
            do {
                profile = try SpeakerProfile(file: file.path)
            } catch {
                guard case .badInput = error else { throw error }
                return (settings, nil, nil)
            }
        }
        let vocoderMedian = try KoeError.wrapping(source: file.path) { try surveyedMedian(file.path, settings.analysis) }
        guard let aim = preset.aim(for: profile, vocoderMedian: vocoderMedian) else { return (settings, nil, nil) }
        var aimed = settings
        if aimsPitch { aimed.voice.pitch = aim.pitch }
        if aimsFormant { aimed.voice.formant = aim.formant }
        // Reported with the ratios the conversion uses: the aim's where they aim, the ones set explicitly elsewhere.
        var applied = aim.applied(pitch: aimsPitch, formant: aimsFormant)
        (applied.pitch, applied.formant) = (aimed.voice.pitch, aimed.voice.formant)
        return (aimed, profile, applied)
    }

    /// Fails before any audio is processed when the input cannot be converted with `settings`; `frames` is the
    /// input's length where it is known in advance (a file).
    private static func check(_ settings: ConversionSettings, sampleRate: Int, frames: Int?, source: String) throws(KoeError) {
        if settings.usesVocoder {
            guard SignalRequirements.sampleRates.contains(sampleRate) else {
                throw .invalidArgument(WorldError.unsupportedSampleRate(sampleRate).description)
            }
            try KoeError.wrapping { try settings.analysis.validate(sampleRate: sampleRate) }
        }
        if let frames { try checkF0Track(settings, inputFrames: frames, sampleRate: sampleRate, source: source) }
        try ConversionSettings.requireBuildable(settings.bands(sampleRate: sampleRate), sampleRate: sampleRate)
    }

    /// Fails when the F0 track has not one value for each analysis frame of an input `inputFrames` long: a
    /// file's before converting, a stream's once it has ended.
    private static func checkF0Track(
        _ settings: ConversionSettings, inputFrames: Int, sampleRate: Int, source: String
    ) throws(KoeError) {
        guard settings.usesVocoder, let track = settings.voice.f0Track else { return }
        let framePeriod = settings.analysis.framePeriod
        let expected = F0Contour.frameCount(samples: inputFrames, sampleRate: sampleRate, framePeriod: framePeriod)
        guard track.values.count != expected else { return }
        throw .badInput(source: track.name, reason:
            "has \(track.values.count) F0 values but \(source) has \(expected) analysis frames "
            + "(\(inputFrames) samples at \(sampleRate) Hz, one frame every \(framePeriod) ms from 0)")
    }

    /// For changes around the median F0, each channel's median before the conversion starts, so they use the
    /// recording's own median from its first frame: the F0 track's, or a file's read once first. Empty for a
    /// stream, whose vocoder keeps a running median.
    private static func referenceMedians(_ settings: ConversionSettings, of source: AudioSource) throws -> [Double?] {
        let voice = settings.voice
        guard settings.usesVocoder, voice.needsMedian, voice.referenceMedian == nil else { return [] }
        if let track = voice.f0Track {
            return Array(repeating: track.medianVoicedF0, count: source.channels)
        }
        guard case .file(let input) = source else { return [] }
        let file = try AudioFile(reading: input.path)
        var surveys = try (0..<file.channels).map { _ in
            try F0Survey(sampleRate: file.sampleRate, f0Floor: settings.analysis.f0Floor, f0Ceil: settings.analysis.f0Ceil)
        }
        while case let chunk = try file.readInterleaved(maxFrames: 1 << 16), !chunk.isEmpty {
            for channel in surveys.indices {
                surveys[channel].add(stride(from: channel, to: chunk.count, by: file.channels).map { chunk[$0] })
            }
        }
        return surveys.indices.map { surveys[$0].finish() }
    }

    /// The median F0 DIO finds in the file's voiced frames, its channels mixed: the F0 the vocoder scales.
    private static func surveyedMedian(_ path: String, _ analysis: AnalysisOptions) throws -> Double? {
        let file = try AudioFile(reading: path)
        var survey = try F0Survey(sampleRate: file.sampleRate, f0Floor: analysis.f0Floor, f0Ceil: analysis.f0Ceil)
        while case let chunk = try file.readInterleaved(maxFrames: 1 << 16), !chunk.isEmpty {
            survey.add(stride(from: 0, to: chunk.count, by: file.channels).map { start in
                (0..<file.channels).reduce(0.0) { $0 + chunk[start + $1] } / Double(file.channels)
            })
        }
        return survey.finish()
    }

    private init(source: AudioSource, engine: Engine, sink: AudioSink, chunkFrames: Int) {
        self.source = source
        self.engine = engine
        self.sink = sink
        self.chunkFrames = chunkFrames
    }

    /// `checkLength` is given the input's length once it has ended, before the output is completed.
    private mutating func run(progress: ((ConversionProgress) -> Void)?, checkLength: (Int) throws -> Void) throws {
        let start = monotonicSeconds()
        while let chunk = try source.read(maxFrames: chunkFrames) {
            try source.requireFinite(chunk, firstFrame: framesIn)
            framesIn += chunk.count / source.channels
            try write(try engine.process(interleaved: chunk))
            if source.mayWaitForInput {
                try write(try engine.drain())
            }
            heldBackPeak = max(heldBackPeak, Double(framesIn) - Double(framesOut) / engine.lengthRatio)
            progress?(ConversionProgress(framesDone: framesIn, totalFrames: source.totalFrames, sampleRate: source.sampleRate))
        }
        try source.requireAudio(framesRead: framesIn)
        try write(try engine.finishInterleaved())
        try checkLength(framesIn)
        try sink.finish()
        seconds = monotonicSeconds() - start
    }

    private mutating func write(_ interleaved: [Double]) throws {
        framesOut += interleaved.count / source.channels
        try sink.write(interleaved)
    }

    private func statistics(voice: VoiceShift?, live: Bool) -> ConversionStatistics {
        let rate = Double(source.sampleRate)
        return ConversionStatistics(
            inputSeconds: Double(framesIn) / rate,
            outputSeconds: Double(framesOut) / rate,
            sampleRate: source.sampleRate,
            channels: source.channels,
            processingSeconds: seconds,
            latencyMilliseconds: heldBackPeak / rate * 1000,
            latencyBoundMilliseconds: Double(engine.latency) / rate * 1000,
            live: live,
            clippedSamples: sink.clippedSamples,
            medianF0In: voice?.medianInputF0,
            medianF0Out: voice?.medianOutputF0)
    }
}

extension AudioSource {
    /// True when the next read may have to wait: a stream with nothing in it yet. A file never keeps its reader
    /// waiting.
    fileprivate var mayWaitForInput: Bool {
        guard case .stream(let stream) = self else { return false }
        return stream.mayWait()
    }
}
