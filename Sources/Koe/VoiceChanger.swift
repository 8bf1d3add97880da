import Glibc
import KoeIO
import KoeStages
import KoeWorld

/// A live voice changer: planar blocks in, as many frames out, delayed by exactly `latency` frames.
///
/// ```swift
/// let changer = try VoiceChanger(sampleRate: 48000, channels: 2)
/// changer.voice.pitch = 1.2
/// changer.voice.formant = 1.8
/// let out = try changer.process(planar)   // planar.count channels, each as long as the input's
/// let tail = try changer.finish()          // the `latency` frames still held
/// ```
///
/// Each channel runs WORLD analysis, the voice changes and WORLD synthesis (always, so that the delay stays
/// fixed whatever the settings), then the equalizer, the gain and a peak limiter that keeps the output within
/// ±1 (`limitsOutput`). While the voice changes nothing (pitch and formant 1, no other F0 change, no whisper)
/// the input itself takes the vocoder's place, as a conversion leaves the vocoder out. A change to such a voice
/// crossfades to the input while the vocoder glides back to the voice unchanged; a change away from it
/// crossfades to the vocoder first, and the vocoder glides to the new voice once that is heard (`latency` plus
/// 50 ms later than other changes). Output frame `n` is the converted input frame
/// `n - latency`; the first `latency` frames are silence, and `out ++ finish()` is the input's conversion
/// preceded by `latency` frames of silence.
///
/// **Settings** change between any two `process` calls and glide to their new value over 50 ms: pitch and
/// formant ratios geometrically, frame by frame; EQ coefficients and the gain sample by sample. The vocoder applies a change from the analysis frames the next `process` call completes, which
/// reach the output about `latency` frames later. Out-of-range values are clamped to the documented range and
/// non-finite ones ignored, so a host's odd control value never stops the audio.
///
/// **Threads.** Not thread-safe: call every method, settings included, from one thread at a time (the audio
/// thread, typically). With `Options.threads == 1` (the default) `process` runs on the caller's thread alone and
/// takes no lock. In the unsafe-pointer form it allocates nothing, from the first block on, whatever the signal:
/// the buffers are made at construction with room for what the stages hold back and for a block of up to 1,024
/// frames (longer ones are converted in pieces of that size), and the first changer made in a process for a
/// sample rate and options runs a scratch chain, so that Swift's runtime sets up the types a chain uses then. A
/// call that completes an analysis block (every 20 ms of input with DIO, 5 ms when live) does that block's work.
/// With more threads each channel's vocoder analyses on threads of the worker pool and `process` waits for them as
/// needed; the output is the same.
public final class VoiceChanger {
    /// How the changer analyses; fixed for its life.
    public struct Options: Sendable {
        /// The analysis: F0 method, frame period, F0 range, look-ahead; WORLD's defaults (DIO, 5 ms, 71–800 Hz).
        /// `analysis.live` gives the lowest latency, live analysis and causal synthesis: about 47 ms at WORLD's
        /// F0 floor, against about 215 ms.
        public var analysis = AnalysisOptions()
        /// Threads the changer may use, 1 to 1024 (default 1: the caller's thread alone): the channels side by
        /// side first, then each channel's vocoder its share, as in a file conversion.
        public var threads = 1

        public init() {}
    }

    /// The channel counts a changer takes: as many as an audio file may hold.
    static let channelCounts = 1...RawPCMFormat.maxChannels

    /// Fixed for the changer's life, like `channels` and `latency`: read them from any thread.
    public let sampleRate: Int
    public let channels: Int
    package let options: Options
    /// Frames between an input frame and its output frame; fixed for the changer's life.
    public let latency: Int

    /// The voice: pitch, formant, pitch range and median, whisper, snap, vibrato, pitch curve (default: the voice
    /// unchanged). Set it whole or a field at a time (`changer.voice.pitch = 1.2`). A value out of its range (the
    /// settings table's, `Setting`) is clamped to it, and a value that is not finite leaves its field as it was, so
    /// a host's odd control value never stops the audio. A stream keeps time and analyses its own F0: `tempo` stays 1 and `f0Track` nil.
    /// The pitch curve's times count input seconds from the start of the stream; pitch range and median work
    /// around the running median of the voiced frames so far.
    /// **When:** between any two `process` calls, on their thread. **Real time:** changing pitch, formant and
    /// the other numbers allocates nothing and takes no lock (the plugins' test moves them under a host's
    /// `run()`); a new pitch curve's points are the caller's array.
    public var voice: VoiceSettings {
        get { engine.voice }
        set { engine.change(voice: newValue.clamped(keeping: engine.voice)) }
    }

    /// Keep every output sample within ±1 with a look-ahead peak limiter (default on). Its look-ahead is part of
    /// `latency` either way, so switching it never moves the output; a block within ±1 passes it unchanged.
    /// Switched on while a stream plays, it clips to ±1 the frames the latency still holds that were made without it.
    /// **When:** between any two `process` calls, on their thread; allocates nothing.
    public var limitsOutput: Bool {
        get { engine.limitsOutput }
        set { engine.set(limitsOutput: newValue) }
    }

    /// The EQ bands, applied in order after the vocoder (default none). Bands that cannot be built at this
    /// sample rate (at or above Nyquist, a non-positive Q) and flat bands are left out: reading the property
    /// gives the bands that act.
    /// **When:** between any two `process` calls, on their thread. **Real time:** no: it builds the filters.
    public var equalizer: [EqualizerBand] {
        get { engine.bands }
        set { engine.set(bands: newValue) }
    }

    /// Output gain in dB (default 0; clamped to -60…60 dB; a non-finite value is ignored).
    /// **When:** between any two `process` calls, on their thread; allocates nothing and takes no lock.
    public var gainDB: Double {
        get { engine.gainDB }
        set {
            guard let clamped = Setting.gain.clamped(newValue) else { return }
            engine.set(gainDB: clamped)
        }
    }

    /// The speaker's profile a voice preset aims from (`apply(preset:)`). The changer estimates it as the voice
    /// runs, the same measure `SpeakerProfile(analyzing:sampleRate:)` takes of a recording, once 0.5 s of voiced
    /// speech has been heard; silence, whisper and breath leave it as it is. Until then it is the profile
    /// set here, if any: set one measured before (of the same speaker) to aim from the first block; nil forgets it.
    /// **When:** between any two `process` calls, on their thread; allocates nothing and takes no lock.
    public var speakerProfile: SpeakerProfile? {
        get { engine.speakerProfile }
        set { engine.set(knownProfile: newValue) }
    }

    /// The pitch and formant ratios the vocoder gave its latest frame (the first channel's): while a voice preset
    /// aims, the aimed ones, where `voice` keeps the preset's own.
    package var appliedRatios: (pitch: Double, formant: Double) {
        engine.aimState.map { ($0.pitch, $0.formant) } ?? (voice.pitch, voice.formant)
    }

    /// The stream: its stages, its settings and how a change glides, its warm-up.
    private let engine: Engine

    /// Throws `KoeError.invalidArgument` for a sample rate outside 8–192 kHz, a channel count outside
    /// `channelCounts`, threads outside 1…1024, or analysis options WORLD cannot run with.
    /// **Real time:** no: it allocates every buffer the stream needs, so that `process` need not.
    public init(sampleRate: Int, channels: Int, options: Options = Options()) throws(KoeError) {
        guard SignalRequirements.sampleRates.contains(sampleRate) else {
            throw .invalidArgument(WorldError.unsupportedSampleRate(sampleRate).description)
        }
        guard Self.channelCounts.contains(channels) else {
            throw .invalidArgument("a voice changer takes 1 to \(Self.channelCounts.upperBound) channels (got \(channels))")
        }
        try ConversionSettings.requireThreads(options.threads)
        try KoeError.wrapping { try options.analysis.validate(sampleRate: sampleRate) }
        self.sampleRate = sampleRate
        self.channels = channels
        self.options = options
        engine = try KoeError.wrapping {
            try Engine.stream(sampleRate: sampleRate, channels: channels, analysis: options.analysis, threads: options.threads)
        }
        latency = engine.latency
        // The setters' own first use (their clamps' ranges), here rather than in a host's callback; no change.
        voice = VoiceSettings()
        gainDB = 0
    }

    /// Takes on a named voice (see `Preset.all`): its pitch, pitch range, formant, whisper and EQ bands (those
    /// this sample rate can hold). Tempo is a file conversion's setting; a live changer keeps time. A voice preset
    /// (`female`, `kawaii`, …) aims at its target: its typical ratios until the speaker's profile is known
    /// (`speakerProfile`), then the ratios that move this speaker's voice to the target, which they reach at
    /// 12 semitones a second and follow as the estimate moves. A pitch or formant set afterwards means what it says.
    /// **When:** between any two `process` calls, on their thread. **Real time:** no: it builds the filters.
    public func apply(preset name: String) throws(KoeError) {
        guard let preset = Preset.named(name) else {
            let names = Preset.all.map(\.name).joined(separator: ", ")
            throw .invalidArgument("unknown preset '\(name)' (presets: \(names))")
        }
        var voice = self.voice
        voice.pitch = preset.voice.pitch
        voice.pitchRange = preset.voice.pitchRange
        voice.formant = preset.voice.formant
        voice.whisper = preset.voice.whisper
        voice.aiming = preset.aiming
        self.voice = voice
        equalizer = preset.bands(sampleRate: sampleRate)
    }

    /// Takes on what a conversion's settings ask for, as `koe live` does with convert's options: the voice (F0
    /// edits included), the preset's bands this rate can hold then the explicit ones, the gain and the limiter.
    /// Refused, with nothing changed: a voice out of range, one that needs the whole input (a tempo other than
    /// 1, an F0 track), or an explicit band this sample rate cannot hold. The analysis and threads are fixed at
    /// construction and not read here.
    /// **When:** between any two `process` calls, on their thread. **Real time:** no: it builds the filters.
    public func apply(_ settings: ConversionSettings) throws(KoeError) {
        try check(settings)
        voice = settings.aimingVoice
        engine.set(knownProfile: settings.speakerProfile)
        equalizer = (settings.preset?.bands(sampleRate: sampleRate) ?? []) + settings.equalizer
        gainDB = settings.gainDB
        limitsOutput = settings.limitsOutput
    }

    /// Refuses what `apply(_:)` refuses.
    private func check(_ settings: ConversionSettings) throws(KoeError) {
        try settings.validateSound()
        guard settings.voice.tempo == 1 else {
            throw .invalidArgument("a live changer keeps time: its tempo is 1 (got \(settings.voice.tempo))")
        }
        guard settings.voice.f0Track == nil else {
            throw .invalidArgument("an F0 track is made for one whole input; a live changer cannot take one")
        }
        try ConversionSettings.requireBuildable(settings.equalizer, sampleRate: sampleRate)
    }

    // MARK: Changes made ready on another thread

    /// What `apply(_:)` changes, made ready by `prepare(_:)` on a thread other than the audio thread (the voice
    /// checked, the EQ filters designed) for `take(_:)` on it. Once taken it holds what it replaced, so that
    /// releasing it frees that on the thread that releases it.
    package final class Change: @unchecked Sendable {
        fileprivate var voice: VoiceSettings
        fileprivate var designs: [Equalizer.Design]
        fileprivate let gainDB: Double
        fileprivate let limitsOutput: Bool

        fileprivate init(voice: VoiceSettings, designs: [Equalizer.Design], gainDB: Double, limitsOutput: Bool) {
            self.voice = voice
            self.designs = designs
            self.gainDB = gainDB
            self.limitsOutput = limitsOutput
        }
    }

    /// `settings` made ready for `take(_:)`: refused as `apply(_:)` refuses them, and for more EQ bands than
    /// `Equalizer.realTimeBands` (a preset's count too). **When:** on any thread, while another runs `process`:
    /// it reads only what is fixed for the changer's life.
    package func prepare(_ settings: ConversionSettings) throws(KoeError) -> Change {
        try check(settings)
        let design = try Equalizer.Design(bands: settings.bands(sampleRate: sampleRate), sampleRate: sampleRate)
        // Checked, so nothing is clamped or kept: only what a stream does not take (tempo, F0 track) is reset.
        return Change(
            voice: settings.aimingVoice.clamped(keeping: settings.voice), designs: Array(repeating: design, count: channels),
            gainDB: settings.gainDB, limitsOutput: settings.limitsOutput)
    }

    /// Takes a change `prepare(_:)` made: the voice, the EQ, the gain and the limiter, gliding as the setters do.
    /// **When:** between any two `process` calls, on their thread, once per change. **Real time:** allocates and
    /// frees nothing: the voice and the bands it replaces go into `change`, freed where `change` is released.
    /// (A pitch curve's points are shared with the settings the change was made from, never freed here.)
    package func take(_ change: Change) {
        engine.take(voice: &change.voice, designs: &change.designs, gainDB: change.gainDB, limitsOutput: change.limitsOutput)
    }

    /// The first channel's F0 of the frame last synthesised, as analysed and as changed, in Hz (0: unvoiced); nil
    /// with more than one thread. **When:** on the thread that calls `process`, between calls.
    package var latestF0: (input: Double, output: Double)? { engine.latestF0 }

    // MARK: Processing

    /// Converts the next block: one array per channel, all of one length; returns as many frames per channel.
    /// **Real time:** no: the returned arrays are allocated; the unsafe-pointer form is the one for a callback.
    public func process(_ input: [[Float]]) throws(KoeError) -> [[Float]] {
        try engine.process(planar: input)
    }

    /// Converts the next block: one array per channel, all of one length; returns as many frames per channel.
    package func process(_ input: [[Double]]) throws(KoeError) -> [[Double]] {
        try engine.process(planar: input)
    }

    /// Converts the next `frames` frames of planar audio from `input` into `output`, one pointer per channel
    /// each way; `output` may be `input` (in place). Allocates nothing, from the first block on (see the type's
    /// notes on threads). Bad audio (a sample that is not finite) throws before anything changes: nothing is
    /// written and the block is not part of the stream.
    public func process(
        _ input: UnsafePointer<UnsafePointer<Float>>, into output: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int
    ) throws(KoeError) {
        try engine.process(input, into: output, frames: frames)
    }

    /// Ends the stream: returns the `latency` frames per channel still held. Call `reset` before a new stream.
    /// **Real time:** no: the returned arrays are allocated.
    public func finish() throws(KoeError) -> [[Float]] {
        try engine.finish(as: Float.self)
    }

    /// Ends the stream: returns the `latency` frames per channel still held, as `Sample`s.
    package func finish<Sample: BinaryFloatingPoint>(as sample: Sample.Type) throws(KoeError) -> [[Sample]] {
        try engine.finish(as: sample)
    }

    /// Ends the stream into `output`, one pointer per channel, each with room for `latency` frames.
    /// **When:** once, after the last `process`, on its thread.
    public func finish(into output: UnsafePointer<UnsafeMutablePointer<Float>>) throws(KoeError) {
        let tail = try finish()
        for channel in 0..<channels {
            _ = UnsafeMutableBufferPointer(start: output[channel], count: latency).update(fromContentsOf: tail[channel])
        }
    }

    /// Forgets the stream: the next `process` starts a new one, with the current settings and no glide.
    /// **When:** between `process` calls, on their thread. **Real time:** no: it rebuilds the stages' state.
    public func reset() {
        engine.reset()
    }
}

extension VoiceSettings {
    /// These settings as a stream takes them: each number clamped to its setting's range (`Setting`), a
    /// non-finite one (or snap or vibrato options holding one) left as it was in `previous`, tempo 1 and no F0
    /// track.
    fileprivate func clamped(keeping previous: VoiceSettings) -> VoiceSettings {
        var voice = self
        voice.pitch = Setting.pitch.clamped(pitch) ?? previous.pitch
        voice.formant = Setting.formant.clamped(formant) ?? previous.formant
        voice.pitchRange = Setting.pitchRange.clamped(pitchRange) ?? previous.pitchRange
        if let median = pitchMedian {
            voice.pitchMedian = Setting.pitchMedian.clamped(median) ?? previous.pitchMedian
        }
        voice.referenceMedian = nil
        voice.tempo = 1
        voice.f0Track = nil
        if let snap { voice.snap = snap.clamped ?? previous.snap }
        if let vibrato { voice.vibrato = vibrato.clamped ?? previous.vibrato }
        return voice
    }
}
