extension Dio {
    /// Live mode: the latest input samples, and how periodic they are around a frame at a given F0.
    ///
    /// The measure is the normalised cross-correlation of a window with itself one period later (RAPT's NCCF),
    /// the two centred on the frame, at its best over lags within `lagRange` of the period: a DIO candidate may be
    /// off by as much as DIO's allowed range. The window is a period long, and no shorter than `shortestWindow`,
    /// so a deep voice is judged on one whole period and a high one on several. Sums run over every `step`-th
    /// sample, a grid of 8 to 16 kHz at any rate (speech's periodicity is in its lower harmonics), and the best
    /// lag of that grid is then refined to the sample: the cost stays small, and about the same at every rate.
    struct Periodicity {
        let rate: Double
        let step: Int
        /// Samples before a frame's centre that `correlation` may read, at the F0 floor.
        let reach: Int
        /// Absolute index of `samples[0]`.
        private var start = 0
        private var samples: [Double] = []

        static let lagRange = 0.1
        static let shortestWindow = 0.01

        init(rate: Double, f0Floor: Double) {
            self.rate = rate
            step = max(1, Int(rate / 8000))
            let longestLag = rate / f0Floor / (1 - Self.lagRange)
            // The window may be pushed back until its later copy ends at the input's end (a short look-ahead).
            reach = 2 * Int((max(rate / f0Floor, Self.shortestWindow * rate) + longestLag).rounded(.up)) + 2
        }

        /// The sample after the last one held.
        var end: Int { start + samples.count }

        mutating func reserveCapacity(_ count: Int) {
            samples.reserveCapacity(count)
        }

        mutating func push(_ values: [Double]) {
            samples.append(contentsOf: values)
        }

        /// Forgets the samples before absolute index `first`, once half of those held can go.
        mutating func discard(before first: Int) {
            let drop = min(first - start, samples.count)
            guard drop > 0, drop >= samples.count / 2 else { return }
            samples.removeFirst(drop)
            start += drop
        }

        /// The best correlation, from 0 to 1, of the input around sample `centre` with itself a period of `f0`
        /// later, read from the samples before `available` alone (the window moves back as far as they require);
        /// 0 where the samples are silent or anticorrelated.
        func correlation(around centre: Int, f0: Double, available: Int) -> Double {
            let period = rate / f0
            let length = Int(max(period, Self.shortestWindow * rate).rounded())
            let shortest = max(1, Int((period / (1 + Self.lagRange)).rounded(.down)))
            let longest = Int((period / (1 - Self.lagRange)).rounded(.up))
            let last = min(available, end)
            return samples.withUnsafeBufferPointer { held in
                var best = (lag: 0, value: 0.0)
                var lag = shortest
                while lag <= longest {
                    let value = correlation(held, centre: centre, length: length, lag: lag, last: last)
                    if value > best.value { best = (lag, value) }
                    lag += step
                }
                guard step > 1, best.lag > 0 else { return best.value }
                for near in max(shortest, best.lag - step + 1)...min(longest, best.lag + step - 1) where near != best.lag {
                    best.value = max(best.value, correlation(held, centre: centre, length: length, lag: near, last: last))
                }
                return best.value
            }
        }

        /// The largest magnitude of the samples held within `halfWidth` of sample `centre` and before
        /// `available`; 0 where there are none.
        func peak(around centre: Int, halfWidth: Int, available: Int) -> Double {
            let first = max(centre - halfWidth, start)
            let last = min(centre + halfWidth + 1, available, end)
            guard first < last else { return 0 }
            return samples.withUnsafeBufferPointer { held in
                var largest = 0.0
                for index in (first - start)..<(last - start) {
                    largest = max(largest, abs(held[index]))
                }
                return largest
            }
        }

        /// One lag's correlation over every `step`-th sample of the window; 0 if the window does not fit in the
        /// samples held before `last`.
        private func correlation(
            _ held: UnsafeBufferPointer<Double>, centre: Int, length: Int, lag: Int, last: Int
        ) -> Double {
            let first = max(min(centre - (length + lag) / 2, last - length - lag), start)
            guard first + length + lag <= last else { return 0 }
            var product = 0.0
            var earlier = 0.0
            var later = 0.0
            var index = first - start
            let stop = index + length
            while index < stop {
                let x = held[index]
                let y = held[index + lag]
                product += x * y
                earlier += x * x
                later += y * y
                index += step
            }
            let energy = (earlier * later).squareRoot()
            return energy > 0 ? product / energy : 0
        }
    }
}
