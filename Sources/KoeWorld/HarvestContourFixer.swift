extension Harvest {
    /// A voiced run of frames, both ends included.
    struct Section {
        var start: Int
        var end: Int
    }

    /// Voiced runs of `f0`; the first and last frames never count as voiced.
    static func voicedSections(_ f0: [Double]) -> [Section] {
        var sections: [Section] = []
        var start = 0
        var previousVoiced = false
        for i in stride(from: 1, to: f0.count, by: 1) {
            let voiced = i < f0.count - 1 && f0[i] > 0
            if voiced && !previousVoiced {
                start = i
            } else if !voiced && previousVoiced {
                sections.append(Section(start: start, end: i - 1))
            }
            previousVoiced = voiced
        }
        return sections
    }

    /// Picks the best-scoring candidate in each frame, then cleans the contour in four steps.
    struct ContourFixer {
        let candidates: Matrix
        let scores: Matrix

        private var frameCount: Int { candidates.rows }

        func bestContour() -> [Double] {
            let base = highestScoring()
            let withoutJumps = removingJumps(base, allowedRange: 0.008)
            let withoutShortSections = removingShortSections(withoutJumps, minimumLength: 6)
            let extended = extendingSections(withoutShortSections, allowedRange: 0.18)
            return bridgingShortGaps(extended, maximumGap: 9)
        }

        private func highestScoring() -> [Double] {
            let columns = candidates.columns
            return candidates.storage.withUnsafeBufferPointer { candidates in
                scores.storage.withUnsafeBufferPointer { scores in
                    (0..<frameCount).map { frame in
                        var best = 0.0
                        var bestScore = 0.0
                        for index in (frame * columns)..<((frame + 1) * columns) where scores[index] > bestScore {
                            best = candidates[index]
                            bestScore = scores[index]
                        }
                        return best
                    }
                }
            }
        }

        /// A frame is cleared when it departs by more than `allowedRange` both from the straight line through
        /// the two frames before it and from the frame just before it.
        private func removingJumps(_ f0: [Double], allowedRange: Double) -> [Double] {
            var result = [Double](repeating: 0, count: f0.count)
            for i in stride(from: 2, to: f0.count, by: 1) where f0[i] != 0.0 {
                let predicted = f0[i - 1] * 2 - f0[i - 2]
                let offLine = abs((f0[i] - predicted) / predicted) > allowedRange
                let offPrevious = abs(f0[i] - f0[i - 1]) / f0[i - 1] > allowedRange
                result[i] = offLine && offPrevious ? 0.0 : f0[i]
            }
            return result
        }

        private func removingShortSections(_ f0: [Double], minimumLength: Int) -> [Double] {
            var result = f0
            for section in voicedSections(f0) where section.end - section.start < minimumLength {
                for i in section.start...section.end {
                    result[i] = 0
                }
            }
            return result
        }

        /// Grows each voiced section outwards along matching candidates, keeps the long ones, and merges them
        /// into one contour, settling overlaps by candidate score.
        private func extendingSections(_ f0: [Double], allowedRange: Double) -> [Double] {
            var sections = voicedSections(f0)
            guard !sections.isEmpty else { return f0 }
            var tracks = Matrix.zeros(rows: sections.count, columns: frameCount)
            for (index, section) in sections.enumerated() {
                for i in section.start...section.end {
                    tracks[index, i] = f0[i]
                }
            }
            let reach = 100
            for index in sections.indices {
                let section = sections[index]
                sections[index].end = extend(
                    &tracks, row: index, from: section.end, to: min(frameCount - 2, section.end + reach), step: 1,
                    allowedRange: allowedRange)
                sections[index].start = extend(
                    &tracks, row: index, from: section.start, to: max(1, section.start - reach), step: -1,
                    allowedRange: allowedRange)
            }
            let kept = longEnoughSections(sections, tracks: tracks)
            guard !kept.isEmpty else { return f0 }
            return merged(kept.map { sections[$0] }, rows: kept, tracks: tracks)
        }

        /// Walks from `origin` towards `limit` (one frame past it), taking the candidate nearest the last
        /// accepted F0, until four frames in a row have none. Returns the last frame that got one.
        private func extend(
            _ tracks: inout Matrix, row: Int, from origin: Int, to limit: Int, step: Int, allowedRange: Double
        ) -> Int {
            let maximumMisses = 4
            var current = tracks[row, origin]
            var reached = origin
            var misses = 0
            candidates.storage.withUnsafeBufferPointer { all in
                let columns = candidates.columns
                for distance in 0...abs(limit - origin) {
                    let frame = origin + step * distance + step
                    let frameCandidates = UnsafeBufferPointer(rebasing: all[(frame * columns)..<((frame + 1) * columns)])
                    let found = nearestCandidate(to: current, in: frameCandidates, allowedRange: allowedRange).f0
                    tracks[row, frame] = found
                    if found == 0.0 {
                        misses += 1
                    } else {
                        current = found
                        misses = 0
                        reached = frame
                    }
                    if misses == maximumMisses { break }
                }
            }
            return reached
        }

        /// Sections longer than 2200 / (running mean F0) frames, in their original order. The running mean
        /// is WORLD's: it carries over from one section to the next rather than restarting.
        private func longEnoughSections(_ sections: [Section], tracks: Matrix) -> [Int] {
            let threshold = 2200.0
            var kept: [Int] = []
            var mean = 0.0
            for (index, section) in sections.enumerated() {
                for i in section.start..<section.end {
                    mean += tracks[index, i]
                }
                mean /= Double(section.end - section.start)
                if threshold / mean < Double(section.end - section.start) {
                    kept.append(index)
                }
            }
            return kept
        }

        /// Lays the sections over the first one in order of their starts (WORLD's partial insertion sort);
        /// a section starting after the current end is copied in, an overlapping one goes through `overlay`.
        private func merged(_ sections: [Section], rows: [Int], tracks: Matrix) -> [Double] {
            var sections = sections
            let order = startOrder(sections)
            var contour = tracks.row(rows[0])
            for i in stride(from: 1, to: sections.count, by: 1) {
                let next = order[i]
                let track = rows[next]
                if sections[next].start - sections[0].end > 0 {
                    for frame in sections[next].start...sections[next].end {
                        contour[frame] = tracks[track, frame]
                    }
                    sections[0] = sections[next]
                } else {
                    sections[0].end = overlay(&contour, current: sections[0], with: sections[next], track: track, tracks: tracks)
                }
            }
            return contour
        }

        private func startOrder(_ sections: [Section]) -> [Int] {
            var order = Array(sections.indices)
            for i in stride(from: 1, to: sections.count, by: 1) {
                for j in stride(from: i - 1, through: 0, by: -1) {
                    guard sections[order[j]].start > sections[order[i]].start else { break }
                    order.swapAt(i, j)
                }
            }
            return order
        }

        /// Where two sections overlap, the one whose F0 carries the higher total candidate score wins the overlap.
        private func overlay(_ contour: inout [Double], current: Section, with other: Section, track: Int, tracks: Matrix) -> Int {
            if current.start <= other.start && current.end >= other.end { return current.end }
            var currentScore = 0.0
            var otherScore = 0.0
            for frame in stride(from: other.start, through: current.end, by: 1) {
                currentScore += bestScore(of: contour[frame], frame: frame)
                otherScore += bestScore(of: tracks[track, frame], frame: frame)
            }
            let from = currentScore > otherScore ? current.end : other.start
            for frame in stride(from: from, through: other.end, by: 1) {
                contour[frame] = tracks[track, frame]
            }
            return other.end
        }

        /// The highest score among this frame's candidates equal to `f0`.
        private func bestScore(of f0: Double, frame: Int) -> Double {
            var best = 0.0
            for j in 0..<candidates.columns where f0 == candidates[frame, j] && best < scores[frame, j] {
                best = scores[frame, j]
            }
            return best
        }

        /// Unvoiced gaps shorter than `maximumGap` frames between two sections are filled by a straight line
        /// (from one above the F0 before the gap to one below the F0 after it).
        private func bridgingShortGaps(_ f0: [Double], maximumGap: Int) -> [Double] {
            var result = f0
            let sections = voicedSections(f0)
            for i in stride(from: 0, to: sections.count - 1, by: 1) {
                let before = sections[i].end
                let after = sections[i + 1].start
                let distance = after - before - 1
                if distance >= maximumGap { continue }
                let from = f0[before] + 1
                let to = f0[after] - 1
                let slope = (to - from) / (Double(distance) + 1.0)
                var step = 1
                for frame in stride(from: before + 1, through: after - 1, by: 1) {
                    result[frame] = from + slope * Double(step)
                    step += 1
                }
            }
            return result
        }
    }
}
