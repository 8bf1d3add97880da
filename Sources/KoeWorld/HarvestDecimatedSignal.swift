import KoeDSP

extension Harvest {
    /// The input brought down to about 8 kHz (never by more than WORLD's largest factor), with its mean removed.
    struct DecimatedSignal {
        let samples: [Double]
        let sampleRate: Double

        init(_ signal: [Double], sampleRate: Int) {
            let factor = Self.factor(from: sampleRate)
            let count = Int((Double(signal.count) / Double(factor)).rounded(.up))
            self.sampleRate = Self.rate(from: sampleRate)
            var samples = factor == 1 ? signal : Self.decimateWithPadding(signal, factor: factor, count: count)
            Self.removeMean(&samples)
            self.samples = samples
        }

        static func rate(from sampleRate: Int) -> Double {
            Double(sampleRate) / Double(factor(from: sampleRate))
        }

        static func factor(from sampleRate: Int) -> Int {
            let speed = Matlab.round(Double(sampleRate) / Tuning.targetSampleRate)
            return max(min(speed, Tuning.maximumDecimation), 1)
        }

        /// Edge-padded with the end samples before decimating, so the filter's start-up stays out of the result.
        private static func decimateWithPadding(_ signal: [Double], factor: Int, count: Int) -> [Double] {
            let padding = Int((Tuning.decimationPadding / Double(factor)).rounded(.up) * Double(factor))
            var padded = [Double](repeating: signal[0], count: padding)
            padded.reserveCapacity(signal.count + 2 * padding)
            padded.append(contentsOf: signal)
            padded.append(contentsOf: repeatElement(signal[signal.count - 1], count: padding))
            let start = padding / factor
            let decimated = Matlab.decimate(padded, factor: factor, count: start + count)
            return Array(decimated[start...])
        }

        private static func removeMean(_ samples: inout [Double]) {
            var sum = 0.0
            for sample in samples {
                sum += sample
            }
            let mean = sum / Double(samples.count)
            for i in samples.indices {
                samples[i] -= mean
            }
        }
    }
}
