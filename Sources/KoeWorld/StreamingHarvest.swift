/// Harvest on a signal that arrives in pieces, on Harvest's own 1 ms grid counted from the stream's first sample.
///
/// Harvest works in two parts. A frame's candidates (the channels' F0 from zero-crossing intervals, refined
/// and scored) depend only on the signal within `Harvest.candidateReach` of it; the contour chosen from them
/// (fixing and smoothing) depends on candidates hundreds of milliseconds away. So each frame's candidates are
/// computed once, from a segment reaching that far on both sides, and kept; contours are then chosen over any
/// window of kept frames, as often as blocks ask.
///
/// The last frames of each segment, within the reach of its end, see a signal that stops there; they are kept
/// as provisional, for contours reaching that far, and computed again, final, with the next segment.
final class StreamingHarvest {
    private let harvest: Harvest
    /// Threads each segment's candidates are computed on; the candidates are the same for any number.
    private let threads: Int
    private let sampleRate: Int
    /// Frames on each side of a new frame that its segment also covers.
    private let margin: Int
    /// Decimation keeps every `factor`-th sample, counted back from a segment's last. Segments start on a
    /// multiple of `factor` and, until the stream's end, end one sample past one: every segment then keeps the same
    /// samples. They start on frames `frameStep` apart, which fall on such samples.
    private let factor: Int
    private let frameStep: Int
    /// Candidates kept: rows for frames `firstKept ..< firstKept + rows`, each of `columns` values, candidates
    /// grouped as `Harvest.candidates` groups them (its own, then the neighbours'), zero-padded per group.
    private var f0: [Double] = []
    private var scores: [Double] = []
    private let columns: Int
    private let groupWidth: Int
    private var firstKept = 0
    /// Groups of candidates a frame has: its own, then those of the frames each side it takes them from.
    private static let groups = 2 * Harvest.Tuning.spreadFrames + 1
    private var rows: Int { f0.count / columns }
    /// Frames before this one are final.
    private(set) var finalEnd = 0

    init(harvest: Harvest, threads: Int = 1) {
        self.harvest = harvest
        self.threads = threads
        sampleRate = harvest.sampleRate
        margin = harvest.candidateReach
        factor = Harvest.DecimatedSignal.factor(from: harvest.sampleRate)
        frameStep = 1000 * factor / Self.greatestCommonDivisor(sampleRate, 1000 * factor)
        groupWidth = harvest.candidatesPerFrame
        columns = groupWidth * Self.groups
    }

    /// The first sample a later call to `computeCandidates` may read.
    var firstSampleNeeded: Int { sample(atFrame: segmentFirstFrame(forNewFrame: finalEnd)) }

    /// Computes the candidates of frames `finalEnd ..< end` from `samples` (the stream's samples from
    /// `samplesStart`, at least through `sampleEnd`); the last `margin` of them stay provisional unless the
    /// stream ends at `sampleEnd` (`isEnd`).
    func computeCandidates(through end: Int, samples: UnsafeBufferPointer<Double>, samplesStart: Int, sampleEnd: Int, isEnd: Bool) {
        guard end > finalEnd else { return }
        let firstFrame = segmentFirstFrame(forNewFrame: finalEnd)
        let start = sample(atFrame: firstFrame)
        let segmentEnd = isEnd ? sampleEnd : start + (sampleEnd - 1 - start) / factor * factor + 1
        let segment = Array(samples[(start - samplesStart)..<(segmentEnd - samplesStart)])
        // The frames before the new ones only lend their signal, but for the few whose candidates spread to a new
        // frame's neighbour, against which it is checked.
        let firstComputed = max(firstFrame, finalEnd - Harvest.Tuning.spreadFrames - 1)
        let times = (firstComputed..<end).map { Double($0 - firstFrame) / 1000.0 }
        let found = harvest.candidates(segment, frameTimes: times, threads: threads)
        keep(found, frames: firstComputed..<end)
        finalEnd = isEnd ? end : max(finalEnd, end - margin)
    }

    /// The 1 ms frame that gives frame `frame` of `harvest.options.framePeriod`.
    func basicFrame(of frame: Int) -> Int { harvest.basicFrame(of: frame) }

    /// Harvest's smoothed contour over frames `window`, whose candidates are computed.
    func contour(_ window: Range<Int>) -> [Double] {
        harvest.contour(candidates(window))
    }

    /// The candidates kept for frames `window`.
    func candidates(_ window: Range<Int>) -> Harvest.CandidateSet {
        precondition(window.lowerBound >= firstKept && window.upperBound <= firstKept + rows, "candidates of frames not kept")
        let values = (window.lowerBound - firstKept) * columns..<(window.upperBound - firstKept) * columns
        var set = Harvest.CandidateSet(
            f0: .zeros(rows: window.count, columns: columns), scores: .zeros(rows: window.count, columns: columns))
        set.f0.storage = Array(f0[values])
        set.scores.storage = Array(scores[values])
        return set
    }

    /// Frames before `frame` are no longer needed; provisional ones are kept until computed again.
    func discard(before frame: Int) {
        let drop = min(rows, min(frame, finalEnd) - firstKept)
        guard drop > 0 else { return }
        f0.removeFirst(drop * columns)
        scores.removeFirst(drop * columns)
        firstKept += drop
    }

    /// The frame a segment starts at whose first new frame is `frame`: at least `margin` frames before it.
    private func segmentFirstFrame(forNewFrame frame: Int) -> Int {
        max(0, frame - margin) / frameStep * frameStep
    }

    /// The sample at frame `frame`'s time, for the frames segments start at: a whole one.
    private func sample(atFrame frame: Int) -> Int {
        frame * sampleRate / 1000
    }

    private static func greatestCommonDivisor(_ a: Int, _ b: Int) -> Int {
        b == 0 ? a : greatestCommonDivisor(b, a % b)
    }

    /// Stores the rows of frames from `finalEnd` on, replacing provisional ones, each group widened to `groupWidth`.
    private func keep(_ found: Harvest.CandidateSet, frames: Range<Int>) {
        let kept = (finalEnd - firstKept) * columns
        let rows = (finalEnd - frames.lowerBound)..<(frames.upperBound - frames.lowerBound)
        widen(found.f0, rows: rows, after: kept, into: &f0)
        widen(found.scores, rows: rows, after: kept, into: &scores)
    }

    /// `kept` values of `stored` followed by `rows` of `found`, each group of them padded with zeros to `groupWidth`.
    private func widen(_ found: Matrix, rows: Range<Int>, after kept: Int, into stored: inout [Double]) {
        stored.removeSubrange(kept...)
        // An array of zeros appends at memory speed; a `repeatElement` would be appended element by element.
        stored.append(contentsOf: [Double](repeating: 0, count: rows.count * columns))
        let width = found.columns / Self.groups
        found.storage.withUnsafeBufferPointer { source in
            stored.withUnsafeMutableBufferPointer { target in
                for (index, row) in rows.enumerated() {
                    for group in 0..<Self.groups {
                        let from = row * found.columns + group * width
                        let to = kept + index * columns + group * groupWidth
                        _ = UnsafeMutableBufferPointer(rebasing: target[to..<(to + width)])
                            .update(fromContentsOf: source[from..<(from + width)])
                    }
                }
            }
        }
    }
}
