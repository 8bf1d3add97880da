import Foundation
@testable import KoeDSP
import Testing

@Suite struct FFTTests {
    /// Every real transform koe makes at 8 to 96 kHz plans from `fftwWisdom` when koe is built with the Makefile's
    /// FFTW, and a forward one leaves its input as it was, as an estimated plan does.
    @Test(arguments: [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 80, 110, 160, 220, 240, 320, 440, 480, 882, 960])
    func commonSizesPlanFromWisdom(size: Int) {
        let forward = ForwardRealFFT(size: size)
        #expect(forward.isFromWisdom)
        if size != 128 {  // koe makes no inverse transform of 128 points, and the wisdom holds none
            #expect(InverseRealFFT(size: size).isFromWisdom)
        }
        let signal = (0..<size).map { sin(Double($0) * 0.7) + 0.01 * Double($0 % 7) }
        for i in 0..<size { forward.waveform[i] = signal[i] }
        forward.execute()
        #expect(Array(forward.waveform) == signal)
    }

    /// The committed wisdom names no codelet beyond AVX (FFTW's scalar, SSE2 and AVX ones), so FFTW takes it on
    /// every x86-64 CPU with AVX, AVX2-only and AVX-512 alike: a plan it named for AVX-512 would be refused on an
    /// AVX2 CPU and silently replaced by an estimate.
    @Test func committedWisdomRunsOnEveryCPUWithAVX() {
        let codelets = fftwWisdom.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == "\n" })
            .filter { $0.hasPrefix("fftw_codelet_") }
        #expect(!codelets.isEmpty)
        for codelet in codelets {
            let parts = codelet.split(separator: "_")
            let size = parts.indices.dropFirst(3).first { parts[$0].allSatisfy(\.isNumber) }
            let kind = size.map { parts[($0 + 1)...].joined(separator: "_") } ?? "?"
            #expect(["", "sse2", "avx"].contains(kind), "\(codelet)")
        }
    }

    /// A size the wisdom lacks gets FFTW's estimated plan.
    @Test func sizeWithoutWisdomPlansByEstimate() {
        #expect(!ForwardRealFFT(size: 1001).isFromWisdom && !InverseRealFFT(size: 1001).isFromWisdom)
    }

    /// Plans from the wisdom (256) and estimated (64, 1001) alike.
    @Test(arguments: [64, 256, 1001])
    func forwardThenInverseRestoresSignalTimesSize(size: Int) {
        let forward = ForwardRealFFT(size: size)
        let inverse = InverseRealFFT(size: size)
        let signal = (0..<size).map { sin(Double($0) * 0.3) + 0.1 * Double($0 % 5) }
        for i in 0..<size { forward.waveform[i] = signal[i] }
        forward.execute()
        for i in 0...(size / 2) { inverse.spectrum[i] = forward.spectrum[i] }
        inverse.execute()
        for i in 0..<size {
            #expect(abs(inverse.waveform[i] / Double(size) - signal[i]) < 1e-12)
        }
    }

    @Test func forwardOfCosineHasOneBin() {
        let size = 32
        let forward = ForwardRealFFT(size: size)
        for i in 0..<size { forward.waveform[i] = cos(2 * .pi * 4 * Double(i) / Double(size)) }
        forward.execute()
        #expect(abs(forward.spectrum[4].real - Double(size) / 2) < 1e-9)
        #expect(abs(forward.spectrum[3].real) < 1e-9)
    }

    @Test func complexForwardThenBackwardRestoresInput() {
        let size = 16
        let forward = ComplexFFT(size: size, direction: .forward)
        let backward = ComplexFFT(size: size, direction: .backward)
        for i in 0..<size { forward.input[i] = Complex(Double(i), -Double(i) / 2) }
        forward.execute()
        for i in 0..<size { backward.input[i] = forward.output[i] }
        backward.execute()
        for i in 0..<size {
            #expect(abs(backward.output[i].real / Double(size) - Double(i)) < 1e-12)
            #expect(abs(backward.output[i].imag / Double(size) + Double(i) / 2) < 1e-12)
        }
    }

    @Test func minimumPhaseOfFlatSpectrumIsFlat() {
        let size = 32
        let analysis = MinimumPhase(size: size)
        for i in 0...(size / 2) { analysis.powerSpectrum[i] = 4 }
        analysis.execute()
        for i in 0...(size / 2) {
            #expect(abs(analysis.spectrum[i].real - 2) < 1e-9)
            #expect(abs(analysis.spectrum[i].imag) < 1e-9)
        }
    }
}
