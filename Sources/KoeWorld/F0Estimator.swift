/// WORLD's whole-signal F0 estimators, `Dio` and `Harvest`: each gives an F0 on frames `framePeriod` ms apart
/// from time 0, and takes a signal that holds three periods of its F0 floor, fits one whole-signal analysis and is
/// finite throughout. What the two share is here once: the frame count, and the checks of their settings and of a
/// signal before either analyses it.
public protocol F0Estimator: Sendable {
    var sampleRate: Int { get }
    /// Milliseconds between frames.
    var framePeriod: Double { get }
    /// Lowest F0 searched, in Hz.
    var f0Floor: Double { get }

    /// F0 every `framePeriod` ms; 0 marks unvoiced frames. Throws if `signal` is shorter than three periods of the
    /// F0 floor, longer than `SignalRequirements.longestSignal`, or not finite throughout.
    func estimate(_ signal: [Double]) throws(WorldError) -> F0Contour
}

extension F0Estimator {
    /// WORLD's `GetSamplesForDIO` and `GetSamplesForHarvest`: the frames of a signal of `samples` samples, one at
    /// time 0 and then one every `framePeriod` ms up to its end, as many as `estimate` gives. Throws unless
    /// `samples` is from 0 to `SignalRequirements.longestSignal`.
    public func frameCount(samples: Int) throws(WorldError) -> Int {
        try SignalRequirements.validate(sampleCount: samples)
        return F0Contour.frameCount(samples: samples, sampleRate: sampleRate, framePeriod: framePeriod)
    }

    /// Throws unless `estimate` takes `signal`.
    func validate(_ signal: [Double]) throws(WorldError) {
        try SignalRequirements.validate(signal, sampleRate: sampleRate, f0Floor: f0Floor)
    }

    /// Throws unless an estimator can run at `sampleRate` on frames `framePeriod` ms apart, searching F0 from
    /// `f0Floor` to `f0Ceil`.
    static func validate(
        sampleRate: Int, framePeriod: Double, f0Floor: Double, f0Ceil: Double
    ) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try SignalRequirements.validateFramePeriod(framePeriod)
        try SignalRequirements.validateF0Range(floor: f0Floor, ceil: f0Ceil, sampleRate: sampleRate)
    }
}
