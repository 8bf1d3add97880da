import KoeWorld

/// A contour holding `f0` at a few frames 5 ms apart around the middle of a `duration`-second signal: the frames
/// CheapTrick's and D4C's tests read.
func steadyContour(f0: Double, duration: Double, frames: Int = 3) throws -> F0Contour {
    let times = (0..<frames).map { duration / 2 + Double($0 - frames / 2) * 0.005 }
    return try F0Contour(time: times, f0: [Double](repeating: f0, count: frames))
}
