import KoeIO
import KoeStages
import KoeWorld

/// The stages a conversion needs, decided once from its settings; builds one chain a channel.
/// A stage that would change nothing is left out, so EQ-only conversions never touch the vocoder.
final class ChainPlan {
    private let settings: ConversionSettings
    /// The voice, when the vocoder is in the chain.
    let voice: VoiceSettings?
    /// Each channel's median F0 from a first pass over a file, for the changes around the median; empty for
    /// streams, whose stages use a running median.
    private var referenceMedians: [Double?] = []
    /// The vocoder stage of each channel, as built, for the statistics.
    private(set) var voiceStages: [VoiceShift] = []

    init(_ settings: ConversionSettings) {
        self.settings = settings
        voice = settings.forceVocoder || !settings.voice.isIdentity ? settings.voice : nil
    }

    /// Fails before any audio is processed when the input cannot go through this chain; `frames` is the input's
    /// length where it is known in advance (a file).
    func check(sampleRate: Int, frames: Int?, source: String) throws(KoeError) {
        if voice != nil {
            guard SignalRequirements.sampleRates.contains(sampleRate) else {
                throw .invalidArgument(WorldError.unsupportedSampleRate(sampleRate).description)
            }
            try AnalysisCheck.require(settings.analysis, sampleRate: sampleRate)
        }
        if let frames { try checkF0Track(inputFrames: frames, sampleRate: sampleRate, source: source) }
        try ConversionSettings.requireBuildable(bands(sampleRate: sampleRate), sampleRate: sampleRate)
    }

    /// Fails when the F0 track has not one value for each analysis frame of an input `inputFrames` long: a
    /// file's before converting, a stream's once it has ended.
    func checkF0Track(inputFrames: Int, sampleRate: Int, source: String) throws(KoeError) {
        guard let track = voice?.f0Track else { return }
        let framePeriod = settings.analysis.framePeriod
        let expected = F0Contour.frameCount(samples: inputFrames, sampleRate: sampleRate, framePeriod: framePeriod)
        guard track.values.count != expected else { return }
        throw .badInput(source: track.name, reason:
            "has \(track.values.count) F0 values but \(source) has \(expected) analysis frames "
            + "(\(inputFrames) samples at \(sampleRate) Hz, one frame every \(framePeriod) ms from 0)")
    }

    /// The preset's bands this rate can hold, then the explicit bands.
    private func bands(sampleRate: Int) -> [EqualizerBand] {
        (settings.preset?.bands(sampleRate: sampleRate) ?? []) + settings.equalizer
    }

    /// `threads`: the threads the channel's vocoder may use; `fullScale`: the largest sample the output holds,
    /// the limiter's ceiling.
    func makeStages(sampleRate: Int, threads: Int, fullScale: Double) throws -> [any Stage] {
        var stages: [any Stage] = []
        if var voice {
            let channel = voiceStages.count
            if channel < referenceMedians.count, let median = referenceMedians[channel] {
                voice.referenceMedian = median
            }
            let stage = try VoiceShift(sampleRate: sampleRate, voice: voice, analysis: settings.analysis, threads: threads)
            voiceStages.append(stage)
            stages.append(stage)
        }
        if let equalizer = try Equalizer.make(bands: bands(sampleRate: sampleRate), sampleRate: sampleRate) { stages.append(equalizer) }
        if let gain = try Gain.make(decibels: settings.gainDB) { stages.append(gain) }
        // A chain that changes nothing cannot raise a peak: a copy stays a copy.
        if settings.limitsOutput && !stages.isEmpty {
            stages.append(try Limiter(sampleRate: sampleRate, ceiling: fullScale))
        }
        return stages
    }

    /// For changes around the median F0, reads a file input once first for each channel's median, so they use
    /// the recording's own median from its first frame; a stream keeps the running median.
    func surveyMedians(of source: AudioSource) throws {
        guard let voice, voice.needsMedian, voice.referenceMedian == nil else { return }
        if let track = voice.f0Track {
            // The F0 the changes work on is the track's, known whole from the start, stream or file.
            referenceMedians = Array(repeating: track.medianVoicedF0, count: source.channels)
            return
        }
        guard case .file(let input) = source else { return }
        let file = try AudioFile(reading: input.path)
        var surveys = try (0..<file.channels).map { _ in
            try F0Survey(sampleRate: file.sampleRate, f0Floor: settings.analysis.f0Floor, f0Ceil: settings.analysis.f0Ceil)
        }
        while case let chunk = try file.readInterleaved(maxFrames: 1 << 16), !chunk.isEmpty {
            for channel in surveys.indices {
                surveys[channel].add(stride(from: channel, to: chunk.count, by: file.channels).map { chunk[$0] })
            }
        }
        referenceMedians = surveys.indices.map { surveys[$0].finish() }
    }
}
