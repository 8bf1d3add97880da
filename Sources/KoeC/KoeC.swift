// The C ABI over Koe (include/koe.h): what the plugins and the Python extension call. Each function forwards to
// one VoiceChanger call and turns every error into a status; nothing here allocates or locks on the way to `process`.
import Koe

let statusOK: Int32 = 0
let statusArgument: Int32 = -1
let statusPreset: Int32 = -2
let statusProcess: Int32 = -3
let statusIO: Int32 = -4

/// What a `koe_changer *` points at: the changer and the channel count its buffers are checked against.
final class CChanger {
    let changer: VoiceChanger
    let channels: Int

    init(changer: VoiceChanger, channels: Int) {
        self.changer = changer
        self.channels = channels
    }

    static func from(_ pointer: OpaquePointer?) -> CChanger? {
        pointer.map { Unmanaged<CChanger>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
    }
}

/// koe_create_changer's live changer on one thread, the calling one.
@_cdecl("koe_create")
public func koe_create(_ sampleRate: Int32, _ channels: Int32, _ status: UnsafeMutablePointer<Int32>?) -> OpaquePointer? {
    koe_create_changer(sampleRate, channels, 1, 1, status, nil, 0)
}

@_cdecl("koe_create_changer")
public func koe_create_changer(
    _ sampleRate: Int32, _ channels: Int32, _ live: Int32, _ threads: Int32, _ status: UnsafeMutablePointer<Int32>?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> OpaquePointer? {
    var options = VoiceChanger.Options()
    options.threads = Int(threads)
    options.analysis.live = live != 0
    do {
        let changer = try VoiceChanger(sampleRate: Int(sampleRate), channels: Int(channels), options: options)
        status?.pointee = statusOK
        return OpaquePointer(Unmanaged.passRetained(CChanger(changer: changer, channels: Int(channels))).toOpaque())
    } catch {
        status?.pointee = statusArgument
        write(error.description, into: message, size: messageSize)
        return nil
    }
}

@_cdecl("koe_destroy")
public func koe_destroy(_ changer: OpaquePointer?) {
    guard let changer else { return }
    Unmanaged<CChanger>.fromOpaque(UnsafeRawPointer(changer)).release()
}

/// Applies `change` to the changer behind `pointer`; a NULL changer is an invalid argument.
private func update(_ pointer: OpaquePointer?, _ change: (VoiceChanger) -> Void) -> Int32 {
    guard let handle = CChanger.from(pointer) else { return statusArgument }
    change(handle.changer)
    return statusOK
}

@_cdecl("koe_set_pitch")
public func koe_set_pitch(_ changer: OpaquePointer?, _ ratio: Double) -> Int32 {
    update(changer) { $0.voice.pitch = ratio }
}

@_cdecl("koe_set_formant")
public func koe_set_formant(_ changer: OpaquePointer?, _ ratio: Double) -> Int32 {
    update(changer) { $0.voice.formant = ratio }
}

@_cdecl("koe_set_gain_db")
public func koe_set_gain_db(_ changer: OpaquePointer?, _ decibels: Double) -> Int32 {
    update(changer) { $0.gainDB = decibels }
}

@_cdecl("koe_set_semitones")
public func koe_set_semitones(_ changer: OpaquePointer?, _ semitones: Double) -> Int32 {
    update(changer) { $0.voice.semitones = semitones }
}

@_cdecl("koe_set_pitch_range")
public func koe_set_pitch_range(_ changer: OpaquePointer?, _ ratio: Double) -> Int32 {
    update(changer) { $0.voice.pitchRange = ratio }
}

@_cdecl("koe_set_pitch_median")
public func koe_set_pitch_median(_ changer: OpaquePointer?, _ hertz: Double) -> Int32 {
    update(changer) { $0.voice.pitchMedian = hertz == 0 ? nil : hertz }
}

@_cdecl("koe_set_whisper")
public func koe_set_whisper(_ changer: OpaquePointer?, _ whisper: Int32) -> Int32 {
    update(changer) { $0.voice.whisper = whisper != 0 }
}

@_cdecl("koe_set_limit")
public func koe_set_limit(_ changer: OpaquePointer?, _ limit: Int32) -> Int32 {
    update(changer) { $0.limitsOutput = limit != 0 }
}

@_cdecl("koe_set_snap")
public func koe_set_snap(
    _ changer: OpaquePointer?, _ scale: UnsafePointer<CChar>?, _ strength: Double, _ speed: Double, _ a4: Double,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let handle = CChanger.from(changer) else { throw CallError("the changer is NULL") }
        handle.changer.voice.snap = try scale.map { scale throws(KoeError) in
            PitchSnap.Options(scale: try MusicalScale(parsing: String(cString: scale)), strength: strength, speed: speed, a4: a4)
        }
    }
}

@_cdecl("koe_set_snap_scale")
public func koe_set_snap_scale(
    _ changer: OpaquePointer?, _ key: Int32, _ scale: Int32, _ strength: Double, _ speed: Double, _ a4: Double
) -> Int32 {
    guard scale == snapOff || scaleMode(scale) != nil else { return statusArgument }
    return update(changer) { changer in
        changer.voice.snap = scaleMode(scale).map { mode in
            PitchSnap.Options(scale: MusicalScale(key: Int(key), mode: mode), strength: strength, speed: speed, a4: a4)
        }
    }
}

/// koe.h's `KOE_SNAP_OFF`.
private let snapOff: Int32 = -1

/// The mode koe.h's `koe_scale` value `scale` names, in `MusicalScale.Mode`'s order; a switch rather than an index
/// into `allCases`, which would build an array on a host's audio thread.
private func scaleMode(_ scale: Int32) -> MusicalScale.Mode? {
    switch scale {
    case 0: .chromatic
    case 1: .major
    case 2: .minor
    case 3: .dorian
    case 4: .phrygian
    case 5: .lydian
    case 6: .mixolydian
    case 7: .locrian
    case 8: .harmonicMinor
    case 9: .melodicMinor
    case 10: .majorPentatonic
    case 11: .minorPentatonic
    case 12: .blues
    case 13: .wholeTone
    default: nil
    }
}

@_cdecl("koe_set_vibrato")
public func koe_set_vibrato(_ changer: OpaquePointer?, _ rate: Double, _ depth: Double) -> Int32 {
    update(changer) { $0.voice.vibrato = rate == 0 ? nil : Vibrato.Options(rate: rate, depth: depth) }
}

@_cdecl("koe_set_equalizer")
public func koe_set_equalizer(
    _ changer: OpaquePointer?, _ specs: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let handle = CChanger.from(changer) else { throw CallError("the changer is NULL") }
        let bands = try strings(specs, count, "EQ bands").map { spec throws(KoeError) in try EqualizerBand(parsing: spec) }
        handle.changer.equalizer = bands
    }
}

/// The C caller's voice settings: what `koe_get_voice` fills.
@_cdecl("koe_get_voice")
public func koe_get_voice(_ changer: OpaquePointer?, _ voice: UnsafeMutableRawPointer?) -> Int32 {
    guard let handle = CChanger.from(changer), let voice else { return statusArgument }
    let settings = handle.changer.voice
    voice.assumingMemoryBound(to: CVoiceSettings.self).pointee = CVoiceSettings(
        pitch: settings.pitch, formant: settings.formant, pitchRange: settings.pitchRange,
        pitchMedian: settings.pitchMedian ?? 0, gainDB: handle.changer.gainDB, whisper: settings.whisper ? 1 : 0,
        limit: handle.changer.limitsOutput ? 1 : 0)
    return statusOK
}

@_cdecl("koe_set_preset")
public func koe_set_preset(_ changer: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
    guard let handle = CChanger.from(changer), let name else { return statusArgument }
    do {
        try handle.changer.apply(preset: String(cString: name))
        return statusOK
    } catch {
        return statusPreset
    }
}

@_cdecl("koe_set_aim")
public func koe_set_aim(_ changer: OpaquePointer?, _ aim: Int32) -> Int32 {
    guard let handle = CChanger.from(changer) else { return statusArgument }
    guard aim != aimOff else {
        handle.changer.voice.aiming = nil
        return statusOK
    }
    // The voice presets in `koe presets`' order, counted without building an array on a host's audio thread.
    var index: Int32 = 0
    for preset in Preset.all {
        guard let aiming = preset.aiming else { continue }
        if index == aim {
            var voice = handle.changer.voice
            (voice.pitch, voice.formant, voice.aiming) = (aiming.typicalPitch, aiming.typicalFormant, aiming)
            handle.changer.voice = voice
            return statusOK
        }
        index += 1
    }
    return statusArgument
}

/// koe.h's `KOE_AIM_OFF`.
private let aimOff: Int32 = -1

@_cdecl("koe_set_profile")
public func koe_set_profile(_ changer: OpaquePointer?, _ profile: UnsafeRawPointer?) -> Int32 {
    guard let handle = CChanger.from(changer) else { return statusArgument }
    guard let figures = profile?.assumingMemoryBound(to: CProfile.self).pointee else {
        handle.changer.speakerProfile = nil
        return statusOK
    }
    let length = figures.vocalTractLengthCm
    // The median is ranged as a median F0 is (pitch_median's range); checked without building a message.
    guard Setting.pitchMedian.range?.contains(figures.f0MedianHz) == true, length.isNaN || length > 0 && length.isFinite,
          figures.f0SpreadSemitones >= 0, figures.f0SpreadSemitones.isFinite, figures.voicedSeconds >= 0, figures.voicedSeconds.isFinite
    else { return statusArgument }
    handle.changer.speakerProfile = SpeakerProfile(
        f0Median: figures.f0MedianHz, f0Spread: figures.f0SpreadSemitones, vocalTractLength: length,
        voicedSeconds: figures.voicedSeconds)
    return statusOK
}

@_cdecl("koe_get_profile")
public func koe_get_profile(_ changer: OpaquePointer?, _ profile: UnsafeMutableRawPointer?) -> Int32 {
    guard let handle = CChanger.from(changer), let profile else { return statusArgument }
    let known = handle.changer.speakerProfile
    profile.assumingMemoryBound(to: CProfile.self).pointee = CProfile(
        f0MedianHz: known?.f0Median ?? .nan, f0SpreadSemitones: known?.f0Spread ?? .nan,
        vocalTractLengthCm: known?.vocalTractLength ?? .nan, voicedSeconds: known?.voicedSeconds ?? .nan)
    return statusOK
}

@_cdecl("koe_get_ratios")
public func koe_get_ratios(
    _ changer: OpaquePointer?, _ pitch: UnsafeMutablePointer<Double>?, _ formant: UnsafeMutablePointer<Double>?
) -> Int32 {
    guard let handle = CChanger.from(changer), let pitch, let formant else { return statusArgument }
    (pitch.pointee, formant.pointee) = handle.changer.appliedRatios
    return statusOK
}

@_cdecl("koe_latency")
public func koe_latency(_ changer: OpaquePointer?) -> Int32 {
    guard let handle = CChanger.from(changer) else { return -1 }
    return Int32(clamping: handle.changer.latency)
}

@_cdecl("koe_process")
public func koe_process(
    _ changer: OpaquePointer?, _ input: UnsafePointer<UnsafePointer<Float>?>?,
    _ output: UnsafePointer<UnsafeMutablePointer<Float>?>?, _ frames: Int32
) -> Int32 {
    guard let handle = CChanger.from(changer), let input, let output, frames >= 0 else { return statusArgument }
    for channel in 0..<handle.channels where input[channel] == nil || output[channel] == nil {
        return statusArgument
    }
    if frames == 0 { return statusOK }
    // Every channel pointer is non-NULL, so the arrays have the layout of the non-optional ones.
    let planarInput = UnsafeRawPointer(input).assumingMemoryBound(to: UnsafePointer<Float>.self)
    let planarOutput = UnsafeRawPointer(output).assumingMemoryBound(to: UnsafeMutablePointer<Float>.self)
    do {
        try handle.changer.process(planarInput, into: planarOutput, frames: Int(frames))
        return statusOK
    } catch {
        return statusProcess
    }
}

@_cdecl("koe_finish")
public func koe_finish(_ changer: OpaquePointer?, _ output: UnsafePointer<UnsafeMutablePointer<Float>?>?) -> Int32 {
    guard let handle = CChanger.from(changer), let output else { return statusArgument }
    for channel in 0..<handle.channels where output[channel] == nil {
        return statusArgument
    }
    do {
        try handle.changer.finish(into: UnsafeRawPointer(output).assumingMemoryBound(to: UnsafeMutablePointer<Float>.self))
        return statusOK
    } catch {
        return statusProcess
    }
}

@_cdecl("koe_reset")
public func koe_reset(_ changer: OpaquePointer?) -> Int32 {
    guard let handle = CChanger.from(changer) else { return statusArgument }
    handle.changer.reset()
    return statusOK
}

/// `koe_voice_settings` of koe.h, field for field (Swift lays a struct of these out as C does).
struct CVoiceSettings {
    var pitch: Double
    var formant: Double
    var pitchRange: Double
    var pitchMedian: Double
    var gainDB: Double
    var whisper: Int32
    var limit: Int32
}

@_cdecl("koe_status_string")
public func koe_status_string(_ status: Int32) -> UnsafePointer<CChar> {
    let text: StaticString
    switch status {
    case statusOK: text = "ok"
    case statusArgument: text = "invalid argument (NULL changer or buffer, sample rate outside 8000-192000 Hz, channels < 1, frames < 0)"
    case statusPreset: text = "unknown preset"
    case statusProcess: text = "the voice changer refused the block"
    case statusIO: text = "a file could not be read or written"
    default: text = "unknown status"
    }
    return UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}
