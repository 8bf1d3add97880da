import Glibc
import KoeDSP

/// WORLD's aperiodicity codec (`CodeAperiodicity` / `DecodeAperiodicity`, pyworld's `code_aperiodicity` /
/// `decode_aperiodicity`): a frame's aperiodicity as its level in dB at a few band centres, 3 kHz apart.
///
/// Coding reads the dB aperiodicity at 3, 6, … kHz. Decoding treats a frame whose bands average above −0.5 dB as
/// unvoiced and gives it WORLD's unvoiced aperiodicity, 1 − 10⁻¹², at every bin; otherwise it interpolates in dB
/// between −60 dB at 0 Hz, the bands, and −10⁻¹² dB at Nyquist.
///
/// Below 12 kHz there are no bands (`bandCount` is 0; pyworld's `code_aperiodicity` fails there with an
/// IndexError). This codes such aperiodicity as WORLD's C++ does: to frames of no values. Decoding them gives every
/// frame the voiced interpolation between the two fixed ends, as WORLD does (its band average is then NaN, which
/// never exceeds −0.5). The codec keeps nothing of the aperiodicity at these rates, but what it decodes is
/// usable: synthesis reads the aperiodicity only for voiced pulses, and gets WORLD's smooth default there.
public struct AperiodicityCoding: Sendable {
    public let sampleRate: Int
    /// The FFT size of the aperiodicity: `fftSize / 2 + 1` bins a frame.
    public let fftSize: Int
    /// Values a coded frame holds: `bandCount(sampleRate:)`.
    public let bandCount: Int
    /// The centre of each band, Hz.
    private let bandFrequencies: [Double]
    /// The frequency of each bin, Hz, in WORLD's order of operations for this codec (fs / fftSize × bin).
    private let binFrequencies: [Double]

    /// Spacing of the bands, and the lowest band's centre, Hz.
    private static let bandSpacing = 3000.0
    /// No band lies above this, Hz.
    private static let highestBand = 15_000.0
    /// WORLD's aperiodicity of unvoiced frames: 1 − 10⁻¹² (its `kMySafeGuardMinimum`).
    private static let safeGuardMinimum = 1e-12

    /// WORLD's `GetNumberOfAperiodicities` (pyworld's `get_num_aperiodicities`): the 3 kHz bands up to 15 kHz that lie
    /// at least 3 kHz below Nyquist; 0 below 12 kHz, 5 from 36 kHz up. Throws if the rate is not supported.
    public static func bandCount(sampleRate: Int) throws(WorldError) -> Int {
        try SignalRequirements.validate(sampleRate: sampleRate)
        return Int(min(highestBand, Double(sampleRate) / 2.0 - bandSpacing) / bandSpacing)
    }

    /// Throws if the rate is not supported or the FFT size is not one CheapTrick accepts at that rate.
    public init(sampleRate: Int, fftSize: Int) throws(WorldError) {
        bandCount = try Self.bandCount(sampleRate: sampleRate)
        try CheapTrick.validate(fftSize: fftSize, sampleRate: sampleRate)
        self.sampleRate = sampleRate
        self.fftSize = fftSize
        bandFrequencies = (0..<bandCount).map { Self.bandSpacing * (Double($0) + 1.0) }
        let binWidth = Double(sampleRate) / Double(fftSize)
        binFrequencies = (0...(fftSize / 2)).map { binWidth * Double($0) }
    }

    /// `bandCount` dB values for each frame of `aperiodicity` (`fftSize / 2 + 1` bins a frame). Throws if the
    /// aperiodicity has another number of bins or a value that is not positive and finite.
    public func code(_ aperiodicity: Matrix) throws(WorldError) -> Matrix {
        try SignalRequirements.validateSpectrum(
            aperiodicity, fftSize: fftSize, name: "the aperiodicity", kind: "an aperiodicity")
        let bins = fftSize / 2 + 1
        var coded = try Matrix(rows: aperiodicity.rows, columns: bandCount)
        guard bandCount > 0 else { return coded }
        var decibels = [Double](repeating: 0, count: bins)
        let binWidth = Double(sampleRate) / Double(fftSize)
        let columns = bandCount
        coded.storage.withUnsafeMutableBufferPointer { output in
            decibels.withUnsafeMutableBufferPointer { decibels in
                bandFrequencies.withUnsafeBufferPointer { bands in
                    for frame in 0..<aperiodicity.rows {
                        aperiodicity.withRow(frame) { row in
                            for bin in 0..<bins {
                                decibels[bin] = 20 * log10(row[bin])
                            }
                        }
                        Matlab.interp1Q(
                            origin: 0, step: binWidth, y: UnsafeBufferPointer(decibels), at: bands,
                            into: UnsafeMutableBufferPointer(rebasing: output[(frame * columns)..<((frame + 1) * columns)]))
                    }
                }
            }
        }
        return coded
    }

    /// The aperiodicity, `fftSize / 2 + 1` bins a frame, that `coded` (`bandCount` dB values a frame) stands for.
    /// Throws if `coded` has another number of columns, holds a value that is not finite, or decodes to an
    /// aperiodicity too large for a `Double`.
    public func decode(_ coded: Matrix) throws(WorldError) -> Matrix {
        guard coded.columns == bandCount else {
            throw .invalidParameters(
                "the coded aperiodicity has \(coded.columns) values a frame; \(sampleRate) Hz codes \(bandCount)")
        }
        try SignalRequirements.requireFinite(coded.storage) {
            "the coded aperiodicity's frame \($0 / coded.columns), band \($0 % coded.columns)"
        }
        let bins = fftSize / 2 + 1
        var aperiodicity = try Matrix(rows: coded.rows, columns: bins, repeating: 1.0 - Self.safeGuardMinimum)
        // The bands between two fixed ends: −60 dB at 0 Hz and just under 0 dB at Nyquist.
        let knots = [0.0] + bandFrequencies + [Double(sampleRate) / 2.0]
        var levels = [Double](repeating: 0, count: bandCount + 2)
        levels[0] = -60.0
        levels[bandCount + 1] = -Self.safeGuardMinimum
        knots.withUnsafeBufferPointer { knots in
            levels.withUnsafeMutableBufferPointer { levels in
                binFrequencies.withUnsafeBufferPointer { binFrequencies in
                    aperiodicity.storage.withUnsafeMutableBufferPointer { output in
                        for frame in 0..<coded.rows {
                            let isUnvoiced = coded.withRow(frame) { bands in
                                guard !Self.isUnvoiced(bands) else { return true }
                                _ = UnsafeMutableBufferPointer(rebasing: levels[1..<(bandCount + 1)]).update(fromContentsOf: bands)
                                return false
                            }
                            guard !isUnvoiced else { continue }
                            let row = UnsafeMutableBufferPointer(rebasing: output[(frame * bins)..<((frame + 1) * bins)])
                            Matlab.interp1(x: knots, y: UnsafeBufferPointer(levels), at: binFrequencies, into: row)
                            for bin in row.indices {
                                row[bin] = pow(10.0, row[bin] / 20.0)
                            }
                        }
                    }
                }
            }
        }
        if let position = SignalRequirements.firstNonFinite(aperiodicity.storage) {
            throw .invalidParameters(
                "the coded aperiodicity's frame \(position / bins) decodes to a value too large for a double")
        }
        return aperiodicity
    }

    /// WORLD's voicing test of a coded frame: its bands average above −0.5 dB. A frame of no bands is voiced.
    private static func isUnvoiced(_ bands: UnsafeBufferPointer<Double>) -> Bool {
        guard !bands.isEmpty else { return false }
        var sum = 0.0
        for band in bands {
            sum += band
        }
        return sum / Double(bands.count) > -0.5
    }
}
