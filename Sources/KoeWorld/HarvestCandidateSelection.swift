extension Harvest {
    /// Per frame, the mean F0 of each run of at least ten neighbouring channels that all found one
    /// (the outermost channels never count as voiced). Returns frames x candidates, zero-padded.
    static func officialCandidates(_ raw: Matrix, limit: Int) -> Matrix {
        let (frames, channels) = (raw.rows, raw.columns)
        let columns = max(limit, 0)
        var perFrame = Matrix.zeros(rows: frames, columns: columns)
        var widest = 0
        raw.storage.withUnsafeBufferPointer { raw in
            perFrame.storage.withUnsafeMutableBufferPointer { perFrame in
                for frame in 0..<frames {
                    let row = frame * channels
                    var found = 0
                    var runStart = 0
                    var previousVoiced = false
                    for channel in 1..<channels {
                        let voiced = channel < channels - 1 && raw[row + channel] > 0
                        if voiced && !previousVoiced {
                            runStart = channel
                        } else if !voiced && previousVoiced && channel - runStart >= Tuning.minimumChannelRun && found < limit {
                            var sum = 0.0
                            for run in runStart..<channel {
                                sum += raw[row + run]
                            }
                            perFrame[frame * columns + found] = sum / Double(channel - runStart)
                            found += 1
                        }
                        previousVoiced = voiced
                    }
                    widest = max(widest, found)
                }
            }
        }
        var narrowed = Matrix.zeros(rows: raw.rows, columns: widest)
        for frame in 0..<raw.rows {
            for column in 0..<widest {
                narrowed[frame, column] = perFrame[frame, column]
            }
        }
        return narrowed
    }

    /// Each frame also receives the candidates of the three frames before and after it:
    /// columns `[own | 1, 2, 3 frames back | 1, 2, 3 frames ahead]`, zero where there is no such frame.
    static func spreadToNeighbours(_ own: Matrix) -> Matrix {
        let frames = own.rows
        let count = own.columns
        let spread = Tuning.spreadFrames
        let columns = count * (2 * spread + 1)
        var all = Matrix.zeros(rows: frames, columns: columns)
        own.storage.withUnsafeBufferPointer { own in
            all.storage.withUnsafeMutableBufferPointer { all in
                for frame in 0..<frames {
                    for j in 0..<count {
                        all[frame * columns + j] = own[frame * count + j]
                    }
                }
                for shift in 1...spread {
                    for j in 0..<count {
                        for frame in stride(from: shift, to: frames, by: 1) {
                            all[frame * columns + j + count * shift] = own[(frame - shift) * count + j]
                        }
                        for frame in stride(from: 0, to: frames - shift, by: 1) {
                            all[frame * columns + j + count * (shift + spread)] = own[(frame + shift) * count + j]
                        }
                    }
                }
            }
        }
        return all
    }

    /// The candidate nearest `reference` within `allowedRange` (relative), and its relative error;
    /// (0, allowedRange) when none is that close. Later candidates win ties.
    static func nearestCandidate(to reference: Double, in row: UnsafeBufferPointer<Double>, allowedRange: Double) -> (f0: Double, error: Double) {
        var best = 0.0
        var bestError = allowedRange
        for candidate in row {
            let error = abs(reference - candidate) / reference
            if error > bestError { continue }
            best = candidate
            bestError = error
        }
        return (best, bestError)
    }

    /// A candidate with nothing within 5 % in either neighbouring frame is dropped (F0 and score set to 0).
    static func removeUnreliableCandidates(_ candidates: inout Matrix, scores: inout Matrix) {
        let original = candidates
        let frames = candidates.rows
        let count = candidates.columns
        original.storage.withUnsafeBufferPointer { all in
            func row(_ frame: Int) -> UnsafeBufferPointer<Double> {
                UnsafeBufferPointer(rebasing: all[(frame * count)..<((frame + 1) * count)])
            }
            for frame in stride(from: 1, to: frames - 1, by: 1) {
                for j in 0..<count {
                    let reference = all[frame * count + j]
                    if reference == 0 { continue }
                    if hasCandidate(near: reference, in: row(frame + 1)) || hasCandidate(near: reference, in: row(frame - 1)) {
                        continue
                    }
                    candidates[frame, j] = 0
                    scores[frame, j] = 0
                }
            }
        }
    }

    /// Whether some candidate lies within 5 % of `reference` (relative): WORLD takes the nearest candidate's
    /// error and compares it with 5 %, which comes to the same.
    @inline(__always)
    private static func hasCandidate(near reference: Double, in row: UnsafeBufferPointer<Double>) -> Bool {
        let threshold = 0.05
        for candidate in row where candidate != 0 && abs(reference - candidate) / reference <= threshold {
            return true
        }
        return false
    }
}
