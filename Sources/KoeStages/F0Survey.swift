import KoeWorld

/// A first pass over a recording that finds the median F0 of its voiced frames, for the voice changes that
/// work around the median (`pitchRange`, `pitchMedian`) when the whole input can be read before converting.
///
/// The signal is taken in segments of about ten seconds, each analysed by DIO and StoneMask, so memory stays
/// bounded; the median is exact to a cent (`MedianTracker`).
package struct F0Survey {
    private let sampleRate: Int
    private let dio: Dio
    private let stoneMask: StoneMask
    private var pending: [Double] = []
    private var voiced = MedianTracker()
    private var hasVoice = false

    private static let segmentSeconds = 10

    /// Throws if DIO cannot analyse at this rate and F0 range.
    package init(sampleRate: Int, f0Floor: Double, f0Ceil: Double) throws(WorldError) {
        self.sampleRate = sampleRate
        var options = Dio.Options()
        options.f0Floor = f0Floor
        options.f0Ceil = f0Ceil
        dio = try Dio(sampleRate: sampleRate, options: options)
        stoneMask = try StoneMask(sampleRate: sampleRate)
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
        // A segment too short to analyse, or with samples that are not finite, adds nothing to the survey.
        guard let raw = try? dio.estimate(pending), let refined = try? stoneMask.refine(pending, contour: raw) else { return }
        for f0 in refined.f0 where f0 > 0 {
            voiced.add(f0)
            hasVoice = true
        }
    }
}
