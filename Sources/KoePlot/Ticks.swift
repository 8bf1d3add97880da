import Foundation

/// Where an axis gets its ticks, and what they say.
enum Ticks {
    struct Tick: Equatable {
        let value: Double
        let label: String
    }

    /// Round steps across `range` (1, 2 or 5 times a power of ten), the smallest step giving at most `most`
    /// intervals; labels with as many decimals as the step needs.
    static func linear(_ range: ClosedRange<Double>, most: Int = 10) -> [Tick] {
        let span = range.upperBound - range.lowerBound
        guard span > 0, span.isFinite else { return [] }
        let rough = span / Double(most)
        let power = pow(10, log10(rough).rounded(.down))
        // rough / power lies in [1, 10), so a factor of 10 at the latest gives at most `most` intervals.
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { span / $0 <= Double(most) } ?? 10 * power
        let decimals = max(0, Int(-log10(step).rounded(.down)))
        var ticks: [Tick] = []
        var index = (range.lowerBound / step).rounded(.up)
        while index * step <= range.upperBound + step * 1e-9 {
            let value = index * step
            ticks.append(Tick(value: value, label: String(format: "%.\(decimals)f", value == 0 ? 0 : value)))
            index += 1
        }
        return ticks
    }

    /// Labelled ticks at 1, 2 and 5 times the powers of ten within `range` (`1k` for 1000), and unlabelled
    /// minor ticks at the other whole multiples.
    static func logarithmic(_ range: ClosedRange<Double>) -> (major: [Tick], minor: [Double]) {
        guard range.lowerBound > 0 else { return ([], []) }
        var major: [Tick] = []
        var minor: [Double] = []
        var decade = pow(10, log10(range.lowerBound).rounded(.down))
        while decade <= range.upperBound {
            for multiple in 1...9 {
                let value = Double(multiple) * decade
                guard range.contains(value) else { continue }
                if [1, 2, 5].contains(multiple) {
                    major.append(Tick(value: value, label: frequencyLabel(value)))
                } else {
                    minor.append(value)
                }
            }
            decade *= 10
        }
        return (major, minor)
    }

    /// 50, 500, 1k, 2.5k, 10k.
    static func frequencyLabel(_ hertz: Double) -> String {
        guard hertz >= 1000 else { return String(format: "%g", hertz) }
        return String(format: "%gk", hertz / 1000)
    }
}
