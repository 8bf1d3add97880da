extension Dio {
    /// DIO's four passes over the best contour:
    /// 1. frames near either end, and frames whose F0 jumps by more than the allowed range, become unvoiced;
    /// 2. a frame stays voiced only if its whole neighbourhood of `voiceRangeMinimum` frames is voiced;
    /// 3. each voiced run continues forwards while some band offers a candidate close to the linear
    ///    extrapolation of its last two frames;
    /// 4. the same backwards from the start of each run, latest run first.
    ///
    /// Frames are settled in order. Given every frame's candidates and the frame count, `settle` settles all of
    /// them exactly as WORLD does. A stream instead settles one frame at a time from a window of frames after
    /// it: the earlier frames stay as they were settled, step 2 counts the frames past the window as voiced (so
    /// runs starting near its end count), and runs starting after the window cannot reach back into it (in
    /// WORLD they can, arbitrarily far).
    struct ContourRepair {
        let bands: Int
        let allowedRange: Double
        /// Shortest voiced run kept, in frames: about one period of the F0 floor on each side, odd.
        let voiceRangeMinimum: Int
        /// Frames of neighbourhood on either side in step 2.
        let halfRange: Int
        /// Settled frames the steps read behind the first unsettled one.
        private let history: Int

        /// Frames settled so far.
        private(set) var drainedCount = 0
        /// Per frame from `drainedCount - history` to the end of the window: the best candidate and the
        /// contour after steps 1, 2 and 3, and whether step 3 set the frame by extension.
        private var best: [Double]
        private var jumpFree: [Double]
        private var runsKept: [Double]
        private var extendedForward: [Double]
        private var extending: [Bool]
        private var candidates: UnsafeBufferPointer<Double> = UnsafeBufferPointer(start: nil, count: 0)
        private var onsets: [Int] = []
        /// The window's final contour, from its first frame.
        private var contour: [Double] = []

        init(bands: Int, options: Options) {
            self.bands = bands
            allowedRange = options.allowedRange
            voiceRangeMinimum = Int(0.5 + 1000.0 / options.framePeriod / options.f0Floor) * 2 + 1
            halfRange = (voiceRangeMinimum - 1) / 2
            history = max(halfRange, 2)
            best = [Double](repeating: 0, count: history)
            jumpFree = best
            runsKept = best
            extendedForward = best
            extending = [Bool](repeating: false, count: history)
        }

        /// Settles frames from `drainedCount` on, given `candidates` and `scores` (frame by frame, `bands`
        /// values each) of the frames from there to the end of the window. With `frameCount` the window reaches
        /// the last frame of the signal and every frame is settled; without, only the first.
        mutating func drain(
            candidates: UnsafeBufferPointer<Double>, scores: UnsafeBufferPointer<Double>, frameCount: Int?,
            into final: inout [Double]
        ) {
            let start = drainedCount
            let end = start + candidates.count / bands
            assert(frameCount.map { $0 == end } ?? (end > start), "the window must hold the frame to settle")
            self.candidates = candidates
            defer { self.candidates = UnsafeBufferPointer(start: nil, count: 0) }
            if let frameCount, frameCount <= voiceRangeMinimum {
                final.append(contentsOf: repeatElement(0, count: end - start))
                drainedCount = end
                return
            }
            resizeWindow(to: end - start)
            for frame in start..<end {
                best[slot(frame)] = bestCandidate(frame, scores: scores)
            }
            for frame in start..<end {
                jumpFree[slot(frame)] = removingJump(at: frame, frameCount: frameCount)
            }
            for frame in start..<end {
                runsKept[slot(frame)] = keepingLongRuns(at: frame, frameCount: frameCount, windowEnd: end)
                extendForward(at: frame)
            }
            let settled = frameCount == nil ? start + 1 : end
            extendBackward(from: start, to: end)
            final.append(contentsOf: contour[0..<(settled - start)])
            keepHistory(settling: settled - start)
            drainedCount = settled
        }

        // MARK: Window storage

        private func slot(_ frame: Int) -> Int {
            frame - drainedCount + history
        }

        /// Makes room for windows of up to `frames` frames.
        mutating func reserve(windowFrames frames: Int) {
            resizeWindow(to: frames)
            onsets.reserveCapacity(history + frames)
            contour.reserveCapacity(history + frames)
        }

        private mutating func resizeWindow(to frames: Int) {
            let size = history + frames
            if best.count < size {
                let more = size - best.count
                best.append(contentsOf: repeatElement(0, count: more))
                jumpFree.append(contentsOf: repeatElement(0, count: more))
                runsKept.append(contentsOf: repeatElement(0, count: more))
                extendedForward.append(contentsOf: repeatElement(0, count: more))
                extending.append(contentsOf: repeatElement(false, count: more))
            }
        }

        /// Moves the last `history` settled frames to the front, where the next window reads them.
        private mutating func keepHistory(settling count: Int) {
            for i in 0..<history {
                best[i] = best[i + count]
                jumpFree[i] = jumpFree[i + count]
                runsKept[i] = runsKept[i + count]
                extendedForward[i] = extendedForward[i + count]
                extending[i] = extending[i + count]
            }
        }

        // MARK: Steps

        /// Per frame, the candidate of the band with the lowest score (the first band on ties).
        private func bestCandidate(_ frame: Int, scores: UnsafeBufferPointer<Double>) -> Double {
            let row = (frame - drainedCount) * bands
            var bestScore = scores[row]
            var bestValue = candidates[row]
            for band in 1..<bands where bestScore > scores[row + band] {
                bestScore = scores[row + band]
                bestValue = candidates[row + band]
            }
            return bestValue
        }

        /// Step 1 input: the best contour with the margins at both ends unvoiced.
        private func base(_ frame: Int, frameCount: Int?) -> Double {
            if frame < voiceRangeMinimum { return 0 }
            if let frameCount, frame >= frameCount - voiceRangeMinimum { return 0 }
            return best[slot(frame)]
        }

        private func removingJump(at frame: Int, frameCount: Int?) -> Double {
            guard frame >= voiceRangeMinimum else { return 0 }
            let current = base(frame, frameCount: frameCount)
            let change = abs((current - base(frame - 1, frameCount: frameCount)) / (Dio.safeGuard + current))
            return change < allowedRange ? current : 0
        }

        private func keepingLongRuns(at frame: Int, frameCount: Int?, windowEnd: Int) -> Double {
            let value = jumpFree[slot(frame)]
            if frame < halfRange { return value }
            if let frameCount, frame >= frameCount - halfRange { return value }
            let lastKnown = min(frame + halfRange, windowEnd - 1)
            for neighbour in (frame - halfRange)...lastKnown where jumpFree[slot(neighbour)] == 0 {
                return 0
            }
            return value
        }

        /// Step 3 at one frame: a run that ended on the previous frame (or an extension still going) continues
        /// into this one if a candidate fits, and stops for good at the first frame where none does. In WORLD
        /// each extension stops at the end of the next run, where that run's own extension takes over.
        private mutating func extendForward(at frame: Int) {
            let index = slot(frame)
            guard frame >= 1 else {
                extendedForward[index] = runsKept[index]
                extending[index] = false
                return
            }
            let runEnded = runsKept[index - 1] != 0 && runsKept[index] == 0
            if runEnded || extending[index - 1] {
                let value = continuation(
                    current: extendedForward[index - 1], previous: extendedForward[index - 2], frame: frame)
                extendedForward[index] = value
                extending[index] = value != 0
            } else {
                extendedForward[index] = runsKept[index]
                extending[index] = false
            }
        }

        /// Step 4 over frames `start..<end`: every run starting inside them, latest first, extends backwards
        /// until a frame without a fitting candidate, the start of the previous run, or `start`.
        private mutating func extendBackward(from start: Int, to end: Int) {
            contour.removeAll(keepingCapacity: true)
            contour.append(contentsOf: extendedForward[slot(start)..<slot(end)])
            onsets.removeAll(keepingCapacity: true)
            let first = max(start, 1)
            if first < end - 1 {
                for frame in first..<(end - 1) where runsKept[slot(frame - 1)] == 0 && runsKept[slot(frame)] != 0 {
                    onsets.append(frame)
                }
            }
            for (k, onset) in onsets.enumerated().reversed() {
                let limit = k == 0 ? first : onsets[k - 1]
                var frame = onset
                while frame > limit {
                    let value = continuation(
                        current: contour[frame - start], previous: contour[frame + 1 - start], frame: frame - 1)
                    contour[frame - 1 - start] = value
                    if value == 0 { break }
                    frame -= 1
                }
            }
        }

        /// The candidate at `frame` nearest the extrapolation from `previous` through `current`,
        /// or 0 when even that one is further away than the allowed range.
        private func continuation(current: Double, previous: Double, frame: Int) -> Double {
            let reference = (current * 3.0 - previous) / 2.0
            let row = (frame - drainedCount) * bands
            var nearest = candidates[row]
            var smallestError = abs(reference - nearest)
            for band in 1..<bands {
                let error = abs(reference - candidates[row + band])
                if error < smallestError {
                    smallestError = error
                    nearest = candidates[row + band]
                }
            }
            return abs(1.0 - nearest / reference) > allowedRange ? 0 : nearest
        }
    }
}
