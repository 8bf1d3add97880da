import Foundation
import KoeDSP

/// Power spectra laid out for drawing: `columns` frames evenly over a time span, each pooled into `rows` bands
/// evenly spaced in log-frequency, the top row the highest; levels in dB.
///
/// Frames are 40 ms Hann windows (narrow-band: the harmonics of a voice above 50 Hz stand apart), zero-padded
/// to twice their length. A band narrower than a bin reads the power between its two nearest bins; a wider one
/// averages the bins inside it, so the high bands are not sampled at random.
struct LogSpectrogram {
    let columns: Int
    let rows: Int
    /// Row after row, `rows` x `columns`.
    private(set) var decibels: [Double]

    private static let windowSeconds = 0.04
    /// The level of silence, so that log10 stays finite: 300 dB below full scale.
    private static let floorPower = 1e-30

    init(
        _ signal: [Double], sampleRate: Int, span: ClosedRange<Double>, frequencies: ClosedRange<Double>,
        columns: Int, rows: Int
    ) {
        self.columns = columns
        self.rows = rows
        decibels = [Double](repeating: 0, count: columns * rows)
        let rate = Double(sampleRate)
        let windowLength = max(16, Int((Self.windowSeconds * rate).rounded()))
        var fftSize = 1
        while fftSize < 2 * windowLength { fftSize *= 2 }
        let fft = ForwardRealFFT(size: fftSize)
        let window = (0..<windowLength).map { 0.5 - 0.5 * cos(2 * Double.pi * (Double($0) + 0.5) / Double(windowLength)) }
        let bands = (0..<rows).map { row in
            Band(row: row, of: rows, frequencies: frequencies, binsPerHertz: Double(fftSize) / rate, bins: fftSize / 2 + 1)
        }
        var power = [Double](repeating: 0, count: fftSize / 2 + 1)
        let seconds = span.upperBound - span.lowerBound
        for column in 0..<columns {
            let time = span.lowerBound + (Double(column) + 0.5) / Double(columns) * seconds
            let start = Int((time * rate).rounded()) - windowLength / 2
            for index in 0..<windowLength {
                let position = start + index
                fft.waveform[index] = signal.indices.contains(position) ? signal[position] * window[index] : 0
            }
            fft.execute()
            for bin in power.indices {
                let value = fft.spectrum[bin]
                power[bin] = value.real * value.real + value.imag * value.imag
            }
            for band in bands {
                decibels[band.row * columns + column] = 10 * log10(max(band.power(in: power), Self.floorPower))
            }
        }
    }

    /// The level of `row` (0 at the top) and `column`, in dB.
    func level(row: Int, column: Int) -> Double {
        decibels[row * columns + column]
    }

    /// The loudest level anywhere.
    var loudest: Double {
        decibels.max() ?? 0
    }

    /// One row's frequencies as bins of the spectrum: an interpolation point, or a range to average.
    private struct Band {
        let row: Int
        private let firstBin: Int
        private let lastBin: Int
        /// Between `firstBin` and `firstBin + 1` when the band is narrower than a bin.
        private let fraction: Double?

        init(row: Int, of rows: Int, frequencies: ClosedRange<Double>, binsPerHertz: Double, bins: Int) {
            self.row = row
            let octaves = log2(frequencies.upperBound / frequencies.lowerBound)
            func frequency(_ position: Double) -> Double {
                frequencies.lowerBound * exp2(octaves * (1 - position / Double(rows)))
            }
            let lower = frequency(Double(row) + 1) * binsPerHertz
            let upper = frequency(Double(row)) * binsPerHertz
            if upper - lower < 1 {
                let centre = min(frequency(Double(row) + 0.5) * binsPerHertz, Double(bins - 1))
                firstBin = min(Int(centre), bins - 2)
                lastBin = firstBin + 1
                fraction = centre - Double(firstBin)
            } else {
                firstBin = min(Int(lower.rounded(.up)), bins - 1)
                lastBin = max(firstBin, min(Int(upper.rounded(.down)), bins - 1))
                fraction = nil
            }
        }

        func power(in spectrum: [Double]) -> Double {
            if let fraction {
                return spectrum[firstBin] + fraction * (spectrum[lastBin] - spectrum[firstBin])
            }
            var sum = 0.0
            for bin in firstBin...lastBin { sum += spectrum[bin] }
            return sum / Double(lastBin - firstBin + 1)
        }
    }
}
