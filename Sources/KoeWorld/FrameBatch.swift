import KoeDSP

/// A signal and the frames to analyse in it. Several segments analysed in one call share the threads frame by
/// frame, yet each comes out as its own call would have analysed it, safeguard noise included.
public struct SignalSegment: Sendable {
    public var signal: [Double]
    public var contour: F0Contour

    public init(signal: [Double], contour: F0Contour) {
        self.signal = signal
        self.contour = contour
    }
}

/// One frame of a batch of segments to analyse, and how many noise draws its segment's sequence holds before it.
struct FrameJob {
    let segment: Int
    let frame: Int
    let noiseStart: Int
}

/// The first row of each segment when the frames of all segments are stacked in one matrix, and the total.
func stackedRows(of segments: [SignalSegment]) -> (firstRows: [Int], total: Int) {
    var firstRows: [Int] = []
    var total = 0
    for segment in segments {
        firstRows.append(total)
        total += segment.contour.frameCount
    }
    return (firstRows, total)
}

/// A workspace that draws safeguard noise from WORLD's sequence.
protocol NoiseDrawing: AnyObject {
    /// Restarts the noise sequence at WORLD's seed, `count` draws in.
    func startNoise(skipping count: Int)
}

/// Runs `body` for each job, on up to `threads` threads, each with a workspace of its own. The jobs of one
/// segment follow one another in its noise sequence, so a workspace restarts the noise only where its run of
/// jobs begins or a new segment starts: every frame draws the noise a single pass over its segment would.
func forEachFrame<Workspace: NoiseDrawing>(
    _ jobs: [FrameJob], threads: Int, minimumLength: Int, workspaces: WorkspacePool<Workspace>,
    _ body: (FrameJob, Workspace) -> Void
) {
    Parallel.forEachRange(jobs.count, threads: threads, minimumLength: minimumLength) { range in
        workspaces.withWorkspace { workspace in
            for index in range {
                let job = jobs[index]
                if index == range.lowerBound || jobs[index - 1].segment != job.segment {
                    workspace.startNoise(skipping: job.noiseStart)
                }
                body(job, workspace)
            }
        }
    }
}
