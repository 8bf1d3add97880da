import KoeDSP
import KoeWorld
import Testing

/// Checks an estimator's `into:` form against its allocating form: a matrix reused from call to call (first
/// `initial`), larger or smaller than the next result, holds exactly that result, on 1, 2 and 3 threads.
func expectReusedMatrixHoldsEachResult(
    signal: [Double], contour: F0Contour, fewerFrames: Int, initial: Matrix,
    estimate: (F0Contour) throws -> Matrix,
    estimateInto: (UnsafeBufferPointer<Double>, F0Contour, _ threads: Int, inout Matrix) -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let expected = try estimate(contour)
    let fewer = try F0Contour(time: Array(contour.time.suffix(fewerFrames)), f0: Array(contour.f0.suffix(fewerFrames)))
    let expectedFewer = try estimate(fewer)
    var reused = initial
    signal.withUnsafeBufferPointer { samples in
        estimateInto(samples, contour, 1, &reused)
        #expect(reused == expected, sourceLocation: sourceLocation)
        estimateInto(samples, fewer, 2, &reused)
        #expect(reused == expectedFewer, sourceLocation: sourceLocation)
        estimateInto(samples, contour, 3, &reused)
        #expect(reused == expected, sourceLocation: sourceLocation)
    }
}
