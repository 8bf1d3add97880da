import KoeDSP

/// How a signal is analysed, whole or streaming: the F0 method, the frame grid and F0 range, and what a stream
/// holds back for its frames. The defaults are WORLD's (DIO, 5 ms, 71 to 800 Hz); every duration is in
/// milliseconds. `validate(sampleRate:)` is the one check of these settings: a value out of its range is refused,
/// never clamped, and every caller (a changer, a conversion, the command line) runs it.
public struct AnalysisOptions: Sendable, Equatable {
    /// The F0 estimators.
    public enum F0Method: String, Sendable, CaseIterable {
        case dio, harvest
    }

    /// F0 estimator: DIO refined by StoneMask (WORLD's fast path), or Harvest.
    public var f0Method = F0Method.dio
    /// Milliseconds between frames (WORLD: 5 ms; a stream takes 1 to 100).
    public var framePeriod = 5.0
    /// Lowest F0 searched, in Hz, at least 10 (WORLD: 71 Hz); also sets CheapTrick's FFT size.
    public var f0Floor = 71.0
    /// Highest F0 searched, in Hz, below half the sample rate (WORLD: 800 Hz).
    public var f0Ceil = 800.0
    /// Milliseconds of input a stream waits for past a frame before settling its F0 (nil: DIO 80, Harvest 150,
    /// live as little as the windows allow; never less than the widest spectral window). Longer agrees with
    /// whole-signal WORLD on more frames; the latency grows by as much (with Harvest, past the look-behind, twice
    /// as much: the look-behind follows it). 0 to 10,000.
    public var lookAhead: Double?
    /// Harvest in a stream: milliseconds whose contour is chosen together (nil: 1,500). Shorter blocks lower the
    /// latency and raise the cost: each block computes twice `Harvest.candidateReach` of candidates again (158 ms
    /// at the 71 Hz floor) and chooses its contour over its whole window. Against 1.5 s, a whole conversion on
    /// the Harvest path takes 20 % more CPU at 250 ms, 1 % more at 1 s, 1.5 % less at 3 s, the same at 6 s
    /// (bench/README). One frame to 10,000 ms.
    var harvestBlock: Double?
    /// Harvest in a stream: milliseconds of contour before a block (nil: 300, and never less than the
    /// look-ahead). Adds to the contour's work, not to the candidates' or the latency. 0 to 10,000.
    var lookBehind: Double?
    /// Live: the lowest latency WORLD's windows allow, for a voice heard as it is spoken (default off). DIO
    /// settles each frame in 5 ms blocks from band signals not yet final (`StreamingDio`'s live mode), once
    /// the samples the frame's windows read have arrived (30 ms, or that reach if longer: 31.7 ms at the 71 Hz
    /// floor), the windows reach only as far as the F0 floor needs (D4C's included, whose own floor is
    /// lower), and a voiced F0 refined below the floor is raised to it so they never need more. Harvest has no
    /// live form. A vocoder pairs it with a causal `StreamingSynthesizer`.
    public var live = false
    /// Threads an analysis runs on (default 1: the caller's alone). The frames are the same for any number.
    package var threads = 1

    public init() {}

    /// The frame periods a stream takes, in milliseconds; a whole signal takes WORLD's wider bounds.
    package static let streamingFramePeriods = 1.0...100
    /// The longest context a stream holds for a frame, in milliseconds: look-ahead, Harvest's block and
    /// look-behind.
    package static let longestContext = 10_000.0

    /// Throws `WorldError.invalidOption` naming the first setting a stream cannot run with at `sampleRate` (nil:
    /// the checks that need no rate).
    public func validate(sampleRate: Int?) throws(WorldError) {
        if let problem = problem(sampleRate: sampleRate) { throw .invalidOption(problem) }
    }

    /// The settings, as a message names them.
    package enum Setting: String {
        case framePeriod = "frame period", f0Floor = "F0 floor", f0Ceil = "F0 ceiling", lookAhead = "look-ahead"
        case harvestBlock = "Harvest's block", lookBehind = "look-behind", live = "live analysis", threads = "threads"
    }

    /// The first thing wrong with these settings at `sampleRate`, each setting named by `name` (a flag on the
    /// command line, a property in Swift); nil when they can run. `framePeriods`: a whole signal takes more.
    package func problem(
        sampleRate: Int?, framePeriods: ClosedRange<Double> = streamingFramePeriods, name: (Setting) -> String = \.rawValue
    ) -> String? {
        if !(framePeriod.isFinite && framePeriods.contains(framePeriod)) {
            return "\(name(.framePeriod)) must be between \(framePeriods.lowerBound.asWritten) and \(framePeriods.upperBound.asWritten) ms (got \(framePeriod))"
        }
        if !(f0Floor.isFinite && f0Floor >= SignalRequirements.lowestF0Floor) {
            return "\(name(.f0Floor)) must be at least \(Int(SignalRequirements.lowestF0Floor)) Hz (got \(f0Floor))"
        }
        if !(f0Ceil.isFinite && f0Floor < f0Ceil) {
            return "\(name(.f0Floor)) (\(f0Floor) Hz) must be below \(name(.f0Ceil)) (\(f0Ceil) Hz)"
        }
        if live, f0Method == .harvest {
            return "\(name(.live)) needs DIO: Harvest has no live form"
        }
        let context = Self.longestContext
        for (setting, value, least) in [(Setting.lookAhead, lookAhead, 0.0), (.harvestBlock, harvestBlock, framePeriod), (.lookBehind, lookBehind, 0)] {
            if let value, !(value.isFinite && value >= least && value <= context) {
                return "\(name(setting)) must be between \(least.asWritten) and \(Int(context)) ms (got \(value))"
            }
        }
        if !(1...1024).contains(threads) {
            return "\(name(.threads)) must be from 1 to 1024 (got \(threads))"
        }
        if let sampleRate, f0Ceil >= Double(sampleRate) / 2 {
            return "\(name(.f0Ceil)) (\(f0Ceil) Hz) must be below half the sample rate (\(sampleRate / 2) Hz)"
        }
        return nil
    }

    /// DIO's options for this analysis: WORLD's defaults but the frame period and F0 range above.
    package var dio: Dio.Options {
        var options = Dio.Options()
        options.framePeriod = framePeriod
        options.f0Floor = f0Floor
        options.f0Ceil = f0Ceil
        return options
    }

    /// Harvest's options for this analysis: the frame period and F0 range above.
    package var harvest: Harvest.Options {
        Harvest.Options(framePeriod: framePeriod, f0Floor: f0Floor, f0Ceil: f0Ceil)
    }

    /// CheapTrick's options for this analysis: WORLD's defaults but the F0 floor, which sets the FFT size.
    package var cheapTrick: CheapTrick.Options {
        CheapTrick.Options(f0Floor: f0Floor)
    }
}

extension Double {
    /// As a person writes it: 440, not 440.0; 0.001 as it is.
    package var asWritten: String {
        self == rounded() && abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}
