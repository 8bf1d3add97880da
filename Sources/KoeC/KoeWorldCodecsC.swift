// WORLD's codecs for C callers (koe_world.h): KoeWorld's SpectralEnvelopeCoding and AperiodicityCoding on the
// caller's row-major buffers.
import KoeWorld

/// A `frames` x `columns` matrix of the caller's values; `name` says which in an error.
private func matrix(_ pointer: UnsafePointer<Double>?, frames: Int, columns: Int, _ name: String) throws -> Matrix {
    guard frames >= 0, columns >= 0, !frames.multipliedReportingOverflow(by: columns).overflow else {
        throw CallError("\(name) cannot have \(frames) x \(columns) values")
    }
    return try Matrix(rows: frames, columns: columns, storage: values(pointer, frames * columns, name))
}

@_cdecl("koe_world_aperiodicity_band_count")
public func koe_world_aperiodicity_band_count(
    _ fs: Int32, _ count: UnsafeMutablePointer<Int32>?, _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        guard let count else { throw CallError("the count's pointer is NULL") }
        count.pointee = Int32(try AperiodicityCoding.bandCount(sampleRate: Int(fs)))
    }
}

@_cdecl("koe_world_code_aperiodicity")
public func koe_world_code_aperiodicity(
    _ aperiodicity: UnsafePointer<Double>?, _ frames: Int, _ fs: Int32, _ fftSize: Int32,
    _ coded: UnsafeMutablePointer<Double>?, _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        let coding = try AperiodicityCoding(sampleRate: Int(fs), fftSize: Int(fftSize))
        let input = try matrix(aperiodicity, frames: frames, columns: Int(fftSize) / 2 + 1, "the aperiodicity")
        try copy(try coding.code(input).storage, to: coded, count: frames * coding.bandCount, "the coded aperiodicity")
    }
}

@_cdecl("koe_world_decode_aperiodicity")
public func koe_world_decode_aperiodicity(
    _ coded: UnsafePointer<Double>?, _ frames: Int, _ fs: Int32, _ fftSize: Int32,
    _ aperiodicity: UnsafeMutablePointer<Double>?, _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        let coding = try AperiodicityCoding(sampleRate: Int(fs), fftSize: Int(fftSize))
        let input = try matrix(coded, frames: frames, columns: coding.bandCount, "the coded aperiodicity")
        try copy(try coding.decode(input).storage, to: aperiodicity, count: frames * (Int(fftSize) / 2 + 1), "the aperiodicity")
    }
}

@_cdecl("koe_world_code_spectral_envelope")
public func koe_world_code_spectral_envelope(
    _ spectrogram: UnsafePointer<Double>?, _ frames: Int, _ fs: Int32, _ fftSize: Int32, _ dimensions: Int32,
    _ coded: UnsafeMutablePointer<Double>?, _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        let coding = try SpectralEnvelopeCoding(sampleRate: Int(fs), fftSize: Int(fftSize), dimensions: Int(dimensions))
        let input = try matrix(spectrogram, frames: frames, columns: Int(fftSize) / 2 + 1, "the spectrogram")
        try copy(try coding.code(input).storage, to: coded, count: frames * Int(dimensions), "the coded spectral envelope")
    }
}

@_cdecl("koe_world_decode_spectral_envelope")
public func koe_world_decode_spectral_envelope(
    _ coded: UnsafePointer<Double>?, _ frames: Int, _ fs: Int32, _ fftSize: Int32, _ dimensions: Int32,
    _ spectrogram: UnsafeMutablePointer<Double>?, _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int
) -> Int32 {
    reportingErrors(message, messageSize) {
        let coding = try SpectralEnvelopeCoding(sampleRate: Int(fs), fftSize: Int(fftSize), dimensions: Int(dimensions))
        let input = try matrix(coded, frames: frames, columns: Int(dimensions), "the coded spectral envelope")
        try copy(try coding.decode(input).storage, to: spectrogram, count: frames * (Int(fftSize) / 2 + 1), "the spectrogram")
    }
}
