import KoeIO
import KoeStages
import KoeWorld

/// The stages a conversion needs, decided once from the options; builds one chain a channel.
/// A stage that would change nothing is left out, so EQ-only conversions never touch the vocoder.
final class ChainPlan {
    let voice: VoiceSettings?
    /// The named voice whose bands come first, those its recording's rate can hold.
    let preset: Preset?
    /// The explicit bands, refused where a recording's rate cannot hold them.
    let bands: [EqualizerBand]
    let gain: Double
    let analysis: StreamingAnalyzer.Options
    /// Each channel's median F0 from a first pass over a file, for the changes around the median; empty for
    /// streams, whose stages use a running median.
    var referenceMedians: [Double?] = []
    /// The vocoder stage of each channel, as built, for the statistics.
    private(set) var voiceStages: [VoiceShift] = []

    init(
        voice: VoiceSettings?, preset: Preset?, bands: [EqualizerBand], gain: Double,
        analysis: StreamingAnalyzer.Options
    ) {
        self.voice = voice
        self.preset = preset
        self.bands = bands
        self.gain = gain
        self.analysis = analysis
    }

    /// Fails before any audio is processed when the input cannot go through this chain.
    func check(sampleRate: Int) throws {
        if voice != nil, !SignalRequirements.sampleRates.contains(sampleRate) {
            throw WorldError.unsupportedSampleRate(sampleRate)
        }
        if voice != nil, analysis.f0Ceil >= Double(sampleRate) / 2 {
            throw CommandError.badOption("--f0-ceil (\(analysis.f0Ceil) Hz) must be below half the sample rate (\(sampleRate / 2) Hz)")
        }
        _ = try Equalizer.make(bands: bands(sampleRate: sampleRate), sampleRate: sampleRate)
    }

    private func bands(sampleRate: Int) -> [EqualizerBand] {
        (preset?.bands(sampleRate: sampleRate) ?? []) + bands
    }

    /// `threads`: the threads the channel's vocoder may use.
    func makeStages(sampleRate: Int, threads: Int) throws -> [any Stage] {
        var stages: [any Stage] = []
        if var voice {
            let channel = voiceStages.count
            if channel < referenceMedians.count, let median = referenceMedians[channel] {
                voice.referenceMedian = median
            }
            let stage = try VoiceShift(sampleRate: sampleRate, voice: voice, analysis: analysis, threads: threads)
            voiceStages.append(stage)
            stages.append(stage)
        }
        if let equalizer = try Equalizer.make(bands: bands(sampleRate: sampleRate), sampleRate: sampleRate) { stages.append(equalizer) }
        if let gain = try Gain.make(decibels: gain) { stages.append(gain) }
        return stages
    }
}

extension ChainPlan {
    /// The chain the voice, equalizer and analysis options ask for; the vocoder only if the voice changes
    /// (or `--vocoder` forces it).
    convenience init(voice: VoiceOptions, equalizer: EqualizerOptions, analysis: AnalysisOptions) throws {
        let settings = try voice.settings()
        self.init(
            voice: voice.forceVocoder || !settings.isIdentity ? settings : nil,
            preset: voice.selectedPreset, bands: try equalizer.bands(), gain: equalizer.gain ?? 0,
            analysis: analysis.streamingOptions)
    }
}

extension ChainPlan {
    /// For changes around the median F0, reads a file input once first for each channel's median, so they use
    /// the recording's own median from its first frame; a stream keeps the running median.
    func surveyMedians(of source: AudioSource) throws {
        guard let voice, voice.needsMedian, voice.referenceMedian == nil, case .file(let input) = source else { return }
        let file = try AudioFile(reading: input.path)
        var surveys = try (0..<file.channels).map { _ in
            try F0Survey(sampleRate: file.sampleRate, f0Floor: analysis.f0Floor, f0Ceil: analysis.f0Ceil)
        }
        while case let chunk = try file.readInterleaved(maxFrames: 1 << 16), !chunk.isEmpty {
            for channel in surveys.indices {
                surveys[channel].add(stride(from: channel, to: chunk.count, by: file.channels).map { chunk[$0] })
            }
        }
        referenceMedians = surveys.indices.map { surveys[$0].finish() }
    }
}
