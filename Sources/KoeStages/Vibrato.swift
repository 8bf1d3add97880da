import Glibc

/// Sinusoidal vibrato on voiced frames: F0 times 2^(depth/1200 · sin(2π · rate · t)), t in output seconds from
/// the start of the stream, so the rate heard is `rate` whatever the tempo.
///
/// F0 is one value an analysis frame, so the rate must stay well below half the frame rate (100 Hz at WORLD's
/// 5 ms frames).
public enum Vibrato {
    public struct Options: Sendable, Equatable {
        /// Oscillations a second, in Hz (default 5.5, a singer's).
        public var rate = 5.5
        /// Peak deviation from the unmodulated F0, in cents either way (default 50).
        public var depth = 50.0

        public init(rate: Double = 5.5, depth: Double = 50) {
            self.rate = rate
            self.depth = depth
        }

        /// The first setting out of its range (`Setting.vibratoRate`, `vibratoDepth`), said in words; nil when the
        /// options can be used.
        package var problem: String? {
            Setting.vibratoRate.problem(rate, as: "vibrato rate") ?? Setting.vibratoDepth.problem(depth, as: "vibrato depth")
        }

        /// These options with each number clamped to its setting's range, as a live control takes them; nil when
        /// one is not a number.
        package var clamped: Options? {
            guard let rate = Setting.vibratoRate.clamped(rate), let depth = Setting.vibratoDepth.clamped(depth) else { return nil }
            return Options(rate: rate, depth: depth)
        }

        /// The F0 multiplier at `seconds` of output.
        func factor(atOutputTime seconds: Double) -> Double {
            exp2(depth / 1200 * sin(2 * .pi * rate * seconds))
        }
    }
}
