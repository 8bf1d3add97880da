import KoeDSP

extension Dio {
    /// Intervals between successive events of one kind, each as a frequency at its midpoint in time,
    /// gathered as the filtered signal arrives. Intervals no later frame needs can be dropped.
    struct EventSeries {
        private var locations: [Double] = []
        private var frequencies: [Double] = []
        /// Index of the filtered sample whose arrival revealed each interval (non-decreasing).
        private var revealedAt: [Int] = []
        /// Intervals dropped from the front; the indices used outside are absolute.
        private var dropped = 0
        private var lastEdge = 0.0
        private var hasEdge = false

        /// Intervals seen so far.
        var count: Int { dropped + locations.count }

        /// Intervals held in memory.
        var heldCount: Int { locations.count }

        mutating func addEdge(_ edge: Double, revealedAt index: Int, rate: Double) {
            if hasEdge {
                frequencies.append(rate / (edge - lastEdge))
                locations.append((lastEdge + edge) / 2.0 / rate)
                revealedAt.append(index)
            }
            lastEdge = edge
            hasEdge = true
        }

        /// How many intervals filtered samples up to `horizon` revealed.
        func count(revealedBy horizon: Int) -> Int {
            var low = 0
            var high = revealedAt.count
            while low < high {
                let middle = (low + high) / 2
                if revealedAt[middle] <= horizon {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            return dropped + low
        }

        /// The frequencies of the first `available` intervals linearly interpolated at `time` as WORLD's
        /// `interp1` does: from the first interval after `time` and the one before it, extrapolating from the
        /// first or last two. Like WORLD, nil (no candidate) unless there are three intervals.
        ///
        /// `openUntil` (live mode): the signal is known up to there, in samples, and every interval seen is
        /// available; then a time past the last interval takes its frequency instead of the extrapolation, unless
        /// the interval still open, from the last edge to `openUntil`, is already longer: then that interval's
        /// frequency, an upper bound, is what later times take, as whole-signal DIO's long interval across a gap
        /// gives them a frequency below any band's.
        /// `cursor` is where the search starts; it moves to where the next, later time's search can start.
        func value(at time: Double, available: Int, openUntil: Double?, rate: Double, cursor: inout Int) -> Double? {
            guard available > 2 else { return nil }
            var segment = max(cursor, 1)
            while segment < available - 1 && locations[segment - dropped] <= time {
                segment += 1
            }
            cursor = segment
            let previous = segment - 1 - dropped
            let position = (time - locations[previous]) / (locations[previous + 1] - locations[previous])
            guard let openUntil, position > 1 else {
                return frequencies[previous] + position * (frequencies[previous + 1] - frequencies[previous])
            }
            let last = previous + 1
            let open = openUntil - lastEdge
            guard open * frequencies[last] > rate else { return frequencies[last] }
            let openLocation = (lastEdge + openUntil) / 2.0 / rate
            let openFrequency = rate / open
            guard time < openLocation else { return openFrequency }
            let openPosition = (time - locations[last]) / (openLocation - locations[last])
            return frequencies[last] + openPosition * (openFrequency - frequencies[last])
        }

        /// Becomes `other` from interval `position - 1` on (absolute indices stay `other`'s): what a time at or
        /// after a cursor at `position` can use. Reuses its storage.
        mutating func copyTail(of other: EventSeries, from position: Int) {
            let start = min(max(position - 1, other.dropped), other.count) - other.dropped
            locations.removeAll(keepingCapacity: true)
            frequencies.removeAll(keepingCapacity: true)
            revealedAt.removeAll(keepingCapacity: true)
            locations.append(contentsOf: other.locations[start...])
            frequencies.append(contentsOf: other.frequencies[start...])
            revealedAt.append(contentsOf: other.revealedAt[start...])
            dropped = other.dropped + start
            lastEdge = other.lastEdge
            hasEdge = other.hasEdge
        }

        /// Intervals `dropIntervals` leaves in memory at most besides those a cursor can still use.
        static let dropBatch = 256

        /// Makes room for `intervals` held at once: adding intervals then allocates nothing while no more are held.
        mutating func reserveCapacity(_ intervals: Int) {
            locations.reserveCapacity(intervals)
            frequencies.reserveCapacity(intervals)
            revealedAt.reserveCapacity(intervals)
        }

        /// Forgets the intervals before `cursor`'s segment, which no time at or after the cursor's can use, once
        /// there are `dropBatch` of them.
        mutating func dropIntervals(before cursor: Int) {
            let removable = min(cursor - 1, count - 2) - dropped
            guard removable >= Self.dropBatch else { return }
            locations.removeFirst(removable)
            frequencies.removeFirst(removable)
            revealedAt.removeFirst(removable)
            dropped += removable
        }
    }

    /// Where each of a band's four event searches stands.
    struct EventCursor {
        var positions = (1, 1, 1, 1)
    }

    /// The four event series of one band, fed one filtered sample at a time: falling and rising zero
    /// crossings, then those of the negated first difference (WORLD's peaks) and of the difference (dips).
    /// Each crossing is located to a fraction of a sample by linear interpolation, with WORLD's arithmetic.
    struct BandEvents {
        let rate: Double
        private var falling = EventSeries()
        private var rising = EventSeries()
        private var peaks = EventSeries()
        private var dips = EventSeries()
        private var previous = 0.0
        private var previousDifference = 0.0
        private var index = 0

        init(rate: Double) {
            self.rate = rate
        }

        /// Appends each sample less `offset`. The latest samples are held in locals, not in the events, through
        /// the loop. Eight samples at a time, the four kinds' tests come as bits (`VectorMath.eventBits`) and
        /// only the events are visited; the few samples before and after go one by one.
        mutating func append(contentsOf samples: UnsafeBufferPointer<Double>, less offset: Double = 0) {
            guard let base = samples.baseAddress else { return }
            var previous = self.previous
            var previousDifference = self.previousDifference
            var index = self.index
            var position = 0
            while position < samples.count {
                if index >= 2, position >= 2, samples.count - position >= 8 {
                    let events = VectorMath.eventBits(endingAt: base + position, less: offset)
                    if events != 0 {
                        addEdges(events, at: base + position, index: index, less: offset)
                    }
                    previous = base[position + 7] - offset
                    previousDifference = -(base[position + 6] - offset) - -previous
                    index += 8
                    position += 8
                    continue
                }
                let sample = base[position] - offset
                if index >= 1 {
                    let a = previous
                    let b = sample
                    if 0.0 < a && b <= 0.0 {
                        falling.addEdge(Double(index) - a / (b - a), revealedAt: index, rate: rate)
                    }
                    let negatedA = -a
                    let negatedB = -b
                    if 0.0 < negatedA && negatedB <= 0.0 {
                        rising.addEdge(Double(index) - negatedA / (negatedB - negatedA), revealedAt: index, rate: rate)
                    }
                    let difference = negatedA - negatedB
                    if index >= 2 {
                        let c = previousDifference
                        let d = difference
                        if 0.0 < c && d <= 0.0 {
                            peaks.addEdge(Double(index - 1) - c / (d - c), revealedAt: index, rate: rate)
                        }
                        let negatedC = -c
                        let negatedD = -d
                        if 0.0 < negatedC && negatedD <= 0.0 {
                            dips.addEdge(
                                Double(index - 1) - negatedC / (negatedD - negatedC), revealedAt: index, rate: rate)
                        }
                    }
                    previousDifference = difference
                }
                previous = sample
                index += 1
                position += 1
            }
            self.previous = previous
            self.previousDifference = previousDifference
            self.index = index
        }

        /// The events `events` (`VectorMath.eventBits`) marks among the eight samples from `first`, sample
        /// `index` onwards, located as `append`'s one-by-one tests locate them.
        private mutating func addEdges(_ events: Int, at first: UnsafePointer<Double>, index: Int, less offset: Double) {
            var bits = events & 0xFF
            while bits != 0 {
                let lane = bits.trailingZeroBitCount
                bits &= bits - 1
                let (a, b) = (first[lane - 1] - offset, first[lane] - offset)
                falling.addEdge(Double(index + lane) - a / (b - a), revealedAt: index + lane, rate: rate)
            }
            bits = events >> 8 & 0xFF
            while bits != 0 {
                let lane = bits.trailingZeroBitCount
                bits &= bits - 1
                let (negatedA, negatedB) = (-(first[lane - 1] - offset), -(first[lane] - offset))
                rising.addEdge(
                    Double(index + lane) - negatedA / (negatedB - negatedA), revealedAt: index + lane, rate: rate)
            }
            bits = events >> 16 & 0xFF
            while bits != 0 {
                let lane = bits.trailingZeroBitCount
                bits &= bits - 1
                let (c, d) = differences(endingAt: first + lane, less: offset)
                peaks.addEdge(Double(index + lane - 1) - c / (d - c), revealedAt: index + lane, rate: rate)
            }
            bits = events >> 24 & 0xFF
            while bits != 0 {
                let lane = bits.trailingZeroBitCount
                bits &= bits - 1
                let (c, d) = differences(endingAt: first + lane, less: offset)
                let (negatedC, negatedD) = (-c, -d)
                dips.addEdge(
                    Double(index + lane - 1) - negatedC / (negatedD - negatedC), revealedAt: index + lane, rate: rate)
            }
        }

        /// `append`'s differences ending at the sample before `sample` and at `sample`, with its arithmetic.
        @inline(__always)
        private func differences(endingAt sample: UnsafePointer<Double>, less offset: Double) -> (Double, Double) {
            let (twoBefore, before, current) = (sample[-2] - offset, sample[-1] - offset, sample[0] - offset)
            return (-twoBefore - -before, -before - -current)
        }

        /// The events seen so far, or those revealed by filtered sample `horizon`: a band as whole-signal DIO
        /// would see it if the signal ended there.
        func snapshot(revealedBy horizon: Int? = nil) -> EventSnapshot {
            guard let horizon else {
                return EventSnapshot(available: (falling.count, rising.count, peaks.count, dips.count))
            }
            return EventSnapshot(available: (
                falling.count(revealedBy: horizon), rising.count(revealedBy: horizon),
                peaks.count(revealedBy: horizon), dips.count(revealedBy: horizon)))
        }

        /// The four event frequencies at `time` from the intervals in `snapshot`, or nil if a kind has too few;
        /// with `holdingLast` (live mode), past a kind's last interval, its frequency or the open interval's (see
        /// `EventSeries.value`).
        func eventFrequencies(
            at time: Double, in snapshot: EventSnapshot, holdingLast: Bool = false, cursor: inout EventCursor
        ) -> (Double, Double, Double, Double)? {
            let available = snapshot.available
            // The next zero crossing lies past the last sample, the next extremum past the one before.
            let crossingsUntil = holdingLast ? Double(index - 1) : nil
            let extremaUntil = holdingLast ? Double(index - 2) : nil
            guard let a = falling.value(at: time, available: available.0, openUntil: crossingsUntil, rate: rate, cursor: &cursor.positions.0),
                  let b = rising.value(at: time, available: available.1, openUntil: crossingsUntil, rate: rate, cursor: &cursor.positions.1),
                  let c = peaks.value(at: time, available: available.2, openUntil: extremaUntil, rate: rate, cursor: &cursor.positions.2),
                  let d = dips.value(at: time, available: available.3, openUntil: extremaUntil, rate: rate, cursor: &cursor.positions.3)
            else { return nil }
            return (a, b, c, d)
        }

        /// Filtered samples appended so far.
        var sampleCount: Int { index }

        /// The last filtered sample appended (0 before the first).
        var lastSample: Double { previous }

        /// Intervals seen so far, per kind.
        var counts: (Int, Int, Int, Int) { (falling.count, rising.count, peaks.count, dips.count) }

        /// Becomes `other` as far as times at or after `cursor`'s can tell, to be continued with other samples
        /// than `other`'s; reuses its storage.
        mutating func copy(_ other: BandEvents, from cursor: EventCursor) {
            falling.copyTail(of: other.falling, from: cursor.positions.0)
            rising.copyTail(of: other.rising, from: cursor.positions.1)
            peaks.copyTail(of: other.peaks, from: cursor.positions.2)
            dips.copyTail(of: other.dips, from: cursor.positions.3)
            previous = other.previous
            previousDifference = other.previousDifference
            index = other.index
        }

        /// Intervals held in memory, all kinds together.
        var heldIntervalCount: Int { falling.heldCount + rising.heldCount + peaks.heldCount + dips.heldCount }

        /// Makes room for `intervals` held at once of each kind.
        mutating func reserveCapacity(_ intervals: Int) {
            falling.reserveCapacity(intervals)
            rising.reserveCapacity(intervals)
            peaks.reserveCapacity(intervals)
            dips.reserveCapacity(intervals)
        }

        mutating func dropIntervals(before cursor: EventCursor) {
            falling.dropIntervals(before: cursor.positions.0)
            rising.dropIntervals(before: cursor.positions.1)
            peaks.dropIntervals(before: cursor.positions.2)
            dips.dropIntervals(before: cursor.positions.3)
        }
    }

    /// How many intervals of each kind a band offers (see `BandEvents.snapshot`).
    struct EventSnapshot {
        let available: (Int, Int, Int, Int)
    }
}
