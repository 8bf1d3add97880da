/// A pitch ratio that changes over time, as Rubber Band's pitch maps and RVC's F0 curves give it: points of
/// (input time in seconds, ratio), linear between points and held past the first and the last.
///
/// The ratio multiplies F0 on top of `VoiceSettings.pitch`. Times are input times, so a curve drawn over
/// a recording stays on it whatever the tempo.
public struct PitchCurve: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        /// Seconds from the start of the input.
        public var time: Double
        /// F0 multiplier at that time, within `Setting.pitch.range`.
        public var ratio: Double

        public init(time: Double, ratio: Double) {
            self.time = time
            self.ratio = ratio
        }
    }

    /// At least one point, times strictly increasing.
    public let points: [Point]

    /// Throws for no points, a time or ratio that is not finite, times that do not increase, or a ratio outside
    /// `Setting.pitch.range`; the message names the point (counted from 1).
    public init(points: [Point]) throws(KoeError) {
        if let problem = Self.firstProblem(in: points) {
            throw KoeError.invalidArgument(problem.index.map { "pitch curve point \($0 + 1): \(problem.reason)" } ?? problem.reason)
        }
        self.points = points
    }

    /// What is wrong with a list of points, and at which index; nil when they make a curve. File readers use
    /// it to name the line instead.
    package static func firstProblem(in points: [Point]) -> (index: Int?, reason: String)? {
        guard !points.isEmpty else { return (nil, "a pitch curve needs at least one point") }
        let ratios = Setting.pitch.range!
        for (index, point) in points.enumerated() {
            guard point.time.isFinite else { return (index, "time \(point.time) is not a finite number") }
            guard point.ratio.isFinite else { return (index, "ratio \(point.ratio) is not a finite number") }
            guard point.ratio > 0 else { return (index, "ratio \(point.ratio) is not positive") }
            guard ratios.contains(point.ratio) else {
                return (index, "ratio \(point.ratio) is outside \(ratios.lowerBound) to \(ratios.upperBound)")
            }
            if index > 0, point.time <= points[index - 1].time {
                return (index, "time \(point.time) s does not come after the previous point's \(points[index - 1].time) s")
            }
        }
        return nil
    }

    /// The ratio at `time` seconds: linear between the points around it, the end points' ratio beyond them.
    package func ratio(at time: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 1 }
        if time <= first.time { return first.ratio }
        if time >= last.time { return last.ratio }
        // The first point after `time`, by bisection: a frame's lookup costs log(points), whatever the curve.
        var low = 0
        var high = points.count - 1
        while high - low > 1 {
            let middle = (low + high) / 2
            if points[middle].time <= time { low = middle } else { high = middle }
        }
        let before = points[low]
        let after = points[high]
        let weight = (time - before.time) / (after.time - before.time)
        return before.ratio + weight * (after.ratio - before.ratio)
    }
}
