import KoeWorld

/// What the streaming analysis accepts, checked once for every caller (the changer, file conversion, the CLI).
package enum AnalysisLimits {
    /// Milliseconds between frames.
    package static let framePeriod = 1.0...100
    /// The lowest F0 floor, in Hz: KoeWorld's.
    package static let lowestF0Floor = SignalRequirements.lowestF0Floor
    /// Look-ahead in milliseconds: up to the longest context the streaming analysis holds.
    package static let lookAhead = 0.0...StreamingAnalyzer.longestContext

    /// The first thing wrong with `options` at `sampleRate`, named by `name` (a flag on the command line, a
    /// property in Swift); nil when they can run. Streaming accepts `framePeriod`; a whole signal, more.
    package static func problem(
        with options: StreamingAnalyzer.Options, sampleRate: Int?, framePeriods: ClosedRange<Double> = framePeriod,
        name: (Setting) -> String = \.rawValue
    ) -> String? {
        if !(options.framePeriod.isFinite && framePeriods.contains(options.framePeriod)) {
            return "\(name(.framePeriod)) must be between \(framePeriods.lowerBound.formatted) and \(framePeriods.upperBound.formatted) ms (got \(options.framePeriod))"
        }
        if !(options.f0Floor.isFinite && options.f0Floor >= lowestF0Floor) {
            return "\(name(.f0Floor)) must be at least \(Int(lowestF0Floor)) Hz (got \(options.f0Floor))"
        }
        if !(options.f0Ceil.isFinite && options.f0Floor < options.f0Ceil) {
            return "\(name(.f0Floor)) (\(options.f0Floor) Hz) must be below \(name(.f0Ceil)) (\(options.f0Ceil) Hz)"
        }
        if options.live, options.f0Method == .harvest {
            return "\(name(.live)) needs DIO: Harvest has no live form"
        }
        if let lookAheadValue = options.lookAhead, !(lookAheadValue.isFinite && lookAhead.contains(lookAheadValue)) {
            return "\(name(.lookAhead)) must be between 0 and \(Int(lookAhead.upperBound)) ms (got \(lookAheadValue))"
        }
        if let sampleRate, options.f0Ceil >= Double(sampleRate) / 2 {
            return "\(name(.f0Ceil)) (\(options.f0Ceil) Hz) must be below half the sample rate (\(sampleRate / 2) Hz)"
        }
        return nil
    }

    /// The analysis settings, as the library names them.
    package enum Setting: String {
        case framePeriod = "frame period", f0Floor = "F0 floor", f0Ceil = "F0 ceiling", lookAhead = "look-ahead"
        case live = "live analysis"
    }
}

extension Double {
    /// As a person writes it: 440, not 440.0; 0.001 as it is.
    package var formatted: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}

enum AnalysisCheck {
    /// Throws `KoeError.invalidArgument` when `options` cannot run at `sampleRate`.
    static func require(_ options: StreamingAnalyzer.Options, sampleRate: Int) throws(KoeError) {
        if let problem = AnalysisLimits.problem(with: options, sampleRate: sampleRate) {
            throw .invalidArgument(problem)
        }
    }
}
