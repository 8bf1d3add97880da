import KoeDSP

/// WORLD's synthesis fed one frame at a time, in bounded memory, giving exactly the samples of the
/// whole-signal synthesis however the frames are grouped (`Synthesis.synthesize` is built on it).
///
/// Each output sample gets its F0 and voicing by interpolating the two frames around it, and the phase they
/// accumulate places the pulses; a sample waits for the frame after it. A pulse is rendered once the next
/// pulse is found (its noise lasts until then), and a sample is final once every pulse that can still
/// reach it, up to `fftSize / 2` samples later, is rendered. Only the frames around the samples and pulses
/// still pending and about two FFTs of overlap-add samples are kept; FFT plans and workspaces are reused.
///
/// A causal synthesizer (`isCausal`, for live use) releases samples as soon as their frames have come: each
/// pulse is rendered when found, its noise lasting one period of the F0 there rather than until the next pulse,
/// and its response starts at the pulse (`PulseRenderer`), so a sample waits only for the frame after it. The
/// waveform differs from WORLD's only in those two respects.
///
/// Push frames with `push`, take the samples they complete with `drain`, and end with `finish`. Bad input
/// (a rate, frame period or FFT size out of range, rows of the wrong length, values that are not finite, frames
/// after `finish`) throws `WorldError`; the synthesizer never traps on it. One thread at a time.
public final class StreamingSynthesizer {
    public let sampleRate: Int
    /// Milliseconds between frames.
    public let framePeriod: Double
    public let fftSize: Int
    /// An upper bound on the samples held back after a `drain`: of the output that the frames pushed so far
    /// span (`Synthesis.outputLength(frameCount:)`), at most this many are not yet drained. It is one frame
    /// (samples wait for the frame after them), plus the longest gap between pulses (a pulse waits for the
    /// next), plus half an FFT (the reach of a pulse's response), plus one sample of rounding. The longest gap
    /// is a period at half the lowest F0 WORLD renders, which F0 can reach only at a voicing edge; contours
    /// with F0 well above that floor stay far below the bound. A causal synthesizer holds back one frame and
    /// two samples of rounding.
    public let latency: Int
    /// Whether each pulse is rendered when found and its response starts at the pulse (see the type's notes).
    public let isCausal: Bool

    /// Frame period in seconds.
    private let frameSeconds: Double
    /// WORLD's lowest F0 the FFT size can render (integer division, as in WORLD); lower F0 counts as unvoiced.
    private let lowestF0: Double
    private var frames: FrameWindow
    private let renderer: PulseRenderer
    private var overlapAdd: OverlapAddWindow
    private var timeBase = TimeBase()
    /// Found and interpolated, waiting for the next pulse to fix its noise length.
    private var pending: ExcitationPulse?
    /// Found, not yet interpolated: it waits for the frame after its time, and the time base with it.
    private var uninterpolated: ExcitationPulse?
    /// Samples the time base may reach: WORLD's output length for the frames so far.
    private var sampleLimit = 0
    private var isFinished = false

    /// F0 that paces pulses through unvoiced stretches (WORLD's default F0).
    private static let unvoicedF0 = 500.0
    private static let fullTurn = PhaseWrap.turn

    /// Frames of `fftSize / 2 + 1` bins, `framePeriod` ms apart. Throws if the rate is not supported, the frame
    /// period lies outside `SignalRequirements.framePeriods`, or the FFT size is not one CheapTrick can give at
    /// this rate (even, from three periods of 500 Hz to `CheapTrick.largestFFTSize`).
    public convenience init(sampleRate: Int, framePeriod: Double, fftSize: Int, isCausal: Bool = false) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try SignalRequirements.validateFramePeriod(framePeriod)
        try CheapTrick.validate(fftSize: fftSize, sampleRate: sampleRate)
        self.init(unchecked: sampleRate, framePeriod: framePeriod, fftSize: fftSize, isCausal: isCausal)
    }

    /// A synthesizer for a rate and frame period already validated, and an even FFT size of at least 2.
    package init(unchecked sampleRate: Int, framePeriod: Double, fftSize: Int, isCausal: Bool = false) {
        self.sampleRate = sampleRate
        self.framePeriod = framePeriod
        self.fftSize = fftSize
        self.isCausal = isCausal
        frameSeconds = framePeriod / 1000
        lowestF0 = Double(sampleRate / fftSize) + 1
        frames = FrameWindow(bins: fftSize / 2 + 1)
        renderer = PulseRenderer(fftSize: fftSize, sampleRate: sampleRate, isCausal: isCausal)
        overlapAdd = OverlapAddWindow(capacity: 2 * fftSize)
        latency = StreamingSynthesizer.latencyBound(
            sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize, lowestF0: lowestF0, isCausal: isCausal)
    }

    private static func latencyBound(
        sampleRate: Int, framePeriod: Double, fftSize: Int, lowestF0: Double, isCausal: Bool
    ) -> Int {
        let frame = Int((framePeriod * Double(sampleRate) / 1000).rounded(.up))
        if isCausal { return frame + 2 }
        let slowestF0 = min(unvoicedF0, lowestF0 / 2)
        let longestPulseGap = Int((Double(sampleRate) / slowestF0).rounded(.up)) + 1
        return frame + longestPulseGap + fftSize / 2 + 1
    }

    /// The FFT size of frames of `bins` bins, which must be one CheapTrick accepts.
    static func fftSize(bins: Int, sampleRate: Int) throws(WorldError) -> Int {
        let sizes = CheapTrick.fftSizes(sampleRate: sampleRate)
        let fewest = (sizes.lowerBound + 1) / 2 + 1
        let most = sizes.upperBound / 2 + 1
        guard bins >= fewest, bins <= most else {
            throw .invalidParameters("frames of \(bins) bins do not suit \(sampleRate) Hz: they need \(fewest) to \(most)")
        }
        return (bins - 1) * 2
    }

    /// Makes room for `samples` output samples between drains, on top of a pulse's reach: appending that many
    /// samples' frames before draining then allocates nothing.
    package func reserve(forOutputsOf samples: Int) {
        overlapAdd.reserve(capacity: 2 * fftSize + samples)
    }

    /// Pushes the next frame: its F0 in Hz (0 or below the lowest F0 the FFT size renders: unvoiced), a power
    /// envelope row and an aperiodicity row of `fftSize / 2 + 1` bins. Throws if a row has another length, a
    /// value is not finite, or the stream has finished; the frame is then not pushed.
    public func push(f0: Double, spectrum: [Double], aperiodicity: [Double]) throws(WorldError) {
        guard !isFinished else { throw .streamFinished }
        guard spectrum.count == frames.bins, aperiodicity.count == frames.bins else {
            throw .invalidParameters(
                "a frame needs \(frames.bins) bins of envelope and of aperiodicity (got \(spectrum.count) and \(aperiodicity.count))")
        }
        guard f0.isFinite else { throw .invalidParameters("the frame's F0 is \(f0), not a finite number") }
        try SignalRequirements.requireFinite(spectrum) { "the envelope's bin \($0)" }
        try SignalRequirements.requireFinite(aperiodicity) { "the aperiodicity's bin \($0)" }
        spectrum.withUnsafeBufferPointer { spectrum in
            aperiodicity.withUnsafeBufferPointer { push(f0: f0, spectrum: spectrum, aperiodicity: $0) }
        }
    }

    /// `push` of rows known to hold `fftSize / 2 + 1` finite values, before `finish`.
    package func push(f0: Double, spectrum: UnsafeBufferPointer<Double>, aperiodicity: UnsafeBufferPointer<Double>) {
        precondition(!isFinished && spectrum.count == frames.bins && aperiodicity.count == frames.bins)
        let renderedF0 = f0 < lowestF0 ? 0 : f0
        frames.append(f0: renderedF0, voicing: renderedF0 == 0 ? 0 : 1, spectrum: spectrum, aperiodicity: aperiodicity)
        sampleLimit = Synthesis.outputLength(frameCount: frames.count, sampleRate: sampleRate, framePeriod: framePeriod)
        advance()
        frames.discard(before: oldestFrameNeeded)
    }

    /// Move every output sample that can no longer change into `output` (appending); returns how many.
    public func drain(into output: inout [Double]) -> Int {
        overlapAdd.drain(upTo: finalSampleEnd, into: &output)
    }

    /// No more frames: render the rest (WORLD's end handling, the extrapolated extra frame, last pulse) and drain it.
    /// Once finished, a stream drains nothing more.
    public func finish(into output: inout [Double]) -> Int {
        if !isFinished {
            isFinished = true
            extrapolateExtraFrame()
            advance()
            renderLastPulse()
        }
        return drain(into: &output)
    }

    /// Frames and output samples currently held, for checking that memory stays bounded.
    var storage: (frames: Int, samples: Int) {
        (frames.capacity, overlapAdd.capacity)
    }

    // MARK: Time base

    /// Runs the time base sample by sample as far as the frames allow, rendering pulses on the way.
    private func advance() {
        while true {
            if let pulse = uninterpolated {
                guard interpolateParameters(at: pulse) else { return }
                uninterpolated = nil
                if isCausal {
                    render(pulse, noiseLength: pulse.period)
                } else {
                    pending = pulse
                }
            }
            guard timeBase.nextSample < sampleLimit, let segment = nextSegment() else { return }
            step(segment: segment)
        }
    }

    /// The frame interval `(segment - 1, segment)` holding the next sample, found as WORLD's `interp1` finds it;
    /// nil while its end frame has not arrived. Past the last frame lies the extrapolated extra frame.
    private func nextSegment() -> Int? {
        let time = sampleTime(timeBase.nextSample)
        let last = frames.count
        while timeBase.segment < last, frameTime(timeBase.segment) <= time {
            timeBase.segment += 1
        }
        return isFinished || timeBase.segment < last ? timeBase.segment : nil
    }

    /// Interpolates F0 and voicing at the next sample, accumulates its phase and looks for a pulse.
    private func step(segment: Int) {
        let sample = timeBase.nextSample
        let ends = segmentEnds(segment)
        let start = frameTime(segment - 1)
        let position = (sampleTime(sample) - start) / (frameTime(segment) - start)
        let f0 = interpolate(ends.f0.start, ends.f0.end, at: position)
        let voicing = interpolate(ends.voicing.start, ends.voicing.end, at: position)
        let rate = Double(sampleRate)
        let increment = 2.0 * Double.pi * (voicing > 0.5 ? f0 : StreamingSynthesizer.unvoicedF0) / rate

        if sample == 0 {
            timeBase.totalPhase = increment
            timeBase.previousPhase = PhaseWrap.remainder(increment)
        } else {
            timeBase.totalPhase += increment
            let phase = PhaseWrap.remainder(timeBase.totalPhase)
            if abs(phase - timeBase.previousPhase) > Double.pi {
                found(pulseBefore: sample, phase: phase, period: StreamingSynthesizer.fullTurn / increment)
            }
            timeBase.previousPhase = phase
        }
        timeBase.previousVoicing = voicing
        timeBase.nextSample += 1
    }

    /// F0 and voicing of the frames at either end of `segment`, kept in the time base while the segment lasts
    /// (a frame's values never change once it is appended, nor does the extra frame once set), so that the
    /// per-sample step reads no frame storage.
    private func segmentEnds(_ segment: Int) -> SegmentEnds {
        if let ends = timeBase.segmentEnds, ends.segment == segment { return ends }
        let ends = SegmentEnds(
            segment: segment, f0: (frames.f0(segment - 1), frames.f0(segment)),
            voicing: (frames.voicing(segment - 1), frames.voicing(segment)))
        timeBase.segmentEnds = ends
        return ends
    }

    /// The wrapped phase jumped between `sample - 1` and `sample`: a pulse sits on `sample - 1`, and the
    /// linear zero crossing of the phase between them gives its sub-sample position. `period`: samples per
    /// turn of the phase there, the causal renderer's noise length.
    private func found(pulseBefore sample: Int, phase: Double, period: Double) {
        let before = timeBase.previousPhase - StreamingSynthesizer.fullTurn
        let crossing = -before / (phase - before)
        let pulse = ExcitationPulse(
            index: sample - 1, time: sampleTime(sample - 1), timeShift: crossing / Double(sampleRate),
            isVoiced: timeBase.previousVoicing > 0.5, period: Int(period.rounded()))
        // WORLD's pulse takes its noise up to the next pulse: the one pending is complete now. `advance` goes on
        // with this one as soon as its parameters can be interpolated.
        if !isCausal, let previous = pending {
            render(previous, noiseLength: pulse.index - previous.index)
            pending = nil
        }
        uninterpolated = pulse
    }

    private func interpolate(_ from: Double, _ to: Double, at position: Double) -> Double {
        from + position * (to - from)
    }

    private func sampleTime(_ sample: Int) -> Double {
        Double(sample) / Double(sampleRate)
    }

    private func frameTime(_ frame: Int) -> Double {
        Double(frame) * frameSeconds
    }

    /// The frame at or before `time`, rounded as the pulse interpolation rounds it.
    private func frame(before time: Double) -> Int {
        Int((time / frameSeconds).rounded(.down))
    }

    // MARK: Pulses

    /// Loads the renderer with the parameters at `pulse`'s time, from the frames on either side of it (past
    /// the last frame, the last frame); false while the later frame has not arrived.
    private func interpolateParameters(at pulse: ExcitationPulse) -> Bool {
        let position = pulse.time / frameSeconds
        var earlier = frame(before: pulse.time)
        var later = Int(position.rounded(.up))
        if isFinished {
            earlier = min(frames.count - 1, earlier)
            later = min(frames.count - 1, later)
        } else if later >= frames.count {
            return false
        }
        let weight = position - Double(earlier)
        frames.withRows(earlier, later) { earlierRows, laterRows in
            renderer.interpolate(from: earlierRows, to: earlier == later ? nil : laterRows, weight: weight)
        }
        return true
    }

    /// Renders `pulse` and adds its response with time zero one sample after its index, where WORLD places it.
    private func render(_ pulse: ExcitationPulse, noiseLength: Int) {
        renderer.render(pulse, noiseLength: noiseLength)
        overlapAdd.add(renderer.response, at: pulse.index + 1 - renderer.timeZero)
    }

    /// The last pulse has no successor, so no noise.
    private func renderLastPulse() {
        if let last = pending {
            render(last, noiseLength: 0)
            pending = nil
        }
    }

    // MARK: End of stream

    /// WORLD closes the contour with one frame past the end that continues the last slope (a single frame has
    /// no slope and is held), so the last samples still lie between two frames.
    private func extrapolateExtraFrame() {
        let count = frames.count
        guard count > 0 else { return }
        func extrapolate(_ value: (Int) -> Double) -> Double {
            count >= 2 ? value(count - 1) * 2 - value(count - 2) : value(count - 1)
        }
        frames.extra = (extrapolate(frames.f0), extrapolate(frames.voicing))
    }

    // MARK: Bookkeeping

    /// Index of the earliest pulse still to be rendered, or where the next pulse could be found.
    private var earliestUnrenderedPulse: Int {
        pending?.index ?? uninterpolated?.index ?? max(0, timeBase.nextSample - 1)
    }

    /// Samples before this are final: no pulse still to come reaches back that far.
    private var finalSampleEnd: Int {
        isFinished ? sampleLimit : max(0, earliestUnrenderedPulse + 1 - renderer.timeZero)
    }

    /// Frames before this serve no sample or pulse still to come; the last two stay for the extrapolation.
    private var oldestFrameNeeded: Int {
        let nextPulse = uninterpolated?.index ?? max(0, timeBase.nextSample - 1)
        return min(timeBase.segment - 1, frames.count - 2, frame(before: sampleTime(nextPulse)))
    }
}

/// The accumulated phase modulo 2π exactly as `fmod` (`truncatingRemainder`) gives it, without its cost in
/// the per-sample loop. With `n` whole turns, `x - n * 2π` is exact when 2π is split into a 26-bit head and
/// its tail: both products are exact for `n < 2²⁶`, the first difference is exact (the operands are within a
/// factor of two), and the result is representable, so the second rounds to itself.
enum PhaseWrap {
    static let turn = 2.0 * Double.pi
    private static let turnHead = Double(bitPattern: turn.bitPattern & ~((1 << 27) - 1))
    private static let turnTail = turn - turnHead
    private static let largestTurns = Double(1 << 26)

    static func remainder(_ x: Double) -> Double {
        if x >= 0 && x < turn { return x }
        let turns = (x / turn).rounded(.down)
        guard x > 0, turns < largestTurns else { return x.truncatingRemainder(dividingBy: turn) }
        let remainder = (x - turns * turnHead) - turns * turnTail
        // The quotient may round across a whole number; then the neighbouring count is the right one.
        if remainder < 0 {
            return (x - (turns - 1) * turnHead) - (turns - 1) * turnTail
        }
        if remainder >= turn {
            return (x - (turns + 1) * turnHead) - (turns + 1) * turnTail
        }
        return remainder
    }
}

/// Where the per-sample time base stands.
private struct TimeBase {
    var nextSample = 0
    /// End frame of the interval last found; it only moves forward, as in WORLD's `interp1`.
    var segment = 1
    var totalPhase = 0.0
    var previousPhase = 0.0
    var previousVoicing = 0.0
    var segmentEnds: SegmentEnds?
}

/// F0 and voicing at the start and end frames of one interval between frames.
private struct SegmentEnds {
    let segment: Int
    let f0: (start: Double, end: Double)
    let voicing: (start: Double, end: Double)
}

/// The most recent frames in a ring that grows only when more frames are needed at once than it holds.
private struct FrameWindow {
    let bins: Int
    /// Frames appended so far.
    private(set) var count = 0
    /// The oldest frame kept.
    private(set) var first = 0
    /// A power of two, so a frame's slot is its index masked.
    private(set) var capacity = 4
    private var f0Values: [Double]
    private var voicingValues: [Double]
    private var spectra: [Double]
    private var aperiodicities: [Double]
    /// F0 and voicing of the frame past the end, once the stream is finished.
    var extra = (f0: 0.0, voicing: 0.0)

    init(bins: Int) {
        self.bins = bins
        f0Values = [Double](repeating: 0, count: capacity)
        voicingValues = [Double](repeating: 0, count: capacity)
        spectra = [Double](repeating: 0, count: capacity * bins)
        aperiodicities = [Double](repeating: 0, count: capacity * bins)
    }

    func f0(_ frame: Int) -> Double {
        frame == count ? extra.f0 : f0Values[slot(frame)]
    }

    func voicing(_ frame: Int) -> Double {
        frame == count ? extra.voicing : voicingValues[slot(frame)]
    }

    mutating func append(
        f0: Double, voicing: Double, spectrum: UnsafeBufferPointer<Double>, aperiodicity: UnsafeBufferPointer<Double>
    ) {
        if count - first == capacity { grow() }
        let slot = slot(count)
        f0Values[slot] = f0
        voicingValues[slot] = voicing
        let row = slot * bins
        spectra.withUnsafeMutableBufferPointer { spectra in
            aperiodicities.withUnsafeMutableBufferPointer { aperiodicities in
                for i in 0..<bins {
                    spectra[row + i] = spectrum[i]
                    aperiodicities[row + i] = aperiodicity[i]
                }
            }
        }
        count += 1
    }

    mutating func discard(before frame: Int) {
        first = max(first, min(frame, count))
    }

    func withRows<Result>(_ a: Int, _ b: Int, _ body: (FrameRows, FrameRows) -> Result) -> Result {
        assert(a >= first && b >= first && max(a, b) < count, "frame no longer kept")
        return spectra.withUnsafeBufferPointer { spectra in
            aperiodicities.withUnsafeBufferPointer { aperiodicities in
                func rows(_ frame: Int) -> FrameRows {
                    let range = (slot(frame) * bins)..<((slot(frame) + 1) * bins)
                    return FrameRows(
                        spectrum: UnsafeBufferPointer(rebasing: spectra[range]),
                        aperiodicity: UnsafeBufferPointer(rebasing: aperiodicities[range]))
                }
                return body(rows(a), rows(b))
            }
        }
    }

    private func slot(_ frame: Int) -> Int {
        frame & (capacity - 1)
    }

    /// Doubles the ring, moving each kept frame to its slot in the larger ring.
    private mutating func grow() {
        let old = self
        capacity *= 2
        f0Values = [Double](repeating: 0, count: capacity)
        voicingValues = [Double](repeating: 0, count: capacity)
        spectra = [Double](repeating: 0, count: capacity * bins)
        aperiodicities = [Double](repeating: 0, count: capacity * bins)
        for frame in first..<count {
            let from = old.slot(frame)
            let to = slot(frame)
            f0Values[to] = old.f0Values[from]
            voicingValues[to] = old.voicingValues[from]
            for i in 0..<bins {
                spectra[to * bins + i] = old.spectra[from * bins + i]
                aperiodicities[to * bins + i] = old.aperiodicities[from * bins + i]
            }
        }
    }
}

/// Output samples from the first not yet drained, summing pulse responses. Drained samples are dropped
/// when room is needed; the buffer grows only when more undrained samples are pending than it holds.
private struct OverlapAddWindow {
    private var samples: [Double]
    /// Output index of `samples[0]`.
    private var start = 0
    /// Output index of the first sample not yet drained.
    private var drained = 0

    init(capacity: Int) {
        samples = [Double](repeating: 0, count: capacity)
    }

    var capacity: Int { samples.count }

    /// Grows to hold `capacity` samples, as `makeRoom` would when that many are pending.
    mutating func reserve(capacity: Int) {
        if capacity > samples.count {
            samples.append(contentsOf: repeatElement(0.0, count: capacity - samples.count))
        }
    }

    /// Adds `response` with its first element at output index `offset`; indices before 0 fall off.
    mutating func add(_ response: UnsafeBufferPointer<Double>, at offset: Int) {
        let lower = max(0, -offset)
        precondition(offset + lower >= drained, "a drained sample cannot change")
        makeRoom(through: offset + response.count)
        let base = offset - start
        samples.withUnsafeMutableBufferPointer { samples in
            let destination = UnsafeMutableBufferPointer(rebasing: samples[(base + lower)..<(base + response.count)])
            let source = UnsafeBufferPointer(rebasing: response[lower...])
            for j in destination.indices {
                destination[j] += source[j]
            }
        }
    }

    /// Appends the samples from the first undrained one up to `end` to `output`; returns how many.
    mutating func drain(upTo end: Int, into output: inout [Double]) -> Int {
        guard end > drained else { return 0 }
        let stored = min(end, start + samples.count)
        if stored > drained {
            output.append(contentsOf: samples[(drained - start)..<(stored - start)])
        }
        if end > stored {
            output.append(contentsOf: repeatElement(0.0, count: end - max(stored, drained)))
        }
        let count = end - drained
        drained = end
        return count
    }

    /// Makes output indices up to `end` addressable, first by dropping drained samples, else by growing.
    private mutating func makeRoom(through end: Int) {
        guard end > start + samples.count else { return }
        let kept = max(0, start + samples.count - drained)
        let shift = samples.count - kept
        for i in 0..<kept { samples[i] = samples[i + shift] }
        for i in kept..<samples.count { samples[i] = 0 }
        start = drained
        if end - start > samples.count {
            samples.append(contentsOf: repeatElement(0.0, count: max(samples.count, end - start - samples.count)))
        }
    }
}
