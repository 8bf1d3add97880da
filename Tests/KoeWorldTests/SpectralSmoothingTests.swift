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

    /// WORLD's LinearSmoothing written out plainly, one bin and one division at a time, for the smoothing to
    /// match bit for bit: the mirrored integral, the edges' positions on its axis, interp1Q.
    private func reference(_ spectrum: [Double], width: Double, fftSize: Int, sampleRate: Int) -> [Double] {
        let half = fftSize / 2
        let (size, rate) = (Double(fftSize), Double(sampleRate))
        let binWidth = rate / size
        let boundary = Int(width * size / rate) + 1
        let mirrored = (0..<boundary).map { spectrum[boundary - $0] } + spectrum[0..<half]
            + (0...boundary).map { spectrum[half - $0] }
        var running = 0.0
        let integral = mirrored.map { value in
            running = value * binWidth + running
            return running
        }
        let origin = -(Double(boundary) - 0.5) * binWidth
        func level(at edge: Double) -> Double {
            let position = (edge - origin) / binWidth
            let base = Int(position)
            let slope = base < integral.count - 1 ? integral[base + 1] - integral[base] : 0
            return integral[base] + slope * (position - Double(base))
        }
        return (0...half).map { bin in
            let lowerEdge = Double(bin) / size * rate - width / 2.0
            return (level(at: lowerEdge + width) - level(at: lowerEdge)) / width
        }
    }

    @Test func smoothingMatchesWorldsArithmeticExactly() {
        for (fftSize, sampleRate) in [(2048, 48000), (1024, 16000), (1000, 22050), (1002, 8000)] {
            let smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
            let spectrum = (0...(fftSize / 2)).map { exp(3 * sin(Double($0) / 5.3)) * (1 + Double($0 % 7)) }
            // A whole number of bins puts the edges on whole positions, which takes the general path.
            let binWidth = Double(sampleRate) / Double(fftSize)
            for width in [23.4375, 71.1, 150.0, 333.3, binWidth, 3 * binWidth, smoothing.highestF0] {
                var output = [Double](repeating: .nan, count: spectrum.count)
                spectrum.withUnsafeBufferPointer { input in
                    output.withUnsafeMutableBufferPointer { smoothing.smooth(input, width: width, into: $0) }
                }
                let expected = reference(spectrum, width: width, fftSize: fftSize, sampleRate: sampleRate)
                #expect(output == expected, "fftSize \(fftSize), width \(width)")
            }
        }
    }
}
