import KoeWorld

/// A first pass over a recording that finds the median F0 of its voiced frames, for the voice changes that
/// work around the median (`pitchRange`, `targetMedian`) when the whole input can be read before converting.
///
/// The signal is taken in segments of about ten seconds, each analysed by DIO and StoneMask, so memory stays
/// bounded; the median is exact to a cent (`MedianTracker`).
package struct F0Survey {
    private let sampleRate: Int
    private let options: Dio.Options
    private var pending: [Double] = []
    private var voiced = MedianTracker()
    private var hasVoice = false

    private static let segmentSeconds = 10

    package init(sampleRate: Int, f0Floor: Double, f0Ceil: Double) {
        self.sampleRate = sampleRate
        var options = Dio.Options()
        options.f0Floor = f0Floor
        options.f0Ceil = f0Ceil
        self.options = options
    }

    package mutating func add(_ samples: [Double]) {
        pending.append(contentsOf: samples)
        if pending.count >= F0Survey.segmentSeconds * sampleRate {
            surveyPending()
        }
    }

    /// The median F0 of every voiced frame, in Hz; nil when no frame was voiced.
    package mutating func finish() -> Double? {
        surveyPending()
        return hasVoice ? voiced.value : nil
    }

    private mutating func surveyPending() {
        defer { pending.removeAll(keepingCapacity: true) }
        let minimum = SignalRequirements.minimumLength(sampleRate: sampleRate, f0Floor: options.f0Floor)
        guard pending.count >= minimum, pending.allSatisfy(\.isFinite) else { return }
        let raw = Dio(sampleRate: sampleRate, options: options).estimate(pending)
        for f0 in StoneMask(sampleRate: sampleRate).refine(pending, contour: raw).f0 where f0 > 0 {
            voiced.add(f0)
            hasVoice = true
        }
    }
}
