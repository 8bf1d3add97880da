// The C ABI over Koe (include/koe.h): what the plugins call. Each function forwards to one VoiceChanger call
// and turns every error into a status; nothing here allocates or locks on the way to `process`.
import Koe

let statusOK: Int32 = 0
let statusArgument: Int32 = -1
let statusPreset: Int32 = -2
let statusProcess: Int32 = -3

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

@_cdecl("koe_create")
public func koe_create(_ sampleRate: Int32, _ channels: Int32, _ status: UnsafeMutablePointer<Int32>?) -> OpaquePointer? {
    var options = VoiceChanger.Options()
    options.threads = 1
    options.analysis.live = true
    do {
        let changer = try VoiceChanger(sampleRate: Int(sampleRate), channels: Int(channels), options: options)
        status?.pointee = statusOK
        return OpaquePointer(Unmanaged.passRetained(CChanger(changer: changer, channels: Int(channels))).toOpaque())
    } catch {
        status?.pointee = statusArgument
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

@_cdecl("koe_reset")
public func koe_reset(_ changer: OpaquePointer?) -> Int32 {
    guard let handle = CChanger.from(changer) else { return statusArgument }
    handle.changer.reset()
    return statusOK
}

@_cdecl("koe_status_string")
public func koe_status_string(_ status: Int32) -> UnsafePointer<CChar> {
    let text: StaticString
    switch status {
    case statusOK: text = "ok"
    case statusArgument: text = "invalid argument (NULL changer or buffer, sample rate outside 8000-192000 Hz, channels < 1, frames < 0)"
    case statusPreset: text = "unknown preset"
    case statusProcess: text = "the voice changer refused the block"
    default: text = "unknown status"
    }
    return UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}
