import Glibc
import KoeIO
import KoeStages
import KoeWorld
import Synchronization

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
/// With more threads each channel's vocoder analyses on threads of its own and `process` waits for them as
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
    package static let channelCounts = 1...RawPCMFormat.maxChannels

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
        get { currentVoice }
        set { change(to: newValue.clamped(keeping: currentVoice)) }
    }

    /// Keep every output sample within ±1 with a look-ahead peak limiter (default on). Its look-ahead is part of
    /// `latency` either way, so switching it never moves the output; a block within ±1 passes it unchanged.
    /// Switched on while a stream plays, it clips to ±1 the frames the latency still holds that were made without it.
    /// **When:** between any two `process` calls, on their thread; allocates nothing.
    public var limitsOutput = true {
        didSet { engine.setLimiting(limitsOutput) }
    }

    /// The EQ bands, applied in order after the vocoder (default none). Bands that cannot be built at this
    /// sample rate (at or above Nyquist, a non-positive Q) and flat bands are left out: reading the property
    /// gives the bands that act.
    /// **When:** between any two `process` calls, on their thread. **Real time:** no: it builds the filters.
    public var equalizer: [EqualizerBand] {
        get { equalizerBands }
        set {
            let usable = newValue.filter { (try? $0.filter(sampleRate: sampleRate)) != nil }
            equalizerBands = usable.filter { !$0.isFlat }
            try? engine.set(bands: equalizerBands, gliding: hasStarted)
        }
    }

    /// Output gain in dB (default 0; clamped to -60…60 dB; a non-finite value is ignored).
    /// **When:** between any two `process` calls, on their thread; allocates nothing and takes no lock.
    public var gainDB: Double {
        get { gain }
        set {
            guard let clamped = Setting.gain.clamped(newValue) else { return }
            gain = clamped
            try? engine.set(gainDB: clamped, gliding: hasStarted)
        }
    }

    private var currentVoice: VoiceSettings
    private var equalizerBands: [EqualizerBand] = []
    private var gain = 0.0
    private var engine: Engine
    private var isFinished = false
    /// True once a block has been processed: settings changed from then on glide.
    private var hasStarted = false
    /// Frames a channel has received since the stream began.
    private var received = 0
    /// A change out of the input's pass-through, for the vocoder once the crossfade to it is over and the frames
    /// it completes from input frame `from` on play after it.
    private var deferredVoice: (voice: VoiceSettings, from: Int)?

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
        currentVoice = VoiceSettings()
        engine = try KoeError.wrapping {
            try Self.makeEngine(sampleRate: sampleRate, channels: channels, options: options, voice: VoiceSettings())
        }
        latency = engine.latency
        try KoeError.wrapping { try Self.warmUp(sampleRate: sampleRate, options: options) }
    }

    /// The engine for a stream: changeable, its output delayed by its latency, with room for a piece.
    private static func makeEngine(
        sampleRate: Int, channels: Int, options: Options, voice: VoiceSettings, bands: [EqualizerBand] = [],
        gainDB: Double = 0, limitsOutput: Bool = true
    ) throws -> Engine {
        var settings = ConversionSettings()
        settings.voice = voice
        settings.equalizer = bands
        settings.gainDB = gainDB
        settings.limitsOutput = limitsOutput
        settings.analysis = options.analysis
        settings.threads = options.threads
        // The output is Float samples for the host, whose full scale is 1.
        let engine = try Engine(
            sampleRate: sampleRate, channels: channels, settings: settings, isChangeable: true, delaysOutput: true,
            fullScale: 1)
        engine.reserve(forBlocksOf: pieceFrames)
        return engine
    }

    /// The sample rates and options `warmUp` has run with in this process.
    private static let warmedUp = Mutex<Set<String>>([])

    /// Swift's runtime sets up some of the types a changer uses the first time they are used, under its locks:
    /// once per process and set-up, a scratch changer runs a vowel through the pointer form while its settings
    /// move out of identity and back, as a host's controls do, so that every path a block or a setting can take
    /// has run here, not in `process`. Only a changer on one thread promises `process` takes no lock, so only
    /// such a changer warms up; the scratch changer's own warm-up finds its key taken and returns.
    private static func warmUp(sampleRate: Int, options: Options) throws {
        let key = "\(sampleRate) \(options)"
        guard options.threads == 1, warmedUp.withLock({ $0.insert(key).inserted }) else { return }
        let scratch = try VoiceChanger(sampleRate: sampleRate, channels: 1, options: options)
        let moves: [(VoiceChanger) -> Void] = [
            { $0.voice.pitch = 1.2 }, { $0.voice.formant = 1.1 }, { $0.gainDB = -3 }, { $0.voice = VoiceSettings() },
            { $0.gainDB = 0 }, { $0.voice.pitch = 0.9 },
        ]
        var vowel = (0..<(sampleRate / 2)).map { Float(0.3 * sin(2 * Double.pi * 150 * Double($0) / Double(sampleRate))) }
        try vowel.withUnsafeMutableBufferPointer { samples throws(KoeError) in
            for (index, start) in stride(from: 0, to: samples.count, by: pieceFrames).enumerated() {
                moves[index % moves.count](scratch)
                var channel = samples.baseAddress! + start
                let frames = min(pieceFrames, samples.count - start)
                try withUnsafePointer(to: &channel) { output throws(KoeError) in
                    try output.withMemoryRebound(to: UnsafePointer<Float>.self, capacity: 1) { input throws(KoeError) in
                        try scratch.process(input, into: output, frames: frames)
                    }
                }
            }
        }
    }

    /// Takes on a named voice (see `Preset.all`): its pitch, pitch range, formant, whisper and EQ bands (those
    /// this sample rate can hold). Tempo is a file conversion's setting; a live changer keeps time.
    /// **When:** between any two `process` calls, on their thread. **Real time:** no: it builds the filters.
    public func apply(preset name: String) throws(KoeError) {
        guard let preset = Preset.named(name) else {
            let names = Preset.all.map(\.name).joined(separator: ", ")
            throw .invalidArgument("unknown preset '\(name)' (presets: \(names))")
        }
        var voice = currentVoice
        voice.pitch = preset.voice.pitch
        voice.pitchRange = preset.voice.pitchRange
        voice.formant = preset.voice.formant
        voice.whisper = preset.voice.whisper
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
        try settings.validateSound()
        guard settings.voice.tempo == 1 else {
            throw .invalidArgument("a live changer keeps time: its tempo is 1 (got \(settings.voice.tempo))")
        }
        guard settings.voice.f0Track == nil else {
            throw .invalidArgument("an F0 track is made for one whole input; a live changer cannot take one")
        }
        try ConversionSettings.requireBuildable(settings.equalizer, sampleRate: sampleRate)
        voice = settings.voice
        equalizer = (settings.preset?.bands(sampleRate: sampleRate) ?? []) + settings.equalizer
        gainDB = settings.gainDB
        limitsOutput = settings.limitsOutput
    }

    // MARK: Processing

    /// Converts the next block: one array per channel, all of one length; returns as many frames per channel.
    /// **Real time:** no: the returned arrays are allocated; the unsafe-pointer form is the one for a callback.
    public func process(_ input: [[Float]]) throws(KoeError) -> [[Float]] {
        try processPlanar(input)
    }

    /// Converts the next block: one array per channel, all of one length; returns as many frames per channel.
    package func process(_ input: [[Double]]) throws(KoeError) -> [[Double]] {
        try processPlanar(input)
    }

    /// Converts the next `frames` frames of planar audio from `input` into `output`, one pointer per channel
    /// each way; `output` may be `input` (in place). Allocates nothing, from the first block on (see the type's
    /// notes on threads). Bad audio (a sample that is not finite) throws before anything changes: nothing is
    /// written and the block is not part of the stream.
    public func process(
        _ input: UnsafePointer<UnsafePointer<Float>>, into output: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int
    ) throws(KoeError) {
        guard frames >= 0 else { throw .invalidArgument("a block cannot have \(frames) frames") }
        try requireStreaming()
        for channel in 0..<channels {
            try Self.requireFinite(UnsafeBufferPointer(start: input[channel], count: frames), channel: channel)
        }
        try run(frames: frames) { channel, piece in
            engine.push(UnsafeBufferPointer(start: input[channel] + piece.lowerBound, count: piece.count), channel: channel)
        } drain: { channel, piece in
            engine.drain(
                piece.count, channel: channel,
                into: UnsafeMutableBufferPointer(start: output[channel] + piece.lowerBound, count: piece.count))
        }
    }

    /// Ends the stream: returns the `latency` frames per channel still held. Call `reset` before a new stream.
    /// **Real time:** no: the returned arrays are allocated.
    public func finish() throws(KoeError) -> [[Float]] {
        try finish(as: Float.self)
    }

    /// Ends the stream: returns the `latency` frames per channel still held, as `Sample`s.
    package func finish<Sample: BinaryFloatingPoint>(as sample: Sample.Type) throws(KoeError) -> [[Sample]] {
        try requireStreaming()
        isFinished = true
        try KoeError.wrapping { try engine.finish() }
        let frames = engine.readyFrames
        return (0..<channels).map { channel in
            var tail = [Sample](repeating: 0, count: frames)
            tail.withUnsafeMutableBufferPointer { engine.drain(frames, channel: channel, into: $0) }
            return tail
        }
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
    /// **When:** between `process` calls, on their thread. **Real time:** no: it rebuilds the stages.
    public func reset() {
        // Building a chain with settings that were valid once cannot fail.
        if let fresh = try? Self.makeEngine(
            sampleRate: sampleRate, channels: channels, options: options, voice: currentVoice, bands: equalizerBands,
            gainDB: gain, limitsOutput: limitsOutput)
        {
            engine = fresh
            isFinished = false
            hasStarted = false
            received = 0
            deferredVoice = nil
        }
    }

    private func processPlanar<Sample: BinaryFloatingPoint>(_ input: [[Sample]]) throws(KoeError) -> [[Sample]] {
        guard input.count == channels else {
            throw .badInput(source: nil, reason: "\(input.count) channel arrays given to a \(channels)-channel changer")
        }
        let frames = input[0].count
        if let ragged = input.firstIndex(where: { $0.count != frames }) {
            throw .badInput(source: nil, reason: "channel \(ragged) has \(input[ragged].count) frames, channel 0 has \(frames)")
        }
        try requireStreaming()
        for (channel, samples) in input.enumerated() {
            try samples.withUnsafeBufferPointer { buffer throws(KoeError) in try Self.requireFinite(buffer, channel: channel) }
        }
        var output = (0..<channels).map { _ in [Sample](repeating: 0, count: frames) }
        try run(frames: frames) { channel, piece in
            input[channel].withUnsafeBufferPointer { engine.push(UnsafeBufferPointer(rebasing: $0[piece]), channel: channel) }
        } drain: { channel, piece in
            output[channel].withUnsafeMutableBufferPointer {
                engine.drain(piece.count, channel: channel, into: UnsafeMutableBufferPointer(rebasing: $0[piece]))
            }
        }
        return output
    }

    /// Frames of a block converted at a time: the stages' buffers then have room for a piece, and a host's block
    /// of any size, once seen, allocates nothing more.
    static let pieceFrames = 1024

    /// Converts `frames` frames a piece at a time: `push` gives each channel's input of a piece (a range of the
    /// block's frames) to its chain, which runs until it has as many frames ready, and `drain` takes them.
    private func run(
        frames: Int, push: (_ channel: Int, _ piece: Range<Int>) -> Void, drain: (_ channel: Int, _ piece: Range<Int>) -> Void
    ) throws(KoeError) {
        hasStarted = true
        var start = 0
        repeat {
            let piece = start..<min(frames, start + Self.pieceFrames)
            if let deferred = deferredVoice, received >= deferred.from {
                deferredVoice = nil
                engine.update(deferred.voice)
            }
            received += piece.count
            for channel in 0..<channels {
                push(channel, piece)
            }
            try KoeError.wrapping { try engine.run(readying: piece.count) }
            for channel in 0..<channels {
                drain(channel, piece)
            }
            start = piece.upperBound
        } while start < frames
    }

    private func requireStreaming() throws(KoeError) {
        guard !isFinished else { throw .misuse("the stream has finished: call reset() before processing a new one") }
    }

    private static func requireFinite<Sample: BinaryFloatingPoint>(
        _ samples: UnsafeBufferPointer<Sample>, channel: Int
    ) throws(KoeError) {
        if let frame = SignalRequirements.firstNonFinite(samples) {
            throw .nonFiniteSample(frame: frame, channel: channel, source: nil)
        }
    }

    private func change(to newVoice: VoiceSettings) {
        let wasPassingInput = currentVoice.isIdentity
        currentVoice = newVoice
        if deferredVoice != nil {
            // The vocoder still resynthesises the voice unchanged: only the change it will glide to is new.
            if newVoice.isIdentity {
                deferredVoice = nil
                engine.setWet(false, gliding: true)
            } else {
                deferredVoice?.voice = newVoice
            }
            return
        }
        if hasStarted && wasPassingInput && !newVoice.isIdentity {
            // Out of the input's pass-through, crossfade to the vocoder while it resynthesises the voice unchanged,
            // and only then let it glide to the change, so that this change too glides instead of jumping.
            engine.setWet(true, gliding: true)
            deferredVoice = (newVoice, received + Glide.samples(sampleRate: sampleRate) + latency)
            return
        }
        engine.update(newVoice)
        engine.setWet(!newVoice.isIdentity, gliding: hasStarted)
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
