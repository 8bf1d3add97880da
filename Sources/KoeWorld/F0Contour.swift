/// Fundamental frequency frame by frame, with each frame's centre time.
/// Unvoiced frames carry an F0 of 0, as in WORLD.
public struct F0Contour: Equatable, Sendable {
    /// Centre of each frame, in seconds from the first sample.
    public var time: [Double]
    /// F0 in Hz for each frame; 0 where the frame is unvoiced.
    public var f0: [Double]

    public init(time: [Double], f0: [Double]) {
        precondition(time.count == f0.count, "time and f0 must have one value a frame")
        self.time = time
        self.f0 = f0
    }

    /// A contour on WORLD's uniform time axis (`frame * framePeriod`), from per-frame F0 values.
    public init(f0: [Double], framePeriod: Double) {
        self.init(time: F0Contour.timeAxis(frameCount: f0.count, framePeriod: framePeriod), f0: f0)
    }

    public var frameCount: Int { f0.count }

    /// WORLD's number of frames for a signal: one at time 0, then one every `framePeriod` ms up to its end.
    public static func frameCount(samples: Int, sampleRate: Int, framePeriod: Double) -> Int {
        Int(1000.0 * Double(samples) / Double(sampleRate) / framePeriod) + 1
    }

    /// Frame times in seconds for `frameCount` frames every `framePeriod` ms.
    public static func timeAxis(frameCount: Int, framePeriod: Double) -> [Double] {
        (0..<frameCount).map { Double($0) * framePeriod / 1000.0 }
    }
}
