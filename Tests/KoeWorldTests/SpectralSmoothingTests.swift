import Foundation
@testable import KoeWorld
import Testing

@Suite struct SpectralSmoothingTests {
    let fftSize = 1024
    let sampleRate = 16000
    var binWidth: Double { Double(sampleRate) / Double(fftSize) }

    private func smoothed(_ spectrum: [Double], width: Double) -> [Double] {
        let smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        var output = [Double](repeating: .nan, count: spectrum.count)
        spectrum.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { smoothing.smooth(input, width: width, into: $0) }
        }
        return output
    }

    @Test func smoothingKeepsAConstantSpectrum() {
        let output = smoothed([Double](repeating: 3, count: fftSize / 2 + 1), width: 170)
        for value in output {
            #expect(abs(value - 3) < 1e-9)
        }
    }

    @Test func smoothingKeepsARampAwayFromTheEdges() {
        let ramp = (0...(fftSize / 2)).map { Double($0) * 0.25 }
        let output = smoothed(ramp, width: 200)
        for bin in 20..<(fftSize / 2 - 20) {
            #expect(abs(output[bin] - ramp[bin]) < 1e-9)
        }
    }

    @Test func smoothingSpreadsASpikeOverTheWidth() {
        var spike = [Double](repeating: 0, count: fftSize / 2 + 1)
        spike[200] = 1
        let width = 10 * binWidth
        let output = smoothed(spike, width: width)
        let touched = output.indices.filter { output[$0] > 1e-12 }
        #expect(touched.count >= 10 && touched.count <= 12)
        #expect(touched.allSatisfy { abs($0 - 200) <= 6 })
        #expect(abs(output[200] - binWidth / width) < 1e-9)
        #expect(abs(output.reduce(0, +) - 1) < 1e-9)
    }

    @Test func smoothingInPlaceEqualsSmoothingInto() {
        let spectrum = (0...(fftSize / 2)).map { 1 + sin(Double($0) / 7) }
        let expected = smoothed(spectrum, width: 123)
        var inPlace = spectrum
        let smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        inPlace.withUnsafeMutableBufferPointer { smoothing.smooth($0, width: 123) }
        #expect(inPlace == expected)
    }

    @Test func dcCorrectionFoldsTheSpectrumAboutF0() {
        // f(x) + f(f0 - x) is f0 for f(x) = x: every bin below F0 becomes F0; bins above are untouched.
        let f0 = 150.0
        let frequencies = (0...(fftSize / 2)).map { Double($0) * binWidth }
        var spectrum = frequencies
        let smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        spectrum.withUnsafeMutableBufferPointer { smoothing.correctDC($0, f0: f0) }
        let lastFolded = Int(f0 / binWidth)
        for bin in 0...lastFolded {
            #expect(abs(spectrum[bin] - f0) < 1e-9)
        }
        #expect(Array(spectrum[(lastFolded + 1)...]) == Array(frequencies[(lastFolded + 1)...]))
    }

    @Test func highestF0KeepsBothHelpersInsideTheSpectrum() {
        let smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        var spectrum = [Double](repeating: 1, count: fftSize / 2 + 1)
        spectrum.withUnsafeMutableBufferPointer { buffer in
            smoothing.correctDC(buffer, f0: smoothing.highestF0)
            smoothing.smooth(buffer, width: smoothing.highestF0)
        }
        #expect(spectrum.allSatisfy { $0.isFinite })
    }
}
