// WORLD's whole-signal analysis and synthesis for C callers (include/koe_world.h): pyworld's functions on
// caller-allocated buffers. Each forwards to KoeWorld's public API and turns every error into a status and a
// message written into the caller's buffer, so two threads never share an error.
import KoeWorld

/// Runs `body`, turning a thrown error into `statusArgument` and its description into the caller's `message`.
func reportingErrors(
    _ message: UnsafeMutablePointer<CChar>?, _ size: Int, _ body: () throws -> Void
) -> Int32 {
    do {
        try body()
        return statusOK
    } catch let error as CallError {
        write(error.message, into: message, size: size)
        return error.status
    } catch {
        write("\(error)", into: message, size: size)
        return statusArgument
    }
}

/// A refusal found here rather than in the library: a NULL buffer, a negative length, a buffer of the wrong size.
struct CallError: Error {
    let status: Int32
    let message: String

    init(_ message: String, status: Int32 = statusArgument) {
        self.message = message
        self.status = status
    }
}

/// Copies `text` into `buffer[0..<size]` as UTF-8, truncated at a character's boundary and NUL-terminated.
func write(_ text: String, into buffer: UnsafeMutablePointer<CChar>?, size: Int) {
    guard let buffer, size > 0 else { return }
    var bytes = Array(text.utf8.prefix(size - 1))
    while String(validating: bytes, as: UTF8.self) == nil {
        bytes.removeLast()
    }
    for (index, byte) in bytes.enumerated() {
        buffer[index] = CChar(bitPattern: byte)
    }
    buffer[bytes.count] = 0
}

/// `count` values from `pointer`, refusing a NULL pointer or a negative count; `name` says which in the error.
func values(_ pointer: UnsafePointer<Double>?, _ count: Int, _ name: String) throws -> [Double] {
    guard count >= 0 else { throw CallError("\(name) cannot have \(count) values") }
    guard count > 0 else { return [] }
    guard let pointer else { throw CallError("\(name) is NULL") }
    return Array(UnsafeBufferPointer(start: pointer, count: count))
}

/// Copies `result` into the caller's `output`, which must have been sized for exactly `result.count` values.
func copy(_ result: [Double], to output: UnsafeMutablePointer<Double>?, count: Int, _ name: String) throws {
    guard result.count == count else {
        throw CallError("\(name) has \(result.count) values but the buffer given holds \(count)")
    }
    guard count > 0 else { return }
    guard let output else { throw CallError("the buffer for \(name) is NULL") }
    result.withUnsafeBufferPointer { output.update(from: $0.baseAddress!, count: count) }
}

/// The contour of `frames` F0 values at their times, as the caller passed them.
private func contour(_ time: UnsafePointer<Double>?, _ f0: UnsafePointer<Double>?, _ frames: Int) throws -> F0Contour {
    try F0Contour(time: values(time, frames, "the time axis"), f0: values(f0, frames, "the F0"))
}

/// A thread count a caller may ask for, the same bound as a conversion's.
private func requireThreads(_ threads: Int32) throws {
    guard (1...1024).contains(threads) else { throw CallError("threads must be from 1 to 1024 (got \(threads))") }
}

/// Writes an F0 contour's values and times into the caller's buffers of `frames` values each.
private func copy(_ contour: F0Contour, f0: UnsafeMutablePointer<Double>?, time: UnsafeMutablePointer<Double>?, frames: Int) throws {
    try copy(contour.f0, to: f0, count: frames, "the F0")
    try copy(contour.time, to: time, count: frames, "the time axis")
}

@_cdecl("koe_world_frame_count")
public func koe_world_frame_count(
    _ fs: Int32, _ framePeriod: Double, _ samples: Int, _ frames: UnsafeMutablePointer<Int>?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let frames else { throw CallError("the frame count's pointer is NULL") }
        var options = Dio.Options()
        options.framePeriod = framePeriod
        frames.pointee = try Dio(sampleRate: Int(fs), options: options).frameCount(samples: samples)
    }
}

@_cdecl("koe_world_dio")
public func koe_world_dio(
    _ x: UnsafePointer<Double>?, _ length: Int, _ fs: Int32, _ f0Floor: Double, _ f0Ceil: Double,
    _ channelsInOctave: Double, _ framePeriod: Double, _ speed: Int32, _ allowedRange: Double,
    _ f0: UnsafeMutablePointer<Double>?, _ time: UnsafeMutablePointer<Double>?, _ frames: Int,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        var options = Dio.Options()
        options.f0Floor = f0Floor
        options.f0Ceil = f0Ceil
        options.channelsInOctave = channelsInOctave
        options.framePeriod = framePeriod
        options.speed = Int(speed)
        options.allowedRange = allowedRange
        let signal = try values(x, length, "the signal")
        try copy(try Dio(sampleRate: Int(fs), options: options).estimate(signal), f0: f0, time: time, frames: frames)
    }
}

@_cdecl("koe_world_harvest")
public func koe_world_harvest(
    _ x: UnsafePointer<Double>?, _ length: Int, _ fs: Int32, _ f0Floor: Double, _ f0Ceil: Double, _ framePeriod: Double,
    _ f0: UnsafeMutablePointer<Double>?, _ time: UnsafeMutablePointer<Double>?, _ frames: Int,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        let options = Harvest.Options(framePeriod: framePeriod, f0Floor: f0Floor, f0Ceil: f0Ceil)
        let signal = try values(x, length, "the signal")
        try copy(try Harvest(sampleRate: Int(fs), options: options).estimate(signal), f0: f0, time: time, frames: frames)
    }
}

@_cdecl("koe_world_stonemask")
public func koe_world_stonemask(
    _ x: UnsafePointer<Double>?, _ length: Int, _ fs: Int32, _ time: UnsafePointer<Double>?, _ f0: UnsafePointer<Double>?,
    _ frames: Int, _ refined: UnsafeMutablePointer<Double>?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        let signal = try values(x, length, "the signal")
        let result = try StoneMask(sampleRate: Int(fs)).refine(signal, contour: try contour(time, f0, frames))
        try copy(result.f0, to: refined, count: frames, "the refined F0")
    }
}

@_cdecl("koe_world_cheaptrick_fft_size")
public func koe_world_cheaptrick_fft_size(
    _ fs: Int32, _ f0Floor: Double, _ fftSize: UnsafeMutablePointer<Int32>?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let fftSize else { throw CallError("the FFT size's pointer is NULL") }
        let size = try CheapTrick(sampleRate: Int(fs), options: CheapTrick.Options(f0Floor: f0Floor)).fftSize
        fftSize.pointee = Int32(size)
    }
}

@_cdecl("koe_world_cheaptrick_f0_floor")
public func koe_world_cheaptrick_f0_floor(
    _ fs: Int32, _ fftSize: Int32, _ f0Floor: UnsafeMutablePointer<Double>?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let f0Floor else { throw CallError("the F0 floor's pointer is NULL") }
        // CheapTrick refuses a rate or size it cannot analyse with.
        _ = try CheapTrick(sampleRate: Int(fs), options: CheapTrick.Options(fftSize: Int(fftSize)))
        f0Floor.pointee = CheapTrick.f0Floor(sampleRate: Int(fs), fftSize: Int(fftSize))
    }
}

@_cdecl("koe_world_cheaptrick")
public func koe_world_cheaptrick(
    _ x: UnsafePointer<Double>?, _ length: Int, _ fs: Int32, _ time: UnsafePointer<Double>?, _ f0: UnsafePointer<Double>?,
    _ frames: Int, _ q1: Double, _ fftSize: Int32, _ threads: Int32, _ spectrogram: UnsafeMutablePointer<Double>?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        try requireThreads(threads)
        let signal = try values(x, length, "the signal")
        let estimator = try CheapTrick(sampleRate: Int(fs), options: CheapTrick.Options(q1: q1, fftSize: Int(fftSize)))
        let result = try estimator.estimate(signal, contour: try contour(time, f0, frames), threads: Int(threads))
        try copy(result.storage, to: spectrogram, count: frames * (Int(fftSize) / 2 + 1), "the spectrogram")
    }
}

@_cdecl("koe_world_d4c")
public func koe_world_d4c(
    _ x: UnsafePointer<Double>?, _ length: Int, _ fs: Int32, _ time: UnsafePointer<Double>?, _ f0: UnsafePointer<Double>?,
    _ frames: Int, _ threshold: Double, _ fftSize: Int32, _ threads: Int32, _ aperiodicity: UnsafeMutablePointer<Double>?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        try requireThreads(threads)
        let signal = try values(x, length, "the signal")
        let estimator = try D4C(sampleRate: Int(fs), fftSize: Int(fftSize), options: D4C.Options(threshold: threshold))
        let result = try estimator.estimate(signal, contour: try contour(time, f0, frames), threads: Int(threads))
        try copy(result.storage, to: aperiodicity, count: frames * (Int(fftSize) / 2 + 1), "the aperiodicity")
    }
}

@_cdecl("koe_world_synthesis_length")
public func koe_world_synthesis_length(
    _ fs: Int32, _ framePeriod: Double, _ frames: Int, _ length: UnsafeMutablePointer<Int>?,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let length else { throw CallError("the length's pointer is NULL") }
        guard frames >= 0 else { throw CallError("a synthesis cannot have \(frames) frames") }
        let synthesis = try Synthesis(sampleRate: Int(fs), framePeriod: framePeriod)
        // Checked in Double first: a length beyond Int's would trap converting.
        let samples = Double(frames) * framePeriod * Double(fs) / 1000
        guard samples <= Double(Synthesis.longestOutput) else {
            throw CallError("\(frames) frames of \(framePeriod) ms make \(samples) samples, more than \(Synthesis.longestOutput)")
        }
        length.pointee = synthesis.outputLength(frameCount: frames)
    }
}

@_cdecl("koe_world_synthesize")
public func koe_world_synthesize(
    _ f0: UnsafePointer<Double>?, _ frames: Int, _ spectrogram: UnsafePointer<Double>?,
    _ aperiodicity: UnsafePointer<Double>?, _ bins: Int, _ fs: Int32, _ framePeriod: Double,
    _ y: UnsafeMutablePointer<Double>?, _ length: Int,
    _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard frames >= 0, bins >= 0, frames.multipliedReportingOverflow(by: bins).overflow == false else {
            throw CallError("a spectrogram cannot have \(frames) x \(bins) values")
        }
        let count = frames * bins
        let envelope = try Matrix(rows: frames, columns: bins, storage: values(spectrogram, count, "the spectrogram"))
        let aperiodic = try Matrix(rows: frames, columns: bins, storage: values(aperiodicity, count, "the aperiodicity"))
        let synthesis = try Synthesis(sampleRate: Int(fs), framePeriod: framePeriod)
        let result = try synthesis.synthesize(f0: values(f0, frames, "the F0"), spectrogram: envelope, aperiodicity: aperiodic)
        try copy(result, to: y, count: length, "the synthesized signal")
    }
}
