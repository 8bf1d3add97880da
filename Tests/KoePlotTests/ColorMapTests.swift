import Foundation
import Testing
@testable import KoePlot

@Suite struct ColorMapTests {
    /// Relative luminance (ITU-R BT.709 on linear sRGB).
    private func luminance(_ color: RGB) -> Double {
        func linear(_ value: Double) -> Double {
            value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(color.red) + 0.7152 * linear(color.green) + 0.0722 * linear(color.blue)
    }

    @Test func louderIsAlwaysLighter() {
        let levels = (0...200).map { Double($0) / 200 }
        let luminances = levels.map { luminance(ColorMap.color($0)) }
        #expect(zip(luminances, luminances.dropFirst()).allSatisfy { $0.0 < $0.1 })
        #expect(luminances.first! < 0.01 && luminances.last! > 0.9)
    }

    @Test func levelsBeyondTheScaleAreClamped() {
        #expect(ColorMap.color(-3) == ColorMap.color(0))
        #expect(ColorMap.color(7) == ColorMap.color(1))
        #expect(ColorMap.color(.nan) == ColorMap.color(0))
        #expect(RGB(red: 1, green: 0.5, blue: 0).hex == "#ff8000")
    }
}
