import KoeStages
import KoeWorld

/// What a file conversion does: the voice, the EQ, the gain, the analysis, and how it runs.
/// The defaults change nothing; a conversion that changes nothing copies the audio.
public struct ConversionSettings: Sendable {
    /// The voice changes, tempo included (default: none).
    public var voice = VoiceSettings()
    /// EQ bands after the vocoder, in order, after the preset's (default none). A band the recording's sample
    /// rate cannot hold is refused.
    public var equalizer: [EqualizerBand] = []
    /// Output gain in dB (default 0).
    public var gainDB = 0.0
    /// The analysis: F0 method, frame period, F0 range, look-ahead (default WORLD's, DIO).
    public var analysis = AnalysisOptions()
    /// Run the vocoder even when the voice is unchanged: analysis and resynthesis (default off).
    public var forceVocoder = false
    /// Threads the conversion may use, 1 to 1024 (default 1): the channels at once, and each channel's vocoder its
    /// share. The output is the same for any count.
    public var threads = 1
    /// Frames read and processed at a time (default 4096). The output is the same for any size.
    public var chunkFrames = 4096
    /// Keep the output from clipping with a look-ahead peak limiter after the other stages (default on). It
    /// leaves a signal that fits the output's full scale bit for bit as it is, and adds 5 ms to the latency.
    /// Off, samples beyond full scale are clipped and counted (`ConversionStatistics.clippedSamples`).
    public var limitsOutput = true
    /// The preset applied last, whose EQ bands come before `equalizer`: those a recording's rate can hold.
    package private(set) var preset: Preset?
    /// Whether a file's conversion aims the pitch and the formant ratio at the preset's target from the speaker's
    /// profile (`Preset.aim(for:)`): on after `apply(preset:)` for a voice preset, off once the ratio is set
    /// explicitly (`set(_:to:)`, the command line's flags, or a `voice.pitch` or `voice.formant` changed from
    /// the preset's). A stream, and a live conversion, estimate the profile as the voice runs (`aimingVoice`).
    package var aimsPitch = false
    package var aimsFormant = false
    /// The speaker's profile, when it is known before the conversion (what `koe profile --json` measured): a voice
    /// preset aims from it instead of measuring a file first, and a stream from its start until its own estimate
    /// is usable.
    package var speakerProfile: SpeakerProfile?

    public init() {}

    /// Takes on a named voice (see `Preset.all`): its voice settings and its EQ bands. Settings changed after
    /// this call override the preset's.
    public mutating func apply(preset name: String) throws(KoeError) {
        guard let preset = Preset.named(name) else {
            throw .invalidArgument("unknown preset '\(name)' (presets: \(Preset.all.map(\.name).joined(separator: ", ")))")
        }
        voice = preset.voice
        self.preset = preset
        aimsPitch = preset.target != nil
        aimsFormant = preset.target != nil
    }

    /// The ratios the preset aims, those still as the preset set them: what a file's profile decides.
    package var aimedRatios: (pitch: Bool, formant: Bool) {
        guard let preset, preset.target != nil else { return (false, false) }
        return (aimsPitch && voice.pitch == preset.voice.pitch, aimsFormant && voice.formant == preset.voice.formant)
    }

    /// The voice as a stream plays it: aiming at the preset's target with the ratios that aim (`aimedRatios`),
    /// from the speaker's profile as the stream estimates it.
    var aimingVoice: VoiceSettings {
        var voice = self.voice
        let (aimsPitch, aimsFormant) = aimedRatios
        if aimsPitch || aimsFormant, var aiming = preset?.aiming {
            aiming.aimsPitch = aimsPitch
            aiming.aimsFormant = aimsFormant
            voice.aiming = aiming
        }
        return voice
    }

    /// True when the vocoder is in a conversion's chain: the voice changes something, or it is forced.
    var usesVocoder: Bool { forceVocoder || !voice.isIdentity }

    /// The preset's bands `sampleRate` can hold, then the explicit bands.
    func bands(sampleRate: Int) -> [EqualizerBand] {
        (preset?.bands(sampleRate: sampleRate) ?? []) + equalizer
    }

    /// Throws `KoeError.invalidArgument` for settings no conversion can run with, whatever the input.
    func validate() throws(KoeError) {
        try Self.requireThreads(threads)
        try Setting.chunkSize.validate(Double(chunkFrames))
        try validateSound()
        if let problem = analysis.problem(sampleRate: nil) {
            throw .invalidArgument(problem)
        }
    }

    /// Throws `KoeError.invalidArgument` for a gain that is not finite or a voice out of range: what a live
    /// changer taking these settings checks too.
    func validateSound() throws(KoeError) {
        try Setting.gain.validate(gainDB)
        if let problem = voice.problem {
            throw .invalidArgument(problem)
        }
    }

    /// Throws `KoeError.invalidArgument` for a thread count outside `Setting.threads`'s range.
    static func requireThreads(_ threads: Int) throws(KoeError) {
        try Setting.threads.validate(Double(threads))
    }

    /// Throws when a band cannot be built at `sampleRate` (at or above Nyquist, a non-positive Q, …).
    static func requireBuildable(_ bands: [EqualizerBand], sampleRate: Int) throws(KoeError) {
        for band in bands {
            _ = try KoeError.wrapping { try band.filter(sampleRate: sampleRate) }
        }
    }
}

extension VoiceSettings {
    /// The first setting out of its range (the table's: `Setting`), said in words; nil when the voice can be made.
    var problem: String? {
        // The reference median is the input's own, ranged as a median F0 is.
        let numbers: [(Setting, Double?, String)] = [
            (.pitch, pitch, "pitch"), (.tempo, tempo, "tempo"), (.formant, formant, "formant"),
            (.pitchRange, pitchRange, "pitch_range"), (.pitchMedian, pitchMedian, "pitch_median"),
            (.pitchMedian, referenceMedian, "reference median"),
        ]
        for case let (setting, value?, spelling) in numbers {
            if let problem = setting.problem(value, as: spelling) { return problem }
        }
        return snap?.problem ?? vibrato?.problem
    }
}
