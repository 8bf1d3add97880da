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

        /// From a slow swell to a fast trill.
        package static let rateRange = 0.1...20
        /// Up to an octave either way.
        package static let depthRange = 0.0...1200

        /// The first setting out of its range, said in words; nil when the options can be used.
        package var problem: String? {
            if !Self.rateRange.contains(rate) { return "vibrato rate must be between 0.1 and 20 Hz (got \(rate))" }
            if !Self.depthRange.contains(depth) { return "vibrato depth must be between 0 and 1200 cents (got \(depth))" }
            return nil
        }

        /// The F0 multiplier at `seconds` of output.
        func factor(atOutputTime seconds: Double) -> Double {
            exp2(depth / 1200 * sin(2 * .pi * rate * seconds))
        }
    }
}
