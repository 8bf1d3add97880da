import Foundation
import KoeWorld
import Testing
import TestSupport

@Suite struct SpectralEnvelopeCodingTests {
    /// WORLD's mel scale, as the codec documents it.
    private func mel(_ frequency: Double) -> Double {
        1127.01048 * log(1 + frequency / 700)
    }

    /// `frames` frames whose log power is `logPower(frequency)` at every bin.
    private func spectrogram(frames: Int, fftSize: Int, sampleRate: Int, logPower: (Double) -> Double) throws -> Matrix {
        let bins = fftSize / 2 + 1
        let row = (0..<bins).map { exp(logPower(Double($0) * Double(sampleRate) / Double(fftSize))) }
        return try Matrix(rows: frames, columns: bins, storage: Array([[Double]](repeating: row, count: frames).joined()))
    }

    /// CheapTrick's envelope of a vowel whose F0 glides, a frame every 5 ms.
    private func vowelEnvelope(sampleRate: Int, fftSize: Int? = nil) throws -> Matrix {
        let duration = 0.4
        let signal = Signals.vowel(f0: 140, sampleRate: sampleRate, duration: duration, formants: [650, 1100, 2500, 3400])
        let frames = Int(duration / 0.005)
        let contour = F0Contour(f0: (0..<frames).map { 120 + 40 * Double($0) / Double(frames) }, framePeriod: 5)
        return try CheapTrick(sampleRate: sampleRate, options: .init(fftSize: fftSize)).estimate(signal, contour: contour)
    }

    /// Mean over frames of the RMS difference in dB between two power spectrograms, over bins `band`.
    private func logSpectralDistance(_ first: Matrix, _ second: Matrix, band: ClosedRange<Int>) -> Double {
        var total = 0.0
        for frame in 0..<first.rows {
            let squares = band.map { pow(10 * log10(first[frame, $0] / second[frame, $0]), 2) }
            total += (squares.reduce(0, +) / Double(squares.count)).squareRoot()
        }
        return total / Double(first.rows)
    }

    @Test(arguments: [(8000, 512, 1), (16000, 1024, 40), (16000, 1030, 50), (22050, 1024, 60), (48000, 2048, 257), (44100, 4096, 1025)])
    func shapesFollowTheFramesTheDimensionsAndTheFFTSize(sampleRate: Int, fftSize: Int, dimensions: Int) throws {
        let codec = try SpectralEnvelopeCoding(sampleRate: sampleRate, fftSize: fftSize, dimensions: dimensions)
        let envelope = try spectrogram(frames: 7, fftSize: fftSize, sampleRate: sampleRate) { -$0 / 2000 }
        let coded = try codec.code(envelope)
        #expect(coded.rows == 7 && coded.columns == dimensions)
        let decoded = try codec.decode(coded)
        #expect(decoded.rows == 7 && decoded.columns == fftSize / 2 + 1)
        #expect(decoded.storage.allSatisfy { $0.isFinite && $0 > 0 })
        let none = try codec.code(Matrix(rows: 0, columns: fftSize / 2 + 1))
        #expect(none.rows == 0 && none.columns == dimensions)
        #expect(try codec.decode(none).rows == 0)
    }

    @Test(arguments: [1e-9, 1.0, 3.5e4])
    func aFlatEnvelopeCodesToItsLogAloneAndDecodesExactly(power: Double) throws {
        let codec = try SpectralEnvelopeCoding(sampleRate: 16000, fftSize: 1024, dimensions: 24)
        let flat = try Matrix(rows: 2, columns: 513, repeating: power)
        let coded = try codec.code(flat)
        #expect(abs(coded[0, 0] - log(power)) < 1e-12 * max(1, abs(log(power))))
        #expect((1..<24).allSatisfy { abs(coded[1, $0]) < 1e-12 * max(1, abs(log(power))) })
        let decoded = try codec.decode(coded)
        #expect(decoded.storage.allSatisfy { abs($0 / power - 1) < 1e-12 })
    }

    /// The first coefficient is the mean log power over the mel axis, `fftSize / 2` points from 40 Hz up to
    /// (not including) min(Nyquist, 20 kHz): exact for a log power linear in mel, which the resampling keeps.
    @Test(arguments: [(8000, 512), (16000, 1024), (16000, 1030), (48000, 2048), (96000, 4096)])
    func theFirstCoefficientIsTheMeanOverTheMelAxis(sampleRate: Int, fftSize: Int) throws {
        let slope = -0.004
        let envelope = try spectrogram(frames: 1, fftSize: fftSize, sampleRate: sampleRate) { slope * mel($0) + 2 }
        let coded = try SpectralEnvelopeCoding(sampleRate: sampleRate, fftSize: fftSize, dimensions: 3).code(envelope)
        let floor = mel(40)
        let ceiling = mel(min(Double(sampleRate) / 2, 20000))
        let points = Double(fftSize / 2)
        let meanMel = floor + (ceiling - floor) * (points - 1) / (2 * points)
        #expect(abs(coded[0, 0] - (slope * meanMel + 2)) < 1e-10)
    }

    /// FFT size 1030 puts an odd number of points on the mel axis, where WORLD's reordering leaves one unset; here
    /// the same transform covers every point.
    @Test(arguments: [(16000, 1024), (16000, 1030), (48000, 2048)])
    func aVowelEnvelopeSurvivesCodingCloserWithMoreDimensions(sampleRate: Int, fftSize: Int) throws {
        let envelope = try vowelEnvelope(sampleRate: sampleRate, fftSize: fftSize)
        // From 100 Hz to 4 kHz, where the formants lie and the mel axis is dense.
        let band = (100 * fftSize / sampleRate)...(4000 * fftSize / sampleRate)
        var distances: [Double] = []
        for dimensions in [10, 30, 60] {
            let codec = try SpectralEnvelopeCoding(sampleRate: sampleRate, fftSize: fftSize, dimensions: dimensions)
            distances.append(logSpectralDistance(try codec.decode(codec.code(envelope)), envelope, band: band))
        }
        #expect(distances[0] > distances[1] && distances[1] > distances[2], "\(distances)")
        #expect(distances[2] < 1.0, "\(distances)")
    }

    @Test func oneCodecServesSeveralThreadsAlike() async throws {
        let envelope = try vowelEnvelope(sampleRate: 16000)
        let codec = try SpectralEnvelopeCoding(sampleRate: 16000, fftSize: 1024, dimensions: 40)
        let expected = try codec.decode(codec.code(envelope))
        let results = try await withThrowingTaskGroup(of: Matrix.self) { group in
            for _ in 0..<4 {
                group.addTask { try codec.decode(codec.code(envelope)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 == expected })
    }

    @Test func badSettingsAreRefused() {
        #expect(throws: WorldError.unsupportedSampleRate(0)) { try SpectralEnvelopeCoding(sampleRate: 0, fftSize: 1024, dimensions: 40) }
        #expect(throws: WorldError.unsupportedSampleRate(-16000)) {
            try SpectralEnvelopeCoding(sampleRate: -16000, fftSize: 1024, dimensions: 40)
        }
        for fftSize in [0, -1024, 1023, 16, 1 << 17] {
            #expect(throws: WorldError.self) { try SpectralEnvelopeCoding(sampleRate: 16000, fftSize: fftSize, dimensions: 4) }
        }
        for dimensions in [0, -1, 513, Int.max] {
            #expect(throws: WorldError.self) { try SpectralEnvelopeCoding(sampleRate: 16000, fftSize: 1024, dimensions: dimensions) }
        }
    }

    @Test func moreDimensionsThanWorldCodesAreRefusedForCodingOnly() throws {
        #expect(SpectralEnvelopeCoding.mostCodedDimensions(fftSize: 1024) == 257)
        let envelope = try Matrix(rows: 1, columns: 513, repeating: 1)
        #expect(try SpectralEnvelopeCoding(sampleRate: 16000, fftSize: 1024, dimensions: 257).code(envelope).columns == 257)
        let wide = try SpectralEnvelopeCoding(sampleRate: 16000, fftSize: 1024, dimensions: 258)
        #expect(throws: WorldError.self) { try wide.code(envelope) }
        let decoded = try wide.decode(Matrix(rows: 1, columns: 258))
        #expect(decoded.storage.allSatisfy { $0 == 1 })
    }

    @Test func badValuesAreRefused() throws {
        let codec = try SpectralEnvelopeCoding(sampleRate: 16000, fftSize: 1024, dimensions: 40)
        #expect(throws: WorldError.self) { try codec.code(Matrix(rows: 2, columns: 512, repeating: 1)) }
        #expect(throws: WorldError.self) { try codec.decode(Matrix(rows: 2, columns: 41)) }
        for bad in [Double.nan, -.infinity] {
            var coded = try Matrix(rows: 2, columns: 40)
            coded[1, 3] = bad
            #expect(throws: WorldError.self) { try codec.decode(coded) }
        }
        var huge = try Matrix(rows: 1, columns: 40)
        huge[0, 0] = 1e300
        #expect(throws: WorldError.invalidParameters("the coded envelope's frame 0 decodes to a power too large for a double")) {
            try codec.decode(huge)
        }
    }
}
