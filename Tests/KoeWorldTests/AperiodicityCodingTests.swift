import Foundation
import KoeWorld
import Testing
import TestSupport

@Suite struct AperiodicityCodingTests {
    /// WORLD's aperiodicity of an unvoiced frame.
    private let unvoiced = 1.0 - 1e-12

    /// One frame whose aperiodicity in dB is `decibels(frequency)` at every bin.
    private func aperiodicity(fftSize: Int, sampleRate: Int, decibels: (Double) -> Double) throws -> Matrix {
        let row = (0...(fftSize / 2)).map { pow(10, decibels(Double($0) * Double(sampleRate) / Double(fftSize)) / 20) }
        return try Matrix(rows: 1, columns: row.count, storage: row)
    }

    @Test(arguments: [
        (8000, 0), (11025, 0), (12000, 1), (16000, 1), (22050, 2), (24000, 3), (32000, 4), (44100, 5), (48000, 5),
        (192_000, 5),
    ])
    func bandsAreWorlds(sampleRate: Int, bands: Int) throws {
        #expect(try AperiodicityCoding.bandCount(sampleRate: sampleRate) == bands)
        #expect(try AperiodicityCoding(sampleRate: sampleRate, fftSize: 2048).bandCount == bands)
    }

    /// A dB aperiodicity linear in frequency is read exactly at 3, 6, … kHz, wherever the bins fall.
    @Test(arguments: [(16000, 1024), (22050, 1024), (44100, 2048), (48000, 2048)])
    func codingReadsTheDecibelsAtEachBand(sampleRate: Int, fftSize: Int) throws {
        let codec = try AperiodicityCoding(sampleRate: sampleRate, fftSize: fftSize)
        let coded = try codec.code(aperiodicity(fftSize: fftSize, sampleRate: sampleRate) { -30 + $0 / 1000 })
        #expect(coded.rows == 1 && coded.columns == codec.bandCount)
        for band in 0..<codec.bandCount {
            #expect(abs(coded[0, band] - (-30 + 3 * Double(band + 1))) < 1e-9)
        }
    }

    @Test func aFrameAveragingAboveMinusHalfADecibelDecodesAsUnvoiced() throws {
        let codec = try AperiodicityCoding(sampleRate: 48000, fftSize: 2048)
        let coded = try Matrix(rows: 3, columns: 5, storage: [
            -0.4, -0.4, -0.4, -0.4, -0.4,  // average −0.4 dB: unvoiced
            -2.0, 0.5, 0.5, 0.5, 0.0,      // average −0.1 dB: unvoiced, though one band is low
            -0.6, -0.6, -0.6, -0.6, -0.6,  // average −0.6 dB: voiced
        ])
        let decoded = try codec.decode(coded)
        #expect(decoded.row(0).allSatisfy { $0 == unvoiced })
        #expect(decoded.row(1).allSatisfy { $0 == unvoiced })
        #expect(decoded.row(2).contains { $0 != unvoiced })
    }

    /// A voiced frame decodes to straight lines in dB through −60 dB at 0 Hz, each band, and 0 dB at Nyquist.
    @Test func aVoicedFrameInterpolatesBetweenItsBandsInDecibels() throws {
        let sampleRate = 48000
        let fftSize = 2048
        let codec = try AperiodicityCoding(sampleRate: sampleRate, fftSize: fftSize)
        let bands = [-30.0, -20, -12, -8, -4]
        let decoded = try codec.decode(Matrix(rows: 1, columns: 5, storage: bands))
        let knots = [0.0, 3000, 6000, 9000, 12000, 15000, 24000]
        let levels = [-60.0] + bands + [-1e-12]
        for bin in 0...(fftSize / 2) {
            let frequency = Double(bin) * Double(sampleRate) / Double(fftSize)
            let segment = min(knots.lastIndex { $0 <= frequency }!, knots.count - 2)
            let fraction = (frequency - knots[segment]) / (knots[segment + 1] - knots[segment])
            let expected = levels[segment] + fraction * (levels[segment + 1] - levels[segment])
            #expect(abs(20 * log10(decoded[0, bin]) - expected) < 1e-9, "bin \(bin)")
        }
    }

    /// At 48 kHz and FFT size 2048 the band centres are bins (3 kHz is bin 128), so coding reads back what was decoded.
    @Test func codingADecodedVoicedFrameGivesItsBandsBack() throws {
        let codec = try AperiodicityCoding(sampleRate: 48000, fftSize: 2048)
        let coded = try Matrix(rows: 2, columns: 5, storage: [-35, -28, -15, -9, -2, -50, -40, -30, -20, -10])
        let again = try codec.code(codec.decode(coded))
        #expect(largestDifference(again.storage, coded.storage) < 1e-9)
    }

    /// Below 12 kHz there are no bands: coding keeps the frames and no values, and decoding gives every frame
    /// WORLD's voiced interpolation between −60 dB at 0 Hz and 0 dB at Nyquist.
    @Test(arguments: [(8000, 512), (11025, 1024)])
    func ratesWithoutBandsCodeToNothingAndDecodeToTheFixedEnds(sampleRate: Int, fftSize: Int) throws {
        let codec = try AperiodicityCoding(sampleRate: sampleRate, fftSize: fftSize)
        let noisy = try Matrix(rows: 4, columns: fftSize / 2 + 1, repeating: 0.9)
        let coded = try codec.code(noisy)
        #expect(coded.rows == 4 && coded.columns == 0)
        let decoded = try codec.decode(coded)
        #expect(decoded.rows == 4 && decoded.columns == fftSize / 2 + 1)
        for frame in 0..<4 {
            for bin in [0, fftSize / 8, fftSize / 2] {
                let expected = -60 + 60 * Double(bin) / Double(fftSize / 2)
                #expect(abs(20 * log10(decoded[frame, bin]) - expected) < 1e-9)
            }
        }
    }

    @Test func badSettingsAndValuesAreRefused() throws {
        #expect(throws: WorldError.unsupportedSampleRate(0)) { try AperiodicityCoding.bandCount(sampleRate: 0) }
        #expect(throws: WorldError.unsupportedSampleRate(-8000)) { try AperiodicityCoding(sampleRate: -8000, fftSize: 512) }
        for fftSize in [0, -1024, 1023, 16, 1 << 17] {
            #expect(throws: WorldError.self) { try AperiodicityCoding(sampleRate: 16000, fftSize: fftSize) }
        }
        let codec = try AperiodicityCoding(sampleRate: 16000, fftSize: 1024)
        #expect(throws: WorldError.self) { try codec.code(Matrix(rows: 2, columns: 1025, repeating: 0.5)) }
        #expect(throws: WorldError.self) { try codec.decode(Matrix(rows: 2, columns: 2)) }
        #expect(throws: WorldError.self) { try codec.decode(Matrix(rows: 2, columns: 0)) }
        for bad in [Double.nan, .infinity] {
            #expect(throws: WorldError.self) { try codec.decode(Matrix(rows: 1, columns: 1, storage: [bad])) }
        }
        // Voiced (the bands average far below −0.5 dB), but +10⁶ dB is beyond a double.
        #expect(throws: WorldError.invalidParameters("the coded aperiodicity's frame 0 decodes to a value too large for a double")) {
            try AperiodicityCoding(sampleRate: 48000, fftSize: 2048).decode(Matrix(rows: 1, columns: 5, storage: [-1e7, 1e6, 0, 0, 0]))
        }
    }
}
