import Foundation
import Testing
import TestSupport
@testable import KoePlot

@Suite struct SpectrogramTests {
    /// Rows spaced evenly in log-frequency from 50 Hz (bottom) to 8 kHz (top): a 1 kHz sine lights the row of
    /// 1 kHz in every column.
    @Test func aSineLightsItsRow() {
        let sine = Signals.sine(frequency: 1000, sampleRate: 16000, duration: 1)
        let rows = 200
        let spectrogram = LogSpectrogram(sine, sampleRate: 16000, span: 0...1, frequencies: 50...8000, columns: 40, rows: rows)
        let expectedRow = Int((Double(rows) * (1 - log(1000.0 / 50) / log(8000.0 / 50))).rounded(.down))
        for column in 5..<35 {
            let levels = (0..<rows).map { spectrogram.level(row: $0, column: column) }
            let loudest = levels.indices.max { levels[$0] < levels[$1] }!
            #expect(abs(loudest - expectedRow) <= 1, "column \(column): row \(loudest), expected \(expectedRow)")
            #expect(levels[loudest] - levels[rows - 1] > 60, "a pure tone stands far above the top band")
        }
    }

    @Test func silenceAndTimeOutsideTheSignalAreTheFloor() {
        let silent = LogSpectrogram([Double](repeating: 0, count: 1600), sampleRate: 16000, span: 0...2, frequencies: 50...8000,
                                    columns: 10, rows: 10)
        #expect(silent.loudest == -300)
    }
}
