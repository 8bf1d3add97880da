/// A stage that may go on working after `process` returns, on threads of the worker pool, so that its caller can
/// read and analyse the next chunk meanwhile. The output stream is the one the `Stage` contract describes;
/// only when its samples come out depends on timing. `finish` waits for everything.
package protocol BackgroundStage: Stage {
    /// Waits for the work handed over so far and appends the output it made. Call it before waiting for more
    /// input, so a live stream is not held back while the stage has nothing to do.
    func drain(into output: inout [Double]) throws
}
