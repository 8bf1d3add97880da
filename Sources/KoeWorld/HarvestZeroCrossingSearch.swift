import KoeDSP

extension Harvest {
    /// Band-pass filters the decimated signal channel by channel and reads F0 from the spacing of four kinds
    /// of events (falling and rising zero crossings, peaks, dips), interpolated onto the 1 ms grid.
    final class ZeroCrossingSearch {
        private let sampleRate: Double
        private let length: Int
        private let frameTimes: [Double]
        private let f0Floor: Double
        private let f0Ceil: Double

        private let filters: [HarvestFilterBank.Filter]
        private let bandPass: BandPass
        private let inverseFFT: InverseRealFFT
        private var filtered: [Double]
        private let crossings: ZeroCrossings
        private var events: [EventIntervals]
        private var difference: [Double]
        /// The four kinds' rates on the frame grid, one kind after another.
        private let interpolated: UnsafeMutableBufferPointer<Double>
        /// The candidates of up to `groupWidth` consecutive channels, channel after channel, written into the
        /// frames x channels matrix together: one channel's column alone would touch a cache line a frame.
        private let columnGroup: UnsafeMutableBufferPointer<Double>
        private static let groupWidth = 8

        /// Buffers for searching the channels of `bandPass`, a signal of `length` samples at `sampleRate`.
        private init(
            bandPass: BandPass, length: Int, sampleRate: Double, frameTimes: [Double], f0Floor: Double, f0Ceil: Double
        ) {
            self.sampleRate = sampleRate
            self.length = length
            self.frameTimes = frameTimes
            self.f0Floor = f0Floor
            self.f0Ceil = f0Ceil
            filters = bandPass.filters
            self.bandPass = bandPass
            inverseFFT = InverseRealFFT(size: bandPass.fftSize)
            filtered = [Double](repeating: 0, count: length)
            crossings = ZeroCrossings(capacity: length)
            events = (0..<4).map { _ in EventIntervals(capacity: length) }
            difference = [Double](repeating: 0, count: length)
            interpolated = .allocate(capacity: 4 * frameTimes.count)
            interpolated.initialize(repeating: 0)
            columnGroup = .allocate(capacity: Self.groupWidth * frameTimes.count)
        }

        deinit {
            interpolated.deallocate()
            columnGroup.deallocate()
        }

        /// One F0 contour a channel, as columns of a frames x channels matrix; 0 where the channel has none.
        /// Channels are shared among up to `threads` threads, each with buffers of its own; the result is the
        /// same for any number.
        static func rawCandidates(
            _ signal: DecimatedSignal, filterBank: HarvestFilterBank, frameTimes: [Double], f0Floor: Double,
            f0Ceil: Double, threads: Int
        ) -> Matrix {
            let bandPass = BandPass(signal: signal, filterBank: filterBank)
            let (length, sampleRate) = (signal.samples.count, signal.sampleRate)
            let searches = WorkspacePool(shared: threads > 1) {
                ZeroCrossingSearch(
                    bandPass: bandPass, length: length, sampleRate: sampleRate, frameTimes: frameTimes,
                    f0Floor: f0Floor, f0Ceil: f0Ceil)
            }
            let channels = filterBank.filters.count
            var raw = Matrix.zeros(rows: frameTimes.count, columns: channels)
            raw.storage.withUnsafeMutableBufferPointer { raw in
                let groupCount = (channels + groupWidth - 1) / groupWidth
                Parallel.forEachRange(groupCount, threads: threads) { groups in
                    searches.withWorkspace { $0.search(channelGroups: groups, into: raw) }
                }
            }
            return raw
        }

        /// The columns of the channels in groups `groups` of `groupWidth`.
        private func search(channelGroups groups: Range<Int>, into raw: UnsafeMutableBufferPointer<Double>) {
            let frames = frameTimes.count
            let channels = filters.count
            let first = groups.lowerBound * Self.groupWidth
            let end = min(channels, groups.upperBound * Self.groupWidth)
            for firstChannel in stride(from: first, to: end, by: Self.groupWidth) {
                let width = min(Self.groupWidth, channels - firstChannel)
                for member in 0..<width {
                    let column = UnsafeMutableBufferPointer(rebasing: columnGroup[(member * frames)..<((member + 1) * frames)])
                    candidates(channel: firstChannel + member, into: column)
                }
                for frame in 0..<frames {
                    for member in 0..<width {
                        raw[frame * channels + firstChannel + member] = columnGroup[member * frames + frame]
                    }
                }
            }
        }

        /// One channel's candidate at every frame.
        private func candidates(channel: Int, into column: UnsafeMutableBufferPointer<Double>) {
            filtered.withUnsafeMutableBufferPointer {
                bandPass.filter(channel: channel, into: $0, inverseFFT: inverseFFT)
            }
            findEventIntervals()
            guard events.allSatisfy({ $0.count >= 3 }) else {
                column.update(repeating: 0)
                return
            }
            interpolateEvents()
            let band = filters[channel].centre
            for frame in 0..<column.count {
                column[frame] = candidate(frame: frame, band: band)
            }
        }

        /// Falling and rising crossings of the filtered signal, then peaks and dips as the falling and rising
        /// crossings of its first difference. (WORLD finds rising crossings as the falling crossings of the negated
        /// signal, and differences that; the crossings and their fractional positions come out the same.)
        private func findEventIntervals() {
            filtered.withUnsafeBufferPointer { signal in
                difference.withUnsafeMutableBufferPointer { difference in
                    crossings.find(in: signal)
                    for i in 0..<(length - 1) {
                        difference[i] = signal[i &+ 1] - signal[i]
                    }
                    let slope = UnsafeBufferPointer(rebasing: difference[0..<(length - 1)])
                    for kind in EventKind.allCases {
                        events[kind.rawValue].measure(
                            crossings: crossings[kind], in: kind.onSlope ? slope : signal, sampleRate: sampleRate)
                    }
                }
            }
        }

        private func interpolateEvents() {
            frameTimes.withUnsafeBufferPointer { times in
                for kind in 0..<4 {
                    let frames = times.count
                    events[kind].interpolate(
                        at: times, into: UnsafeMutableBufferPointer(rebasing: interpolated[(kind * frames)..<((kind + 1) * frames)]))
                }
            }
        }

        /// The four event estimates averaged, kept only near this channel's band and inside the search range.
        @inline(__always)
        private func candidate(frame: Int, band: Double) -> Double {
            let frames = frameTimes.count
            let f0 = (interpolated[frame] + interpolated[frames + frame] + interpolated[2 * frames + frame]
                + interpolated[3 * frames + frame]) / 4.0
            let outside = f0 > band * 1.1 || f0 < band * 0.9 || f0 > f0Ceil || f0 < f0Floor
            return outside ? 0 : f0
        }
    }

    /// Rates (Hz) and positions (s) of the intervals between successive events of one kind.
    private struct EventIntervals {
        var locations: [Double]
        var rates: [Double]
        var count = 0

        init(capacity: Int) {
            locations = [Double](repeating: 0, count: capacity)
            rates = [Double](repeating: 0, count: capacity)
        }

        /// Crossings (a crossing at `i` lies between samples `i` and `i + 1`) located to a fraction of a sample,
        /// at WORLD's one-based positions; each pair of neighbours gives one interval.
        mutating func measure(crossings: UnsafeBufferPointer<Int32>, in signal: UnsafeBufferPointer<Double>, sampleRate: Double) {
            var found = 0
            locations.withUnsafeMutableBufferPointer { locations in
                rates.withUnsafeMutableBufferPointer { rates in
                    var previousEdge = -1.0
                    for crossing in crossings {
                        let edge = Int(crossing) + 1
                        let fineEdge = Double(edge) - signal[edge - 1] / (signal[edge] - signal[edge - 1])
                        if previousEdge >= 0 {
                            rates[found] = sampleRate / (fineEdge - previousEdge)
                            locations[found] = (previousEdge + fineEdge) / 2.0 / sampleRate
                            found += 1
                        }
                        previousEdge = fineEdge
                    }
                }
            }
            count = found
        }

        func interpolate(at times: UnsafeBufferPointer<Double>, into output: UnsafeMutableBufferPointer<Double>) {
            locations.withUnsafeBufferPointer { x in
                rates.withUnsafeBufferPointer { y in
                    Matlab.interp1(
                        x: UnsafeBufferPointer(rebasing: x[0..<count]), y: UnsafeBufferPointer(rebasing: y[0..<count]),
                        at: times, into: output)
                }
            }
        }
    }

    /// Harvest's four kinds of event: a signal's falling and rising zero crossings, and its peaks and dips, which
    /// are the falling and rising zero crossings of its first difference (its slope).
    private enum EventKind: Int, CaseIterable {
        case falling, rising, peak, dip

        var onSlope: Bool { self == .peak || self == .dip }
    }

    /// Where a signal and its slope cross zero going down (`x[i] > 0 >= x[i + 1]`) and going up
    /// (`x[i] < 0 <= x[i + 1]`), by the index `i` before the crossing, each kind in its own list. Found in one
    /// pass, eight indices at a time: the four kinds' tests give one bit an index each, and only the set bits,
    /// the crossings, are visited.
    private final class ZeroCrossings {
        /// Room for one list of `capacity` indices a kind, kind after kind.
        private let indices: UnsafeMutableBufferPointer<Int32>
        private let capacity: Int
        private var counts = [0, 0, 0, 0]

        /// For signals of at most `capacity` samples.
        init(capacity: Int) {
            precondition(capacity < Int(Int32.max), "signal too long to index with 32 bits")
            self.capacity = capacity
            indices = .allocate(capacity: 4 * capacity)
        }

        deinit {
            indices.deallocate()
        }

        subscript(kind: EventKind) -> UnsafeBufferPointer<Int32> {
            let start = kind.rawValue * capacity
            return UnsafeBufferPointer(rebasing: indices[start..<(start + counts[kind.rawValue])])
        }

        /// The slope at `i` is `x[i + 1] - x[i]`, so its crossings need one sample more and stop one pair earlier.
        func find(in signal: UnsafeBufferPointer<Double>) {
            precondition(signal.count <= capacity)
            let falling = indices.baseAddress!
            let rising = falling + capacity
            let peaks = rising + capacity
            let dips = peaks + capacity
            var (fallingFound, risingFound, peaksFound, dipsFound) = (0, 0, 0, 0)
            let pairs = max(signal.count - 1, 0)
            // Indices whose sample, next sample and the one after are all in the signal.
            let both = max(pairs - 1, 0)
            var first = 0
            if let base = signal.baseAddress {
                while first + 8 <= both {
                    let events = VectorMath.crossingBits(base + first)
                    if events != 0 {
                        let index = Int32(truncatingIfNeeded: first)
                        Self.append(events & 0xFF, from: index, to: falling, at: &fallingFound)
                        Self.append(events >> 8 & 0xFF, from: index, to: rising, at: &risingFound)
                        Self.append(events >> 16 & 0xFF, from: index, to: peaks, at: &peaksFound)
                        Self.append(events >> 24, from: index, to: dips, at: &dipsFound)
                    }
                    first += 8
                }
            }
            // The signal and its slope side by side, compared together.
            var here = SIMD2(pairs > 0 ? signal[first] : 0, pairs > 0 ? signal[first + 1] - signal[first] : 0)
            // Every index is written at the next free place; only a crossing moves the place on.
            for i in first..<both {
                let nextSample = signal[i &+ 1]
                let next = SIMD2(nextSample, signal[i &+ 2] - nextSample)
                // A true lane of a mask is all ones: -1 as an integer.
                let down = unsafeBitCast((here .> 0) .& (next .<= 0), to: SIMD2<Int64>.self)
                let up = unsafeBitCast((here .< 0) .& (next .>= 0), to: SIMD2<Int64>.self)
                let index = Int32(truncatingIfNeeded: i)
                falling[fallingFound] = index
                rising[risingFound] = index
                peaks[peaksFound] = index
                dips[dipsFound] = index
                fallingFound &-= Int(down[0])
                risingFound &-= Int(up[0])
                peaksFound &-= Int(down[1])
                dipsFound &-= Int(up[1])
                here = next
            }
            if pairs > 0 {
                let (last, next) = (signal[pairs - 1], signal[pairs])
                falling[fallingFound] = Int32(truncatingIfNeeded: pairs - 1)
                rising[risingFound] = Int32(truncatingIfNeeded: pairs - 1)
                fallingFound &+= (last > 0 ? 1 : 0) & (next <= 0 ? 1 : 0)
                risingFound &+= (last < 0 ? 1 : 0) & (next >= 0 ? 1 : 0)
            }
            counts[0] = fallingFound
            counts[1] = risingFound
            counts[2] = peaksFound
            counts[3] = dipsFound
        }

        /// Writes `index` plus the position of each set bit of `events`, lowest first, from `found` on.
        @inline(__always)
        private static func append(
            _ events: Int, from index: Int32, to list: UnsafeMutablePointer<Int32>, at found: inout Int
        ) {
            var remaining = events
            while remaining != 0 {
                list[found] = index &+ Int32(truncatingIfNeeded: remaining.trailingZeroBitCount)
                found &+= 1
                remaining &= remaining &- 1
            }
        }
    }
}
