import KoeDSP

/// D4C: band aperiodicity from the temporally static group delay (Morise 2016), after the
/// "love train" voiced/unvoiced test; frames judged unvoiced stay fully aperiodic.
public struct D4C: Sendable {
    public struct Options: Sendable, Equatable {
        /// Voiced/unvoiced threshold on the love-train periodicity score (0 keeps every F0 frame voiced).
        /// WORLD's default, 0.85, suits Harvest, which calls most frames voiced.
        public var threshold: Double

        public init(threshold: Double = 0.85) {
            self.threshold = threshold
        }
    }

    public let sampleRate: Int
    /// The size of the FFT the result is laid out for (CheapTrick's), giving `fftSize / 2 + 1` bins a frame.
    public let fftSize: Int
    public let options: Options
    private let noise: SafeguardNoise
    /// FFT plans and buffers kept from call to call, so that short repeated calls (streaming) cost no setup.
    private let workspaces: WorkspacePool<AperiodicityEstimator>
    /// Each call's love-train scores, kept from call to call.
    private let scoreBuffers: WorkspacePool<FrameScores>

    /// `fftSize` is CheapTrick's (`CheapTrick.fftSize`), so that both lay their frames out alike. Throws if the
    /// rate is not supported, the FFT size is not one CheapTrick could have, or the threshold is not finite.
    public init(sampleRate: Int, fftSize: Int, options: Options = Options()) throws(WorldError) {
        try self.init(sampleRate: sampleRate, fftSize: fftSize, options: options, shared: true)
    }

    /// `shared`: whether several threads may estimate at once (or one call on several threads); an instance that
    /// is not shared takes no lock. `noise`: where each frame's safeguard noise starts.
    package init(
        sampleRate: Int, fftSize: Int, options: Options = Options(), shared: Bool, noise: SafeguardNoise = .throughCall
    ) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try CheapTrick.validate(fftSize: fftSize, sampleRate: sampleRate)
        guard options.threshold.isFinite else {
            throw .invalidOption("D4C's threshold must be a finite number (got \(options.threshold))")
        }
        self.sampleRate = sampleRate
        self.fftSize = fftSize
        self.options = options
        self.noise = noise
        workspaces = WorkspacePool(shared: shared) { AperiodicityEstimator(sampleRate: sampleRate, outputFFTSize: fftSize) }
        scoreBuffers = WorkspacePool(shared: shared) { FrameScores() }
    }

    /// Linear aperiodicity in (0, 1] for each frame and bin. Frames are shared among up to `threads`
    /// threads; the result is the same for any number. Throws if `signal` is empty or not finite throughout,
    /// a frame's time is not finite or lies beyond `F0Contour.farthestTime`, or the aperiodicity would not fit in
    /// memory.
    public func estimate(_ signal: [Double], contour: F0Contour, threads: Int = 1) throws(WorldError) -> Matrix {
        try SignalRequirements.validate(signal, contour: contour)
        try SignalRequirements.requireRoom(rows: contour.frameCount, columns: fftSize / 2 + 1, for: "an aperiodicity")
        var aperiodicity = Matrix()
        signal.withUnsafeBufferPointer { estimate($0, contour: contour, threads: threads, into: &aperiodicity) }
        return aperiodicity
    }

    /// Makes room for calls of up to `frames` frames on one thread: such a call then allocates nothing.
    func reserve(frames: Int) {
        scoreBuffers.withWorkspace { $0.values.reserveCapacity(frames) }
    }

    /// `estimate`, written into `aperiodicity` (reshaped to one row a frame), which keeps its storage from
    /// call to call: with the same or fewer frames, a call allocates nothing once D4C's buffers have grown.
    /// `signal` must not be empty.
    package func estimate(
        _ signal: UnsafeBufferPointer<Double>, contour: F0Contour, threads: Int = 1, into aperiodicity: inout Matrix
    ) {
        aperiodicity.reshape(rows: contour.frameCount, columns: fftSize / 2 + 1, repeating: 1.0 - 1e-12)
        let columns = aperiodicity.columns
        let plan = NoisePlan(sampleRate: sampleRate, contour: contour, noise: noise)
        scoreBuffers.withWorkspace { scores in
            scores.reset(frameCount: contour.frameCount)
            scores.values.withUnsafeMutableBufferPointer { scores in
                computePeriodicityScores(signal, contour: contour, plan: plan, threads: threads, into: scores)
                func isAnalysed(_ frame: Int) -> Bool {
                    plan.isVoiced(frame) && scores[frame] > options.threshold
                }
                let bandNoiseStart = plan.scoreNoiseTotal
                aperiodicity.storage.withUnsafeMutableBufferPointer { output in
                    Parallel.forEachRange(contour.frameCount, threads: threads, minimumLength: 8) { range in
                        workspaces.withWorkspace { estimator in
                            estimator.startNoise(
                                skipping: bandNoiseStart + plan.bandNoiseDrawn(before: range.lowerBound, isAnalysed: isAnalysed))
                            for frame in range where isAnalysed(frame) {
                                if plan.restartsEachFrame {
                                    estimator.startNoise(skipping: plan.scoreNoiseDrawn(by: frame))
                                }
                                let row = UnsafeMutableBufferPointer(rebasing: output[(frame * columns)..<((frame + 1) * columns)])
                                estimator.bands.estimate(
                                    signal, f0: plan.bandF0(frame), time: contour.time[frame], noise: estimator.noise, into: row)
                            }
                        }
                    }
                }
            }
        }
    }

    /// The love-train score of every voiced frame (0 for the others).
    private func computePeriodicityScores(
        _ x: UnsafeBufferPointer<Double>, contour: F0Contour, plan: NoisePlan, threads: Int,
        into scores: UnsafeMutableBufferPointer<Double>
    ) {
        Parallel.forEachRange(contour.frameCount, threads: threads, minimumLength: 16) { range in
            workspaces.withWorkspace { estimator in
                estimator.startNoise(skipping: plan.scoreNoiseDrawn(before: range.lowerBound))
                for frame in range where plan.isVoiced(frame) {
                    if plan.restartsEachFrame {
                        estimator.startNoise()
                    }
                    scores[frame] = estimator.loveTrain.score(
                        x, f0: plan.scoreF0(frame), time: contour.time[frame], noise: estimator.noise)
                }
            }
        }
    }

    /// WORLD marks unvoiced frames with an F0 of exactly 0; NaN cannot be analysed either.
    static func isVoiced(_ f0: Double) -> Bool {
        f0 != 0 && !f0.isNaN
    }

    /// Frames below this F0 (Hz) are analysed as if at it.
    static let f0Floor = 47.0
    /// Amplitude of the noise added to every windowed sample so no spectrum is exactly zero.
    static let safeguardNoise = 1e-6
}

/// Which frames D4C analyses, at which F0, and where each frame's safeguard noise starts. In WORLD's single
/// sequence: first the love-train windows of all voiced frames, then three windows for each frame scored
/// periodic; counting the draws before a frame lets any run of frames start its noise where a single pass would.
/// Restarted at each frame, the sequence holds that frame's love-train window, then its three.
private struct NoisePlan {
    let contour: F0Contour
    let restartsEachFrame: Bool
    /// Love-train draws of all voiced frames together.
    private(set) var scoreNoiseTotal = 0
    private let sampleRate: Int
    private let highestBandF0: Double

    init(sampleRate: Int, contour: F0Contour, noise: SafeguardNoise) {
        self.sampleRate = sampleRate
        self.contour = contour
        restartsEachFrame = noise == .eachFrame
        highestBandF0 = SpectralSmoothing.highestF0(
            fftSize: BandAperiodicity.fftSize(sampleRate: sampleRate), sampleRate: sampleRate)
        scoreNoiseTotal = scoreNoiseDrawn(before: contour.frameCount)
    }

    func isVoiced(_ frame: Int) -> Bool {
        D4C.isVoiced(contour.f0[frame])
    }

    /// F0 of a frame for the love train, and for the band analysis.
    func scoreF0(_ frame: Int) -> Double {
        max(contour.f0[frame], LoveTrain.f0Floor)
    }

    func bandF0(_ frame: Int) -> Double {
        min(max(D4C.f0Floor, contour.f0[frame]), highestBandF0)
    }

    /// Love-train draws before `frame` in the call's sequence (none when each frame restarts it).
    func scoreNoiseDrawn(before frame: Int) -> Int {
        guard !restartsEachFrame else { return 0 }
        var drawn = 0
        for earlier in 0..<frame {
            drawn += scoreNoiseDrawn(by: earlier)
        }
        return drawn
    }

    /// Love-train draws of `frame` itself.
    func scoreNoiseDrawn(by frame: Int) -> Int {
        guard isVoiced(frame) else { return 0 }
        return D4CWindow.length(sampleRate: sampleRate, f0: scoreF0(frame), periods: LoveTrain.periods)
    }

    /// Band-analysis draws before `frame`, counting from the end of the love-train draws (none when each frame
    /// restarts the sequence).
    func bandNoiseDrawn(before frame: Int, isAnalysed: (Int) -> Bool) -> Int {
        guard !restartsEachFrame else { return 0 }
        var drawn = 0
        for earlier in 0..<frame where isAnalysed(earlier) {
            drawn += 3 * D4CWindow.length(sampleRate: sampleRate, f0: bandF0(earlier), periods: BandAperiodicity.periods)
        }
        return drawn
    }
}

/// A call's love-train scores, one a frame.
private final class FrameScores {
    var values: [Double] = []

    /// Zero scores for `frameCount` frames, in the capacity earlier calls left.
    func reset(frameCount: Int) {
        values.removeAll(keepingCapacity: true)
        values.append(contentsOf: repeatElement(0, count: frameCount))
    }
}

/// The love train and band analysis of one thread, with the noise sequence they share.
private final class AperiodicityEstimator {
    let loveTrain: LoveTrain
    let bands: BandAperiodicity
    let noise: NoiseStream

    init(sampleRate: Int, outputFFTSize: Int) {
        loveTrain = LoveTrain(sampleRate: sampleRate)
        bands = BandAperiodicity(sampleRate: sampleRate, outputFFTSize: outputFFTSize)
        // A window never outgrows the FFT it is analysed with.
        noise = NoiseStream(maximumTake: max(loveTrain.fftSize, BandAperiodicity.fftSize(sampleRate: sampleRate)))
    }

    /// Restarts the noise sequence at WORLD's seed, `count` draws in.
    func startNoise(skipping count: Int = 0) {
        noise.restart(skipping: count)
    }
}
