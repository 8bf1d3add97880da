import Glibc
import Koe

// `VoiceChanger` driven through `import Koe` alone, as a caller drives it: the fuzzer's bytes choose a sample rate
// and channel count (impossible ones too), analysis options and threads, then a run of operations in any order:
// blocks of any size and content (empty, odd lengths, NaN and infinity included) through the array and pointer
// forms of `process`, every setting (each field of `voice`, the voice whole, EQ bands, gain, limiter, presets by
// any name, conversion settings) changed to any value (NaN, ±infinity, 0, -0, subnormals, -1, ±1e9 and ordinary
// ones), `finish` in both forms and `reset`. Anything may throw; nothing may trap. What the documentation promises
// is checked too: each setting clamped into its range or, not finite, ignored, and nothing else changed; as many
// frames out as in and `latency` frames from `finish`, refusals after it; a refused block writes nothing; output
// finite while the stream's input stays within full scale, and within ±1 while the limiter is on.

/// Stops the run with `message` when `condition` fails, in every build configuration.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// A refusal is a `KoeError` of one line, for the person who reads it.
private func requireOneLine(_ error: any Error) {
    let message = String(describing: error)
    require(error is KoeError && !message.isEmpty && !message.contains("\n"), "a refusal must be one line: \(message)")
}

/// The ranges `VoiceChanger`'s documentation promises to clamp into, as it states them.
private enum Documented {
    /// Pitch and formant: four octaves either way.
    static let ratio = 1.0 / 16...16
    static let pitchRange = 0.0...10
    static let pitchMedian = 10.0...5000
    static let gainDB = -60.0...60
    static let snapStrength = 0.0...1
    static let snapSpeed = 0.0...10_000
    static let a4 = 400.0...480
    static let vibratoRate = 0.1...20
    static let vibratoDepth = 0.0...1200
}

/// `value` clamped into `range`; nil when it is not finite, which a setter ignores.
private func clamped(_ value: Double, to range: ClosedRange<Double>) -> Double? {
    value.isFinite ? min(max(value, range.lowerBound), range.upperBound) : nil
}

/// The fuzzer's bytes, read front to back; past the end every read gives 0.
private struct Bytes {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isEmpty: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func uint32() -> UInt32 {
        (0..<4).reduce(UInt32(0)) { value, _ in value << 8 | UInt32(byte()) }
    }

    mutating func uint64() -> UInt64 {
        UInt64(uint32()) << 32 | UInt64(uint32())
    }

    mutating func pick<Value>(_ values: [Value]) -> Value {
        values[Int(byte()) % values.count]
    }

    /// Mostly values a slider or a host might send, odd ones included; now and then any bit pattern.
    mutating func setting(around usual: [Double]) -> Double {
        let odd: [Double] = [
            .nan, .infinity, -.infinity, 0, -0.0, -1, 1e-300, .leastNonzeroMagnitude, .leastNormalMagnitude, 1e9, -1e9,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        ]
        switch byte() % 8 {
        case 0: return Double(bitPattern: uint64())
        case 1, 2: return pick(odd)
        default: return pick(usual)
        }
    }

    /// A count for a block: mostly short, sometimes long, 0 and 1 too.
    mutating func frameCount() -> Int {
        switch byte() % 8 {
        case 0: return Int(byte() % 2)
        case 1: return Int(uint32() % 8192)
        default: return Int(byte()) * 8 + Int(byte() % 8)
        }
    }
}

private let sampleRates = [8000, 16000, 22050, 44100, 48000, 96000, 192_000, 0, -48000, 100, 7999, 192_001, Int.max, Int.min]
private let channelCounts = [1, 1, 1, 2, 2, 3, 0, -1, 1025, Int.max, Int.min]
private let presetNames = Preset.all.map(\.name) + ["", "nobody", "GIANT", "kawaii ", "\u{0}", "deep\ndeep"]

/// Input frames a run may give, so that a run stays short.
private let framesPerRun = 96_000

/// Everything a caller can read back of a changer's settings.
private struct Readings: Equatable {
    var voice: VoiceSettings
    var equalizer: [EqualizerBand]
    var gainDB: Double
    var limitsOutput: Bool

    init(_ changer: VoiceChanger) {
        (voice, equalizer, gainDB, limitsOutput) = (changer.voice, changer.equalizer, changer.gainDB, changer.limitsOutput)
    }

    private init(voice: VoiceSettings, equalizer: [EqualizerBand], gainDB: Double, limitsOutput: Bool) {
        (self.voice, self.equalizer, self.gainDB, self.limitsOutput) = (voice, equalizer, gainDB, limitsOutput)
    }

    /// The documented defaults: the voice unchanged, no bands, 0 dB, the limiter on.
    static let defaults = Readings(voice: VoiceSettings(), equalizer: [], gainDB: 0, limitsOutput: true)
}

/// A changer and what the caller has seen of it.
private final class Session {
    let changer: VoiceChanger
    /// The latency when the changer was made, fixed for its life.
    let latency: Int
    var isFinished = false
    /// Whether every sample of this stream so far was within full scale: then the output must be finite.
    var inputWithinFullScale = true
    var framesGiven = 0
    /// Where the next block's samples come from: a sawtooth, so the vocoder finds voiced frames; counted in
    /// periods.
    private var phase = 0.0

    init(_ changer: VoiceChanger) {
        self.changer = changer
        latency = changer.latency
    }

    /// `frames` samples of one channel: a sawtooth of about 150 Hz at 48 kHz (a period of 320 samples, shorter in
    /// later channels), and the odd sample the bytes choose.
    func samples(_ frames: Int, channel: Int, bytes: inout Bytes) -> [Float] {
        let step = Double(channel + 1) / 320
        var samples = (0..<frames).map { index -> Float in
            let position = phase * Double(channel + 1) + Double(index) * step
            return Float(0.5 * (2 * (position - position.rounded(.down)) - 1))
        }
        phase += Double(frames) / 320
        let odd: [Float] = [.nan, .infinity, -.infinity, 1e30, -3e38, 2, -1, 1, .leastNonzeroMagnitude, 0]
        while frames > 0, !bytes.isEmpty, bytes.byte() % 4 == 0 {
            let value = bytes.pick(odd)
            samples[Int(bytes.uint32()) % frames] = value
        }
        return samples
    }

    /// Counts an accepted block's frames, and whether it stayed within full scale.
    func note(_ input: [[Float]]) {
        framesGiven += input.first?.count ?? 0
        if input.contains(where: { $0.contains { !(abs($0) <= 1) } }) { inputWithinFullScale = false }
    }

    /// What every block and tail promises: the changer's channels, `frames` each, finite while the input was
    /// within full scale, and within ±1 when `limited`.
    func check(_ output: [[Float]], frames: Int, limited: Bool, what: String) {
        require(output.count == changer.channels, "\(what) gave \(output.count) channels of \(changer.channels)")
        for channel in output {
            require(channel.count == frames, "\(what) gave \(channel.count) frames for \(frames)")
            if inputWithinFullScale {
                require(channel.allSatisfy(\.isFinite), "\(what) made a non-finite sample of input within full scale")
            }
            if limited {
                require(!channel.contains { abs($0) > 1 }, "\(what) let a sample past ±1 with the limiter on")
            }
        }
    }

    func refusedAfterFinish(_ what: String, _ error: any Error) {
        require(isFinished, "\(what) was refused while the stream was open: \(error)")
    }
}

private func makeChanger(_ bytes: inout Bytes) -> VoiceChanger? {
    let sampleRate = bytes.pick(sampleRates)
    let channels = bytes.pick(channelCounts)
    var options = VoiceChanger.Options()
    if bytes.byte() % 4 == 0 {
        options.threads = bytes.pick([1, 2, 3, 0, -1, 1025])
        options.analysis.f0Method = bytes.byte() % 8 == 0 ? .harvest : .dio
        options.analysis.live = bytes.byte() % 4 == 0
        options.analysis.framePeriod = bytes.setting(around: [5, 1, 10, 2.5, 100, 0.5])
        options.analysis.f0Floor = bytes.setting(around: [71, 40, 10, 150, 9])
        options.analysis.f0Ceil = bytes.setting(around: [800, 400, 1000, 4000, 70])
        if bytes.byte() % 2 == 0 { options.analysis.lookAhead = bytes.setting(around: [0, 80, 300, 10_000, 20_000]) }
    }
    do {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: channels, options: options)
        require(changer.channels == channels && changer.sampleRate == sampleRate, "the changer took other numbers")
        require(changer.latency >= 0, "a negative latency")
        require(Readings(changer) == .defaults, "a new changer's settings are not the defaults")
        return changer
    } catch {
        requireOneLine(error)
        return nil
    }
}


// MARK: Settings

/// Scales of every kind of mode and key spelling; each parses (the unit tests read every mode's name).
private let scales = ["chromatic", "C:major", "A:minor", "F#:dorian", "Bb:phrygian", "E:lydian", "G:mixolydian", "B:locrian",
                      "D:harmonic-minor", "Eb:melodic-minor", "Ab:major-pentatonic", "C#:minor-pentatonic", "F:blues", "Db:whole-tone"]

private func snapOptions(_ bytes: inout Bytes) -> PitchSnap.Options? {
    bytes.byte() % 3 == 0 ? nil : PitchSnap.Options(
        scale: try! MusicalScale(parsing: bytes.pick(scales)),
        strength: bytes.setting(around: [1, 0.5, 0, 1.5]), speed: bytes.setting(around: [0, 50, 10_000, 20_000]),
        a4: bytes.setting(around: [440, 400, 480, 300]))
}

private func vibratoOptions(_ bytes: inout Bytes) -> Vibrato.Options? {
    bytes.byte() % 3 == 0 ? nil : Vibrato.Options(
        rate: bytes.setting(around: [5.5, 0.1, 20, 100]), depth: bytes.setting(around: [50, 0, 1200, 5000]))
}

private func bands(_ bytes: inout Bytes) -> [EqualizerBand] {
    (0..<Int(bytes.byte() % 5)).map { _ in
        EqualizerBand(
            kind: bytes.pick(EqualizerBand.Kind.allCases),
            frequency: bytes.setting(around: [1000, 80, 8000, 20_000, 23_999, 24_000, 96_000, 1]),
            gainDB: bytes.setting(around: [0, 6, -6, 60, -60, 61]),
            q: bytes.byte() % 3 == 0 ? nil : bytes.setting(around: [0.707, 1.4, 0.1, 10, 0]),
            name: bytes.byte() % 4 == 0 ? "band" : nil)
    }
}

/// A curve of the bytes' points, or nil for points that make none, which must be refused in one line.
private func pitchCurve(_ bytes: inout Bytes) -> PitchCurve? {
    let points = (0..<Int(bytes.byte() % 4)).map { _ in
        PitchCurve.Point(time: bytes.setting(around: [0, 0.5, 1, 2, -1]), ratio: bytes.setting(around: [1, 2, 0.5, 16, 17]))
    }
    do {
        return try PitchCurve(points: points)
    } catch {
        requireOneLine(error)
        return nil
    }
}

private func f0Track(_ bytes: inout Bytes) -> F0Track? {
    try? F0Track(values: [150, 0, bytes.setting(around: [200, 1e300, 0])])
}

/// A voice of any values, as a caller might build one whole.
private func anyVoice(_ bytes: inout Bytes) -> VoiceSettings {
    var voice = VoiceSettings()
    voice.pitch = bytes.setting(around: [1, 1.2, 0.8, 16, 20])
    voice.formant = bytes.setting(around: [1, 1.1, 0.9, 20])
    voice.pitchRange = bytes.setting(around: [1, 0, 2, 10, 11])
    voice.pitchMedian = bytes.byte() % 2 == 0 ? nil : bytes.setting(around: [220, 10, 5000, 6000])
    voice.tempo = bytes.byte() % 8 == 0 ? bytes.setting(around: [1, 1.5, 0.5]) : 1
    voice.whisper = bytes.byte() % 8 == 0
    voice.snap = snapOptions(&bytes)
    voice.vibrato = vibratoOptions(&bytes)
    voice.pitchCurve = bytes.byte() % 2 == 0 ? nil : pitchCurve(&bytes)
    if bytes.byte() % 16 == 0 { voice.f0Track = f0Track(&bytes) }
    return voice
}

/// The voice a changer promises to hold after `given` replaced `previous`: each value clamped into its range, a
/// value that is not finite (or snap or vibrato options holding one) left as it was, tempo 1 and no F0 track.
private func expectedVoice(_ given: VoiceSettings, previous: VoiceSettings) -> VoiceSettings {
    var voice = given
    voice.pitch = clamped(given.pitch, to: Documented.ratio) ?? previous.pitch
    voice.formant = clamped(given.formant, to: Documented.ratio) ?? previous.formant
    voice.pitchRange = clamped(given.pitchRange, to: Documented.pitchRange) ?? previous.pitchRange
    voice.pitchMedian = given.pitchMedian.map { clamped($0, to: Documented.pitchMedian) ?? previous.pitchMedian } ?? nil
    voice.tempo = 1
    voice.f0Track = nil
    voice.snap = given.snap.map { options -> PitchSnap.Options? in
        guard let strength = clamped(options.strength, to: Documented.snapStrength),
              let speed = clamped(options.speed, to: Documented.snapSpeed),
              let a4 = clamped(options.a4, to: Documented.a4) else { return previous.snap }
        return PitchSnap.Options(scale: options.scale, strength: strength, speed: speed, a4: a4)
    } ?? nil
    voice.vibrato = given.vibrato.map { options -> Vibrato.Options? in
        guard let rate = clamped(options.rate, to: Documented.vibratoRate),
              let depth = clamped(options.depth, to: Documented.vibratoDepth) else { return previous.vibrato }
        return Vibrato.Options(rate: rate, depth: depth)
    } ?? nil
    return voice
}

/// One field of the voice changed, as a caller changes it through `changer.voice.field = value`.
private func fieldChange(_ bytes: inout Bytes) -> (name: String, change: (inout VoiceSettings) -> Void) {
    switch bytes.byte() % 11 {
    case 0:
        let pitch = bytes.setting(around: [1, 1.2, 0.8, 2, 0.5, 16, 1.0 / 16, 20])
        return ("pitch = \(pitch)", { $0.pitch = pitch })
    case 1:
        let formant = bytes.setting(around: [1, 1.1, 0.9, 1.8, 16, 0.01])
        return ("formant = \(formant)", { $0.formant = formant })
    case 2:
        let range = bytes.setting(around: [1, 0, 0.5, 2, 10, 11])
        return ("pitchRange = \(range)", { $0.pitchRange = range })
    case 3:
        let median = bytes.byte() % 3 == 0 ? nil : bytes.setting(around: [220, 110, 10, 5000, 9, 6000])
        return ("pitchMedian = \(String(describing: median))", { $0.pitchMedian = median })
    case 4:
        let whisper = bytes.byte() % 2 == 0
        return ("whisper = \(whisper)", { $0.whisper = whisper })
    case 5:
        let options = snapOptions(&bytes)
        return ("snap = \(String(describing: options))", { $0.snap = options })
    case 6:
        let options = vibratoOptions(&bytes)
        return ("vibrato = \(String(describing: options))", { $0.vibrato = options })
    case 7:
        let curve = pitchCurve(&bytes)
        return ("pitchCurve = \(String(describing: curve))", { $0.pitchCurve = curve })
    case 8:
        let tempo = bytes.setting(around: [1, 2, 0.5])
        return ("tempo = \(tempo)", { $0.tempo = tempo })
    case 9:
        let track = f0Track(&bytes)
        return ("f0Track = \(String(describing: track))", { $0.f0Track = track })
    default:
        let voice = anyVoice(&bytes)
        return ("voice = \(voice)", { $0 = voice })
    }
}

/// The pitch `semitones` promises: 2^(semitones / 12), clamped into the ratio range; a finite value so large
/// that the power overflows is past the range's end all the same.
private func pitch(ofSemitones semitones: Double) -> Double {
    let ratio = exp2(semitones / 12)
    if ratio.isInfinite { return Documented.ratio.upperBound }
    return min(max(ratio, Documented.ratio.lowerBound), Documented.ratio.upperBound)
}

private func changeVoice(_ changer: VoiceChanger, _ bytes: inout Bytes, before: Readings) {
    if bytes.byte() % 8 == 0 {
        let semitones = bytes.setting(around: [0, 12, -12, 48, -48, 100, 0.5, 13_000, -13_000])
        changer.voice.semitones = semitones
        let expected = semitones.isFinite ? pitch(ofSemitones: semitones) : before.voice.pitch
        require(
            changer.voice.pitch == expected,
            "semitones = \(semitones) left pitch \(changer.voice.pitch), not \(expected)")
        var rest = changer.voice
        rest.pitch = before.voice.pitch
        require(rest == before.voice, "semitones = \(semitones) changed more than the pitch")
        return
    }
    let (name, change) = fieldChange(&bytes)
    var given = before.voice
    change(&given)
    if bytes.byte() % 2 == 0 {
        change(&changer.voice)
    } else {
        changer.voice = given
    }
    let expected = expectedVoice(given, previous: before.voice)
    require(changer.voice == expected, "voice.\(name) left \(changer.voice), not \(expected)")
}

/// Whether `band` is one the documentation says a changer can build at `sampleRate`: a positive finite frequency
/// below Nyquist, a gain within ±60 dB (none for pass filters), a positive finite Q if any.
private func isBuildable(_ band: EqualizerBand, sampleRate: Int) -> Bool {
    band.frequency > 0 && band.frequency < Double(sampleRate) / 2 && Documented.gainDB.contains(band.gainDB)
        && (band.q.map { $0 > 0 && $0.isFinite } ?? true)
        && (band.gainDB == 0 || ![.lowpass, .highpass].contains(band.kind))
}

private func isFlat(_ band: EqualizerBand) -> Bool {
    band.gainDB == 0 && [.peak, .lowshelf, .highshelf].contains(band.kind)
}

/// A Q so narrow or so wide its filter may overflow: a changer may leave such a band out.
private func hasExtremeQ(_ band: EqualizerBand) -> Bool {
    band.q.map { !(1e-3...1e3).contains($0) } ?? false
}

/// The bands a changer promises to keep of `given`: in order, the buildable ones that are not flat.
private func requireKept(_ kept: [EqualizerBand], of given: [EqualizerBand], sampleRate: Int, what: String) {
    var rest = kept[...]
    for band in given {
        let acts = isBuildable(band, sampleRate: sampleRate) && !isFlat(band)
        if rest.first == band && acts {
            rest = rest.dropFirst()
        } else {
            require(!acts || hasExtremeQ(band), "\(what): the band \(band) at \(sampleRate) Hz was left out")
        }
    }
    require(rest.isEmpty, "\(what) kept bands it was not given: \(Array(rest))")
}

private func change(_ session: Session, _ bytes: inout Bytes) {
    let changer = session.changer
    let before = Readings(changer)
    var expected = before
    switch bytes.byte() % 8 {
    case 0, 1, 2:
        changeVoice(changer, &bytes, before: before)
        expected.voice = changer.voice
    case 3:
        let given = bands(&bytes)
        changer.equalizer = given
        requireKept(changer.equalizer, of: given, sampleRate: changer.sampleRate, what: "equalizer")
        expected.equalizer = changer.equalizer
    case 4:
        let gain = bytes.setting(around: [0, -3, 6, 60, -60, 120])
        changer.gainDB = gain
        expected.gainDB = clamped(gain, to: Documented.gainDB) ?? before.gainDB
    case 5:
        expected.limitsOutput = bytes.byte() % 2 == 0
        changer.limitsOutput = expected.limitsOutput
    case 6:
        let name = bytes.pick(presetNames)
        do {
            try changer.apply(preset: name)
            guard let preset = Preset.named(name) else { fatalError("preset '\(name)' was taken on") }
            expected.voice.pitch = preset.voice.pitch
            expected.voice.pitchRange = preset.voice.pitchRange
            expected.voice.formant = preset.voice.formant
            expected.voice.whisper = preset.voice.whisper
            expected.equalizer = preset.bands(sampleRate: changer.sampleRate)
        } catch {
            require(Preset.named(name) == nil, "preset '\(name)' was refused: \(error)")
        }
    default:
        expected = apply(conversionSettings(&bytes), to: changer, before: before)
    }
    require(Readings(changer) == expected, "after a change the settings read \(Readings(changer)), not \(expected)")
}

/// Conversion settings as a caller might fill them in for a live changer: any voice, tempo and F0 track
/// included (which a changer refuses), a preset, EQ bands, gain and limiter.
private func conversionSettings(_ bytes: inout Bytes) -> (settings: ConversionSettings, preset: Preset?) {
    var settings = ConversionSettings()
    var preset: Preset?
    if bytes.byte() % 4 == 0 {
        let name = bytes.pick(presetNames)
        if (try? settings.apply(preset: name)) != nil { preset = Preset.named(name) }
    }
    if bytes.byte() % 2 == 0 { settings.voice = anyVoice(&bytes) }
    settings.equalizer = bands(&bytes)
    settings.gainDB = bytes.setting(around: [0, 6, -60, 60, 120])
    settings.limitsOutput = bytes.byte() % 2 == 0
    return (settings, preset)
}

/// Whether the documentation says `settings` are refused: gain not finite, a voice out of range (a formant
/// ratio is any positive one), a tempo other than 1, an F0 track, or an explicit band the rate cannot hold.
private func isRefused(_ settings: ConversionSettings, sampleRate: Int) -> Bool? {
    let voice = settings.voice
    let snapInRange = voice.snap.map {
        Documented.snapStrength.contains($0.strength) && Documented.snapSpeed.contains($0.speed) && Documented.a4.contains($0.a4)
    } ?? true
    let vibratoInRange = voice.vibrato.map {
        Documented.vibratoRate.contains($0.rate) && Documented.vibratoDepth.contains($0.depth)
    } ?? true
    let voiceInRange = Documented.ratio.contains(voice.pitch) && voice.formant > 0 && voice.formant.isFinite
        && Documented.pitchRange.contains(voice.pitchRange)
        && (voice.pitchMedian.map { Documented.pitchMedian.contains($0) } ?? true) && snapInRange && vibratoInRange
    if !settings.gainDB.isFinite || !voiceInRange || voice.tempo != 1 || voice.f0Track != nil
        || !settings.equalizer.allSatisfy({ isBuildable($0, sampleRate: sampleRate) })
    {
        return true
    }
    return settings.equalizer.contains(where: hasExtremeQ) ? nil : false
}

/// Taken on, the settings read back as given (the formant ratio and the gain clamped as their setters clamp
/// them, the preset's bands first); refused, nothing changed. Returns what the changer should now read.
private func apply(_ given: (settings: ConversionSettings, preset: Preset?), to changer: VoiceChanger, before: Readings) -> Readings {
    let settings = given.settings
    let refusal = isRefused(settings, sampleRate: changer.sampleRate)
    do {
        try changer.apply(settings)
        require(refusal != true, "conversion settings the changer should refuse were taken: \(settings)")
        var expected = before
        expected.voice = settings.voice
        expected.voice.formant = clamped(settings.voice.formant, to: Documented.ratio)!
        expected.equalizer = ((given.preset?.bands(sampleRate: changer.sampleRate) ?? []) + settings.equalizer).filter { !isFlat($0) }
        expected.gainDB = clamped(settings.gainDB, to: Documented.gainDB)!
        expected.limitsOutput = settings.limitsOutput
        return expected
    } catch {
        require(refusal != false, "conversion settings were refused: \(error), \(settings)")
        requireOneLine(error)
        return before
    }
}

// MARK: Streaming

private func process(_ session: Session, _ bytes: inout Bytes) {
    let changer = session.changer
    let frames = min(bytes.frameCount(), max(0, framesPerRun - session.framesGiven))
    var input = (0..<changer.channels).map { session.samples(frames, channel: $0, bytes: &bytes) }
    let misshapen = bytes.byte() % 16 == 0
    if misshapen {
        switch bytes.byte() % 3 {
        case 0: input.removeLast()
        case 1 where input.count > 1: input[input.count - 1].append(0)
        default: input.append(input[0])
        }
    }
    let finite = input.allSatisfy { $0.allSatisfy(\.isFinite) }
    let limited = changer.limitsOutput
    if bytes.byte() % 2 == 0 {
        do {
            let output = try changer.process(input)
            require(!misshapen && finite && !session.isFinished, "a block was taken that should have been refused")
            session.note(input)
            session.check(output, frames: frames, limited: limited, what: "process(_:)")
        } catch {
            requireOneLine(error)
            if !misshapen && finite { session.refusedAfterFinish("a block", error) }
        }
        return
    }
    guard !misshapen else { return }
    // The pointer form, in place or into buffers of its own, as a plugin's run() calls it; now and then with a
    // negative count.
    let count = bytes.byte() % 32 == 0 ? -Int(bytes.byte()) - 1 : frames
    let inPlace = bytes.byte() % 2 == 0
    let inputs = input.map { channel in
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, channel.count))
        _ = buffer.initialize(from: channel)
        return buffer
    }
    let outputs = inPlace ? inputs : input.map { _ in
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, frames))
        buffer.initialize(repeating: 0.25)
        return buffer
    }
    defer {
        inputs.forEach { $0.deallocate() }
        if !inPlace { outputs.forEach { $0.deallocate() } }
    }
    let readable = inputs.map { UnsafePointer($0.baseAddress!) }
    let writable = outputs.map { $0.baseAddress! }
    do {
        try readable.withUnsafeBufferPointer { input in
            try writable.withUnsafeBufferPointer { output in
                try changer.process(input.baseAddress!, into: output.baseAddress!, frames: count)
            }
        }
        require(count >= 0 && finite && !session.isFinished, "a pointer block was taken that should have been refused")
        session.note(input)
        session.check(outputs.map { Array($0.prefix(frames)) }, frames: frames, limited: limited, what: "process(_:into:frames:)")
    } catch {
        requireOneLine(error)
        if count >= 0 && finite { session.refusedAfterFinish("a pointer block", error) }
        let untouched = inPlace ? input : input.map { Array(repeating: Float(0.25), count: $0.count) }
        for (buffer, original) in zip(outputs, untouched) {
            require(
                zip(buffer.prefix(frames), original).allSatisfy { $0.bitPattern == $1.bitPattern },
                "a refused pointer block wrote its output")
        }
    }
}

private func finish(_ session: Session, _ bytes: inout Bytes) {
    let changer = session.changer
    let limited = changer.limitsOutput
    do {
        if bytes.byte() % 2 == 0 {
            session.check(try changer.finish(), frames: changer.latency, limited: limited, what: "finish()")
        } else {
            // One frame more than promised, so that a write past `latency` frames shows.
            let tails = (0..<changer.channels).map { _ in
                let tail = UnsafeMutableBufferPointer<Float>.allocate(capacity: changer.latency + 1)
                tail.initialize(repeating: .nan)
                return tail
            }
            defer { tails.forEach { $0.deallocate() } }
            try tails.map { $0.baseAddress! }.withUnsafeBufferPointer { try changer.finish(into: $0.baseAddress!) }
            require(tails.allSatisfy { $0[changer.latency].isNaN }, "finish(into:) wrote past latency frames")
            session.check(tails.map { Array($0.prefix(changer.latency)) }, frames: changer.latency, limited: limited, what: "finish(into:)")
        }
        require(!session.isFinished, "a second finish was taken")
        session.isFinished = true
    } catch {
        requireOneLine(error)
        session.refusedAfterFinish("finish", error)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVoiceChanger(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = Bytes(Array(UnsafeBufferPointer(start: data, count: size)))
    guard let changer = makeChanger(&bytes) else { return 0 }
    let session = Session(changer)
    var operations = 0
    while !bytes.isEmpty, operations < 64 {
        operations += 1
        switch bytes.byte() % 8 {
        case 0, 1, 2: process(session, &bytes)
        case 3, 4: change(session, &bytes)
        case 5: finish(session, &bytes)
        case 6:
            let before = Readings(changer)
            changer.reset()
            require(Readings(changer) == before, "reset changed the settings")
            session.isFinished = false
            session.inputWithinFullScale = true
        default:
            require(changer.latency == session.latency, "the latency moved from \(session.latency) to \(changer.latency)")
        }
    }
    return 0
}
