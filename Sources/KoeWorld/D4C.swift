import Glibc
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
    /// is not shared takes no lock.
    package init(sampleRate: Int, fftSize: Int, options: Options = Options(), shared: Bool) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try CheapTrick.validate(fftSize: fftSize, sampleRate: sampleRate)
        guard options.threshold.isFinite else {
            throw .invalidOption("D4C's threshold must be a finite number (got \(options.threshold))")
        }
        self.sampleRate = sampleRate
        self.fftSize = fftSize
        self.options = options
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
    package func reserve(frames: Int) {
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
        let plan = NoisePlan(sampleRate: sampleRate, contour: contour)
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
        guard LoveTrain.bandFits(sampleRate: sampleRate) else { return }
        Parallel.forEachRange(contour.frameCount, threads: threads, minimumLength: 16) { range in
            workspaces.withWorkspace { estimator in
                estimator.startNoise(skipping: plan.scoreNoiseDrawn(before: range.lowerBound))
                for frame in range where plan.isVoiced(frame) {
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

/// Which frames D4C analyses, at which F0, and where each frame's safeguard noise starts in WORLD's single
/// sequence: first the love-train windows of all voiced frames, then three windows for each frame scored
/// periodic. Counting the draws before a frame lets any run of frames start its noise where a single pass would.
private struct NoisePlan {
    let contour: F0Contour
    /// Love-train draws of all voiced frames together.
    private(set) var scoreNoiseTotal = 0
    private let sampleRate: Int
    private let drawsScores: Bool
    private let highestBandF0: Double

    init(sampleRate: Int, contour: F0Contour) {
        self.sampleRate = sampleRate
        self.contour = contour
        drawsScores = LoveTrain.bandFits(sampleRate: sampleRate)
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

    /// Love-train draws before `frame`.
    func scoreNoiseDrawn(before frame: Int) -> Int {
        guard drawsScores else { return 0 }
        var drawn = 0
        for earlier in 0..<frame where isVoiced(earlier) {
            drawn += windowLength(sampleRate: sampleRate, f0: scoreF0(earlier), periods: LoveTrain.periods)
        }
        return drawn
    }

    /// Band-analysis draws before `frame`, counting from the end of the love-train draws.
    func bandNoiseDrawn(before frame: Int, isAnalysed: (Int) -> Bool) -> Int {
        var drawn = 0
        for earlier in 0..<frame where isAnalysed(earlier) {
            drawn += 3 * windowLength(sampleRate: sampleRate, f0: bandF0(earlier), periods: BandAperiodicity.periods)
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
    func startNoise(skipping count: Int) {
        noise.restart(skipping: count)
    }
}

/// The two F0-adaptive windows D4C uses.
private enum WindowShape {
    case hann, blackman
}

/// Samples in a window `periods` periods of `f0` long, as WORLD rounds it (always odd).
private func windowLength(sampleRate: Int, f0: Double, periods: Double) -> Int {
    2 * Matlab.round(periods * Double(sampleRate) / f0 / 2.0) + 1
}

/// Samples around `time` under an F0-adaptive window `periods` periods long, plus safeguard noise, with
/// the window-shaped DC removed; written to the start of `waveform`. Samples outside the signal repeat its
/// end points. Returns the number of samples written.
private func windowWaveform(
    _ x: UnsafeBufferPointer<Double>, sampleRate: Int, f0: Double, time: Double,
    shape: WindowShape, periods: Double, window windowBuffer: WindowBuffer,
    noise: NoiseStream, into waveform: UnsafeMutableBufferPointer<Double>
) -> Int {
    let length = windowLength(sampleRate: sampleRate, f0: f0, periods: periods)
    let halfLength = length / 2
    let window = windowBuffer.prepare(shape, sampleRate: sampleRate, f0: f0, periods: periods, halfLength: halfLength)
    let safeguard = noise.take(length)
    let origin = Matlab.round(time * Double(sampleRate) + 0.001)
    UnsafeMutableBufferPointer(rebasing: waveform[0..<length]).copyClamped(from: x, first: origin - halfLength)
    for i in 0..<length {
        waveform[i] = waveform[i] * window[i] + safeguard[i] * D4C.safeguardNoise
    }
    let dcLevel = VectorMath.sum(UnsafeBufferPointer(rebasing: waveform[0..<length]))
        / VectorMath.sum(UnsafeBufferPointer(rebasing: window[0..<length]))
    for i in 0..<length {
        waveform[i] -= window[i] * dcLevel
    }
    return length
}

/// A symmetric window whose phase advances by `step` a sample from its centre; each value is computed
/// once for both halves.
private func designWindow(_ shape: WindowShape, halfLength: Int, step: Double, into window: UnsafeMutableBufferPointer<Double>) {
    let rightHalf = UnsafeMutableBufferPointer(rebasing: window[halfLength...(2 * halfLength)])
    Trigonometry.cosines(step: step, into: rightHalf)
    for offset in 0...halfLength {
        let cosine = rightHalf[offset]
        let value: Double
        switch shape {
        case .hann:
            value = 0.5 * cosine + 0.5
        case .blackman:
            value = 0.42 + 0.5 * cosine + 0.08 * (2.0 * cosine * cosine - 1.0)
        }
        rightHalf[offset] = value
        window[halfLength - offset] = value
    }
}

/// A window's buffer, remembering what it holds: D4C's two centroid windows of a frame share shape and F0,
/// so the second is not designed again.
private final class WindowBuffer {
    private let values: UnsafeMutableBufferPointer<Double>
    private var holds: (shape: WindowShape, f0: Double, periods: Double)?

    init(capacity: Int) {
        values = .allocate(capacity: capacity)
    }

    deinit {
        values.deallocate()
    }

    /// The window of `shape`, `periods` periods of `f0` long (`2 * halfLength + 1` samples).
    func prepare(
        _ shape: WindowShape, sampleRate: Int, f0: Double, periods: Double, halfLength: Int
    ) -> UnsafeMutableBufferPointer<Double> {
        if let holds, holds.shape == shape, holds.f0 == f0, holds.periods == periods {
            return values
        }
        let step = 2.0 * Double.pi * f0 / (periods * Double(sampleRate))
        designWindow(shape, halfLength: halfLength, step: step, into: values)
        holds = (shape, f0, periods)
        return values
    }
}

/// The love-train periodicity score: the share of 100–7900 Hz power that lies below 4 kHz in a
/// 3-period Blackman window. Voiced speech concentrates there; noise does not.
private final class LoveTrain {
    private let sampleRate: Int
    let fftSize: Int
    private let forward: ForwardRealFFT
    private let window: WindowBuffer
    private let lowBound: Int
    private let splitBound: Int
    private let highBound: Int
    /// Samples of `forward.waveform` written by the last frame; the rest are zero.
    private var writtenLength = 0

    /// The lowest F0 the window is sized for; lower F0 is analysed as this.
    static let f0Floor = 40.0
    static let periods = 3.0

    init(sampleRate: Int) {
        self.sampleRate = sampleRate
        fftSize = LoveTrain.fftSize(sampleRate: sampleRate)
        forward = ForwardRealFFT(size: fftSize)
        window = WindowBuffer(capacity: fftSize)
        (lowBound, splitBound, highBound) = LoveTrain.bounds(sampleRate: sampleRate, fftSize: fftSize)
    }

    private static func fftSize(sampleRate: Int) -> Int {
        fftSizeHolding(periods: periods, of: f0Floor, sampleRate: sampleRate)
    }

    /// Bins at or above 100 Hz, 4 kHz and 7.9 kHz.
    private static func bounds(sampleRate: Int, fftSize: Int) -> (low: Int, split: Int, high: Int) {
        func bin(_ frequency: Double) -> Int {
            Int((frequency * Double(fftSize) / Double(sampleRate)).rounded(.up))
        }
        return (bin(100), bin(4000), bin(7900))
    }

    /// Below 15.8 kHz the 7900 Hz bound lies past Nyquist. WORLD then sums memory it never wrote, and in
    /// practice (pyworld) scores all frames, or all but the first voiced one, as unvoiced; here all, and no
    /// noise is drawn for them.
    static func bandFits(sampleRate: Int) -> Bool {
        let fftSize = fftSize(sampleRate: sampleRate)
        return bounds(sampleRate: sampleRate, fftSize: fftSize).high <= fftSize / 2
    }

    /// The score of one voiced frame, `f0` at least `f0Floor`.
    func score(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream) -> Double {
        let waveform = forward.waveform
        let length = windowWaveform(
            x, sampleRate: sampleRate, f0: f0, time: time, shape: .blackman, periods: LoveTrain.periods,
            window: window, noise: noise, into: waveform)
        for i in length..<max(length, writtenLength) {
            waveform[i] = 0
        }
        writtenLength = length
        forward.execute()
        let spectrum = forward.spectrum
        var belowSplit = 0.0
        var total = 0.0
        for bin in (lowBound + 1)...highBound {
            total += spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
            if bin == splitBound { belowSplit = total }
        }
        return belowSplit / total
    }
}

/// Aperiodicity of one voiced frame in 3 kHz bands (up to 15 kHz), interpolated onto the output bins.
private final class BandAperiodicity {
    private let sampleRate: Int
    private let fftSize: Int
    private let outputFFTSize: Int
    private let forward: ForwardRealFFT
    /// Transforms the windowed group delay of one band; its input beyond the band window stays zero.
    private let bandFFT: ForwardRealFFT
    private let smoothing: SpectralSmoothing
    private let window: WindowBuffer
    /// Samples of `forward.waveform` written by the last window; the rest are zero.
    private var writtenLength = 0
    private let savedSpectrum: UnsafeMutableBufferPointer<Complex>
    private let staticCentroid: UnsafeMutableBufferPointer<Double>
    private let smoothedPower: UnsafeMutableBufferPointer<Double>
    private let groupDelay: UnsafeMutableBufferPointer<Double>
    private let smoothedGroupDelay: UnsafeMutableBufferPointer<Double>
    private let bandPower: UnsafeMutableBufferPointer<Double>
    /// Scratch for finding a band's strongest bins.
    private let strongestCandidates: UnsafeMutableBufferPointer<Double>
    private let bandWindow: [Double]
    private let bandCount: Int
    /// Band edges in Hz: 0, 3 kHz, 6 kHz, … then Nyquist; `coarse` holds the level (dB) at each.
    private let coarseAxis: [Double]
    private var coarse: [Double]
    private let outputAxis: [Double]

    private static let bandSpacing = 3000.0
    private static let upperLimit = 15000.0
    static let periods = 4.0

    static func fftSize(sampleRate: Int) -> Int {
        fftSizeHolding(periods: periods, of: D4C.f0Floor, sampleRate: sampleRate)
    }

    init(sampleRate: Int, outputFFTSize: Int) {
        self.sampleRate = sampleRate
        self.outputFFTSize = outputFFTSize
        fftSize = BandAperiodicity.fftSize(sampleRate: sampleRate)
        forward = ForwardRealFFT(size: fftSize)
        bandFFT = ForwardRealFFT(size: fftSize)
        smoothing = SpectralSmoothing(fftSize: fftSize, sampleRate: sampleRate)
        let binCount = fftSize / 2 + 1
        window = WindowBuffer(capacity: fftSize)
        savedSpectrum = .allocate(capacity: binCount)
        staticCentroid = .allocate(capacity: binCount)
        smoothedPower = .allocate(capacity: binCount)
        groupDelay = .allocate(capacity: binCount)
        smoothedGroupDelay = .allocate(capacity: binCount)
        bandPower = .allocate(capacity: binCount)

        let spacing = BandAperiodicity.bandSpacing
        bandCount = Int(min(BandAperiodicity.upperLimit, Double(sampleRate) / 2.0 - spacing) / spacing)
        bandWindow = Window.nuttall(length: Int(spacing * Double(fftSize) / Double(sampleRate)) * 2 + 1)
        strongestCandidates = .allocate(capacity: 4 * (BandAperiodicity.strongBins(fftSize: fftSize, bandWindowLength: bandWindow.count) + 1))
        coarseAxis = (0...bandCount).map { Double($0) * spacing } + [Double(sampleRate) / 2.0]
        coarse = [-60.0] + [Double](repeating: 0, count: bandCount) + [-1e-12]
        outputAxis = (0...(outputFFTSize / 2)).map { Double($0) * Double(sampleRate) / Double(outputFFTSize) }
    }

    deinit {
        savedSpectrum.deallocate()
        staticCentroid.deallocate()
        smoothedPower.deallocate()
        groupDelay.deallocate()
        smoothedGroupDelay.deallocate()
        bandPower.deallocate()
        strongestCandidates.deallocate()
    }

    /// Bins of a band's group-delay spectrum counted as its periodic peak.
    private static func strongBins(fftSize: Int, bandWindowLength: Int) -> Int {
        Matlab.round(Double(fftSize) * 8.0 / Double(bandWindowLength))
    }

    func estimate(
        _ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream,
        into aperiodicity: UnsafeMutableBufferPointer<Double>
    ) {
        computeStaticCentroid(x, f0: f0, time: time, noise: noise)
        computeSmoothedPower(x, f0: f0, time: time, noise: noise)
        computeStaticGroupDelay(f0: f0)
        computeCoarseAperiodicity(f0: f0)
        interpolate(into: aperiodicity)
    }

    /// A 4-period window of the signal into `forward.waveform`, zero beyond it; returns its length.
    private func window(
        _ x: UnsafeBufferPointer<Double>, shape: WindowShape, f0: Double, time: Double, noise: NoiseStream
    ) -> Int {
        let waveform = forward.waveform
        let length = windowWaveform(
            x, sampleRate: sampleRate, f0: f0, time: time, shape: shape, periods: BandAperiodicity.periods,
            window: window, noise: noise, into: waveform)
        for i in length..<max(length, writtenLength) {
            waveform[i] = 0
        }
        writtenLength = length
        return length
    }

    /// Sum of the energy centroids half a period apart, which cancels their oscillation with time.
    private func computeStaticCentroid(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream) {
        let binCount = fftSize / 2 + 1
        addCentroid(x, f0: f0, time: time - 0.25 / f0, noise: noise, replacing: true)
        addCentroid(x, f0: f0, time: time + 0.25 / f0, noise: noise, replacing: false)
        smoothing.correctDC(UnsafeMutableBufferPointer(rebasing: staticCentroid[0..<binCount]), f0: f0)
    }

    /// Energy centroid along time (Cohen): Re{X · conj(FFT(t·x))} of a 4-period Blackman frame of unit energy.
    private func addCentroid(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream, replacing: Bool) {
        let waveform = forward.waveform
        let length = window(x, shape: .blackman, f0: f0, time: time, noise: noise)
        let norm = VectorMath.sumOfSquares(UnsafeBufferPointer(rebasing: waveform[0..<length])).squareRoot()
        for i in 0..<length {
            waveform[i] /= norm
        }
        forward.execute()
        let spectrum = forward.spectrum
        for bin in 0...(fftSize / 2) {
            savedSpectrum[bin] = spectrum[bin]
        }
        for i in 0..<length {
            waveform[i] *= Double(i) + 1.0
        }
        forward.execute()
        func centroid(_ bin: Int) -> Double {
            spectrum[bin].real * savedSpectrum[bin].real + savedSpectrum[bin].imag * spectrum[bin].imag
        }
        if replacing {
            for bin in 0...(fftSize / 2) { staticCentroid[bin] = centroid(bin) }
        } else {
            for bin in 0...(fftSize / 2) { staticCentroid[bin] += centroid(bin) }
        }
    }

    /// Power spectrum of a 4-period Hann frame, DC-corrected and smoothed over F0.
    private func computeSmoothedPower(_ x: UnsafeBufferPointer<Double>, f0: Double, time: Double, noise: NoiseStream) {
        _ = window(x, shape: .hann, f0: f0, time: time, noise: noise)
        forward.execute()
        let spectrum = forward.spectrum
        for bin in 0...(fftSize / 2) {
            smoothedPower[bin] = spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
        }
        let power = UnsafeMutableBufferPointer(rebasing: smoothedPower[0...(fftSize / 2)])
        smoothing.correctDC(power, f0: f0)
        smoothing.smooth(power, width: f0)
    }

    /// Group delay smoothed over F0 / 2, minus its trend over F0: what is left is the fine structure
    /// that stays flat for periodic bands and fluctuates for noisy ones.
    private func computeStaticGroupDelay(f0: Double) {
        let bins = 0...(fftSize / 2)
        for bin in bins {
            groupDelay[bin] = staticCentroid[bin] / smoothedPower[bin]
        }
        let delay = UnsafeMutableBufferPointer(rebasing: groupDelay[bins])
        smoothing.smooth(delay, width: f0 / 2.0)
        smoothing.smooth(UnsafeBufferPointer(delay), width: f0, into: UnsafeMutableBufferPointer(rebasing: smoothedGroupDelay[bins]))
        for bin in bins {
            groupDelay[bin] -= smoothedGroupDelay[bin]
        }
    }

    /// For each 3 kHz band: the spectrum of the Nuttall-windowed group delay around its centre; the
    /// share of power outside its strongest bins, in dB, then raised for higher F0 and capped at 0 dB.
    private func computeCoarseAperiodicity(f0: Double) {
        let half = fftSize / 2
        let windowHalfLength = bandWindow.count / 2
        let strongBins = BandAperiodicity.strongBins(fftSize: fftSize, bandWindowLength: bandWindow.count)
        let waveform = bandFFT.waveform
        let spectrum = bandFFT.spectrum
        for band in 0..<bandCount {
            let center = Int(BandAperiodicity.bandSpacing * Double(band + 1) * Double(fftSize) / Double(sampleRate))
            for i in 0..<bandWindow.count {
                waveform[i] = groupDelay[center - windowHalfLength + i] * bandWindow[i]
            }
            bandFFT.execute()
            for bin in 0...half {
                bandPower[bin] = spectrum[bin].real * spectrum[bin].real + spectrum[bin].imag * spectrum[bin].imag
            }
            let (weakSum, total) = sumOfSmallest(
                UnsafeBufferPointer(rebasing: bandPower[0...half]), count: half - strongBins, candidates: strongestCandidates)
            let level = 10 * log10(weakSum / total)
            coarse[band + 1] = min(0.0, level + (f0 - 100) / 50.0)
        }
    }

    /// Linear interpolation of the band levels (dB) onto the output bins, as amplitude.
    private func interpolate(into aperiodicity: UnsafeMutableBufferPointer<Double>) {
        coarseAxis.withUnsafeBufferPointer { axis in
            coarse.withUnsafeBufferPointer { levels in
                outputAxis.withUnsafeBufferPointer { bins in
                    Matlab.interp1(x: axis, y: levels, at: bins, into: aperiodicity)
                }
            }
        }
        // 10^(level / 20), as an exponential.
        VectorMath.exponentials(aperiodicity, scale: log(10.0) / 20.0)
    }
}

/// The sum of the `count` smallest values and the sum of all. Only a few values are left out, the largest,
/// so a first pass finds the threshold among a few candidates and a second sums in order below it.
func sumOfSmallest(_ values: UnsafeBufferPointer<Double>, count: Int) -> (smallest: Double, total: Double) {
    withUnsafeTemporaryAllocation(of: Double.self, capacity: max(0, 4 * (values.count - count))) { candidates in
        sumOfSmallest(values, count: count, candidates: candidates)
    }
}

/// `sumOfSmallest`, with `candidates` as scratch: room for four times as many values as are left out.
func sumOfSmallest(
    _ values: UnsafeBufferPointer<Double>, count: Int, candidates: UnsafeMutableBufferPointer<Double>
) -> (smallest: Double, total: Double) {
    let excluded = values.count - count
    guard count > 0, excluded > 0 else {
        let total = values.reduce(0, +)
        return (count > 0 ? total : 0, total)
    }
    precondition(candidates.count >= 4 * excluded, "sumOfSmallest needs room for four candidates a value left out")
    let threshold = largest(excluded, of: values, candidates: UnsafeMutableBufferPointer(rebasing: candidates[0..<(4 * excluded)]))
    // Four running sums of each kind, so that no addition waits for the one before.
    var totals = SIMD4<Double>()
    var smallests = SIMD4<Double>()
    var atOrAbove = 0
    var index = 0
    while index + 4 <= values.count {
        let quad = SIMD4(values[index], values[index + 1], values[index + 2], values[index + 3])
        totals += quad
        let high = quad .>= threshold
        if any(high) {
            for lane in 0..<4 where high[lane] { atOrAbove += 1 }
            smallests += quad.replacing(with: 0, where: high)
        } else {
            smallests += quad
        }
        index += 4
    }
    var smallest = smallests.sum()
    var total = totals.sum()
    for value in values[index...] {
        total += value
        if value < threshold {
            smallest += value
        } else {
            atOrAbove += 1
        }
    }
    // Values equal to the threshold make up the rest of the smallest `count`.
    smallest += Double(count - (values.count - atOrAbove)) * threshold
    return (smallest, total)
}

/// The `rank`-th largest of `values`, with `candidates` (room for four times `rank`) as scratch. A first
/// guess comes from every eighth value; on a smooth spectrum about half as many values again as `rank` lie
/// above it, and only those are collected. If fewer than `rank` do, all values are considered instead.
private func largest(_ rank: Int, of values: UnsafeBufferPointer<Double>, candidates: UnsafeMutableBufferPointer<Double>) -> Double {
    let sampleStride = 8
    let sampleRank = rank * 3 / (2 * sampleStride) + 1
    let sampleCandidates = UnsafeMutableBufferPointer(rebasing: candidates[0..<(4 * sampleRank)])
    let guess = sampleRank * sampleStride <= values.count
        ? largest(sampleRank, of: values, stride: sampleStride, above: -.infinity, candidates: sampleCandidates)
        : nil
    if let guess, let exact = largest(rank, of: values, stride: 1, above: guess, candidates: candidates) {
        return exact
    }
    return largest(rank, of: values, stride: 1, above: -.infinity, candidates: candidates)!
}

/// The `rank`-th largest of every `stride`-th value, if at least `rank` of them exceed `floor`. Values above a
/// rising threshold (at first `floor`) are collected; whenever `candidates` fills, only its `rank` largest
/// stay and the least of them becomes the threshold.
private func largest(
    _ rank: Int, of values: UnsafeBufferPointer<Double>, stride: Int, above floor: Double,
    candidates: UnsafeMutableBufferPointer<Double>
) -> Double? {
    var threshold = floor
    var kept = 0
    var index = 0
    if stride == 1, let base = values.baseAddress {
        // Few values pass a good threshold: the largest of eight is compared, and only a block holding one is opened.
        while index + 8 <= values.count {
            let block = base + index
            if largestOfEight(block) > threshold {
                for lane in 0..<8 {
                    keep(block[lane], rank: rank, in: candidates, kept: &kept, threshold: &threshold)
                }
            }
            index += 8
        }
    }
    while index < values.count {
        keep(values[index], rank: rank, in: candidates, kept: &kept, threshold: &threshold)
        index += stride
    }
    guard kept >= rank else { return nil }
    let collected = UnsafeMutableBufferPointer(rebasing: candidates[0..<kept])
    select(collected, descendingAt: rank - 1)
    return collected[rank - 1]
}

/// The largest of `values[0 ..< 8]`, as a tree of comparisons (no SIMD mask: the standard library compares
/// and reduces those lane by lane).
@inline(__always)
private func largestOfEight(_ values: UnsafePointer<Double>) -> Double {
    max(max(max(values[0], values[1]), max(values[2], values[3])), max(max(values[4], values[5]), max(values[6], values[7])))
}

/// Collects `value` if it exceeds `threshold`; when `candidates` fills, keeps its `rank` largest and raises
/// `threshold` to the least of them.
@inline(__always)
private func keep(
    _ value: Double, rank: Int, in candidates: UnsafeMutableBufferPointer<Double>, kept: inout Int, threshold: inout Double
) {
    guard value > threshold else { return }
    candidates[kept] = value
    kept += 1
    if kept == candidates.count {
        select(candidates, descendingAt: rank - 1)
        kept = rank
        threshold = candidates[rank - 1]
    }
}

/// Partial partitioning in place (quickselect): `values[position]` becomes the value at that place in
/// descending order, with none smaller before it and none larger after it.
private func select(_ values: UnsafeMutableBufferPointer<Double>, descendingAt position: Int) {
    var low = 0
    var high = values.count - 1
    while low < high {
        let pivot = medianOfThree(values[low], values[(low + high) / 2], values[high])
        var i = low
        var j = high
        while i <= j {
            while values[i] > pivot { i += 1 }
            while values[j] < pivot { j -= 1 }
            if i <= j {
                values.swapAt(i, j)
                i += 1
                j -= 1
            }
        }
        if position <= j {
            high = j
        } else if position >= i {
            low = i
        } else {
            break
        }
    }
}

private func medianOfThree(_ a: Double, _ b: Double, _ c: Double) -> Double {
    max(min(a, b), min(max(a, b), c))
}
