import KoeDSP

/// DIO on a signal that arrives in pieces: every frame's F0 is handed out once, final, a fixed look-ahead after
/// its centre.
///
/// Each input sample is filtered once per band, in fixed blocks, through `Dio.estimate`'s filters (by its
/// overlap-save; live mode's short blocks by partitioned convolution, equal to rounding), and the events,
/// candidates and contour repair run through the same code. A frame is settled once the
/// input reaches `lookAhead` past it, from everything the filtered signal then reveals: its own events, and the
/// candidates of the frames after it, through which voiced runs may extend back to it. Whole-signal DIO, which
/// sees the end, differs in three ways:
/// - It subtracts the signal's mean, which a stream cannot know; the stream subtracts the mean of its opening
///   instead, the samples up to its first frame's look-ahead (of the whole signal, if it ends sooner). The
///   low-cut removes DC anyway: an offset only shifts the band signals within its reach (20 ms) of either end,
///   so the frames there agree when the signal's offset is steady. (In digital silence less an offset the bands
///   hold only rounding noise, where DIO's voicing, WORLD's too, is chance: frames there may differ.)
/// - Its frames near a settling frame's look-ahead see events further on; here their candidates come from the
///   events seen so far, as if the signal ended there.
/// - Its contour repair (step 4) extends voiced runs backwards arbitrarily far; here a run starting past the
///   look-ahead cannot reach a settled frame. This is the difference that matters: with 80 ms, about one frame in
///   250 of the project's speech corpus is voiced differently, and runs there reach back up to 200 ms.
/// `speed` is not used: decimation is a zero-phase filter over the whole signal, so streaming runs at full rate.
///
/// Live mode (`Options.live`) settles a frame any look-ahead after its centre, from 0 on, in 5 ms blocks. A
/// band's filtered signal is final only its reach (the low-cut's 20 ms plus half its Nuttall window) before
/// the input's end; past that, each block continues the band with provisional samples: the input through the
/// band's Nuttall window alone, which needs only half the window ahead, less the low-cut's slow part held from
/// the last final sample (below 50 Hz, it hardly moves over 20 ms). The events of both give the candidates of
/// the frames from the one settling to the last whose centre the input has reached, and contour repair runs over
/// them as above; nothing provisional is kept, so each block's provisional samples start again from the final
/// ones. Frames past a band's last event interval take that interval's frequency: WORLD's linear extrapolation
/// from the last two, fine at a signal's end, turns the noise of provisional intervals into jumps that unvoice
/// frames. Unless the interval still open, from the last event to the input's end, is longer already: a band
/// without events (digital silence) would otherwise hold its last frequency, where whole-signal DIO sees one
/// long interval, a frequency no band accepts. Then, frame by frame, `Dio.LiveVoicing` decides the voicing from
/// DIO's contour and the input's periodicity (`Dio.Periodicity`, over the samples the look-ahead brought): DIO's
/// voiced frames stay voiced, and a running voice is held through the frames the window leaves unvoiced, which
/// whole-signal DIO reaches by extending runs backwards from a start up to 200 ms later (`make bench-live`
/// measures the voicing against whole-signal DIO's on speech).
package final class StreamingDio {
    package struct Options: Sendable, Equatable {
        /// DIO's settings; `speed` is ignored.
        var dio = Dio.Options()
        /// Live mode: frames settle a short look-ahead after their centre, from band signals that are not yet
        /// final there (see `StreamingDio`); `lookAhead` may then be anything from 0, and defaults to
        /// `liveLookAhead`, and blocks default to 5 ms.
        package var live = false
        /// Milliseconds of input past a frame's centre before its F0 is settled. Everything up to there counts:
        /// the frame's events, and the frames after it through which voiced runs may extend back to it. Outside
        /// live mode at least the lowest band's filter reach, 30 ms, plus the few frames contour repair needs;
        /// default 80 ms, or `liveLookAhead` in live mode.
        package var lookAhead: Double {
            get { chosenLookAhead ?? (live ? Self.liveLookAhead : 80) }
            set { chosenLookAhead = newValue }
        }
        /// Input samples filtered per block; nil: 20 ms, 5 ms in live mode. Frames settle a block at a time, so
        /// a block adds to the latency (and to some frames' look-ahead); shorter blocks cost more.
        var blockLength: Int?
        private var chosenLookAhead: Double?

        /// Live mode's default look-ahead, in milliseconds.
        static let liveLookAhead = 30.0

        package init() {}
    }

    let sampleRate: Int
    let options: Options
    /// Once `latency` samples past a frame's centre have arrived, `push` has handed out its F0.
    package let latency: Int
    /// Input samples filtered together; frames settle only when a block completes.
    package var blockLength: Int { filters.blockLength }

    private let samplesPerFrame: Double
    /// Input samples past a frame's centre that its settling waits for: `Options.lookAhead` rounded up, and
    /// outside live mode no less than that mode's least.
    package let lookAheadSamples: Int
    /// Per band, input samples past a filtered sample that it depends on; the first band's is the longest.
    private let bandReaches: [Int]
    private var filters: Dio.BandFilterBank
    private var events: [Dio.BandEvents]
    /// Live mode: per band, `events` continued with the band's provisional samples of the latest block.
    private var provisionalEvents: [Dio.BandEvents]
    private var cursors: [Dio.EventCursor]
    private let scorers: [Dio.CandidateScorer]
    private var repair: Dio.ContourRepair
    private var windowCandidates: [Double] = []
    private var windowScores: [Double] = []
    /// The frames whose rows `windowCandidates` and `windowScores` hold, and the input horizon they were
    /// filled for (nil: another horizon, or live mode's provisional events, which no later window can reuse).
    private var windowFrames = 0..<0
    private var windowHorizon: Int?
    private var final: [Double] = []
    private var isFinished = false
    /// Input samples whose mean is subtracted from every sample, held until they have all arrived; the push
    /// that completes them settles every frame they reveal.
    let openingLength: Int
    private var opening: [Double] = []
    /// The opening's mean, once known.
    private var offset: Double?
    /// The latest samples less the offset, reused from call to call.
    private var centred: [Double] = []
    /// Live mode: the input the voicing decision measures periodicity on, and the decision.
    private var periodicity: Dio.Periodicity
    private var voicing: Dio.LiveVoicing

    package init(sampleRate: Int, options: Options = Options()) {
        self.sampleRate = sampleRate
        self.options = options
        let rate = Double(sampleRate)
        let ladder = Dio.Ladder(rate: rate, options: options.dio)
        samplesPerFrame = options.dio.framePeriod * rate / 1000
        let blockLength = max(1, options.blockLength ?? Int(rate * (options.live ? 0.005 : 0.02)))
        filters = Dio.BandFilterBank(ladder: ladder, blockLength: blockLength, live: options.live)
        bandReaches = ladder.reaches
        events = Array(repeating: Dio.BandEvents(rate: rate), count: ladder.bandCount)
        provisionalEvents = options.live ? events : []
        cursors = Array(repeating: Dio.EventCursor(), count: ladder.bandCount)
        scorers = ladder.boundaries.map { Dio.CandidateScorer(boundary: $0, options: options.dio) }
        repair = Dio.ContourRepair(bands: ladder.bandCount, options: options.dio)
        periodicity = Dio.Periodicity(rate: rate, f0Floor: options.dio.f0Floor)
        voicing = Dio.LiveVoicing(options: options.dio, margin: repair.voiceRangeMinimum)
        let requested = options.lookAhead.isFinite ? min(max(options.lookAhead, 0), 1e7) : 0
        let asked = Int((requested * rate / 1000).rounded(.up))
        let shortest = bandReaches[0] + Int((Double(repair.halfRange + 1) * samplesPerFrame).rounded(.up)) + 1
        lookAheadSamples = options.live ? asked : max(shortest, asked)
        latency = lookAheadSamples + blockLength + 1
        openingLength = lookAheadSamples + blockLength
        opening.reserveCapacity(openingLength)
        // A band holds the intervals from the settling frame's on, which the filtered samples past it reveal: at
        // most its look-ahead, a block, a frame and, provisionally, the lowest band's reach. An event of a kind
        // needs two samples, so making room for half as many intervals, plus those not yet dropped, means no
        // signal makes the events allocate once built.
        let heldSamples = lookAheadSamples + 2 * blockLength + Int(samplesPerFrame.rounded(.up)) + bandReaches[0]
        let heldIntervals = heldSamples / 2 + Dio.EventSeries.dropBatch + 2
        for band in events.indices {
            events[band].reserveCapacity(heldIntervals)
        }
        for band in provisionalEvents.indices {
            provisionalEvents[band].reserveCapacity(heldIntervals)
        }
    }

    /// Makes room for pushes of up to `samples` samples: such a push then allocates nothing once the stream has
    /// begun (the opening, held until it is complete, has its room from the start).
    func reserve(forPushesOf samples: Int) {
        // The frames a block's settling looks at: from the one settling to the input's end.
        let windowFrames = Int((Double(lookAheadSamples + 2 * blockLength + samples) / samplesPerFrame).rounded(.up)) + 2
        windowCandidates.reserveCapacity(windowFrames * events.count)
        windowScores.reserveCapacity(windowFrames * events.count)
        final.reserveCapacity(windowFrames)
        repair.reserve(windowFrames: windowFrames)
        centred.reserveCapacity(max(samples, openingLength))
        filters.reserve(forPushesOf: max(samples, openingLength))
        if options.live {
            // Held: from the reach before the settling frame to the input's end, a push's samples, and as many
            // again before half can be discarded.
            periodicity.reserveCapacity(2 * (periodicity.reach + lookAheadSamples + blockLength + max(samples, openingLength)))
        }
    }

    /// Frames handed out so far.
    var finalFrameCount: Int { repair.drainedCount }

    /// Every frame's F0 of `signal` pushed in pieces of `chunk` samples, then finished: the whole output of a fresh
    /// stream, the same for any chunk.
    package func f0(streaming signal: [Double], chunk: Int) -> [Double] {
        var f0: [Double] = []
        var start = 0
        while start < signal.count {
            let end = min(signal.count, start + chunk)
            f0 += push(Array(signal[start..<end]))
            start = end
        }
        return f0 + finish()
    }

    /// Input samples and band events held for frames still to come.
    var heldState: (samples: Int, intervals: Int) {
        (filters.heldSampleCount, events.reduce(0) { $0 + $1.heldIntervalCount })
    }

    /// Takes the next samples; returns the F0 (Hz, 0 where unvoiced) of the frames that became final, in order.
    package func push(_ samples: [Double]) -> [Double] {
        assert(!isFinished, "no samples can follow finish")
        final.removeAll(keepingCapacity: true)
        guard offset == nil else {
            filter(samples[...])
            return final
        }
        let toOpening = min(samples.count, openingLength - opening.count)
        opening.append(contentsOf: samples[..<toOpening])
        if opening.count == openingLength {
            filterOpening(isWholeSignal: false)
            filter(samples[toOpening...])
        }
        return final
    }

    /// No more samples: returns the F0 of every remaining frame of WORLD's frame count for the whole stream.
    func finish() -> [Double] {
        assert(!isFinished, "finish can be called once")
        isFinished = true
        final.removeAll(keepingCapacity: true)
        let length = filters.received + opening.count
        if offset == nil {
            filterOpening(isWholeSignal: true)
        }
        // Whole-signal DIO analyses one sample past the end, a zero less the mean, and nothing beyond.
        filter([0][...])
        filters.finish(through: length) { band, _, values in
            events[band].append(contentsOf: UnsafeBufferPointer(values))
        }
        let frameCount = F0Contour.frameCount(samples: length, sampleRate: sampleRate, framePeriod: options.dio.framePeriod)
        let first = repair.drainedCount
        fillWindow(frames: first..<frameCount, horizon: nil)
        drain(frameCount: frameCount)
        if options.live {
            for row in final.indices {
                final[row] = decideVoicing(frame: first + row, dio: final[row], row: row, frameCount: frameCount, available: length)
            }
        }
        return final
    }

    /// Takes the opening's mean as the offset and filters the opening. When the stream ended within it, the
    /// mean is whole-signal DIO's own: over the signal and the zero after it.
    private func filterOpening(isWholeSignal: Bool) {
        let count = opening.count + (isWholeSignal ? 1 : 0)
        offset = count == 0 ? 0 : opening.reduce(0, +) / Double(count)
        filter(opening[...])
        opening.removeAll(keepingCapacity: true)
    }

    /// Filters the samples less the offset, settling the frames whose look-ahead they complete.
    private func filter(_ samples: ArraySlice<Double>) {
        let offset = offset ?? 0
        centred.removeAll(keepingCapacity: true)
        centred.append(contentsOf: samples)
        for index in centred.indices {
            centred[index] -= offset
        }
        if options.live {
            periodicity.discard(before: frameCentre(repair.drainedCount) - periodicity.reach)
            periodicity.push(centred)
        }
        // The bank makes provisional band signals only in live mode.
        filters.push(centred) { band, _, values in
            events[band].append(contentsOf: UnsafeBufferPointer(values))
        } provisional: { band, first, values in
            continueProvisionally(band: band, first: first, values: values)
        } afterBlock: { inputThrough in
            while frameCentre(repair.drainedCount) + lookAheadSamples <= inputThrough {
                settleNextFrame(inputThrough: inputThrough)
            }
        }
    }

    /// Live mode: the band's events so far, continued with its provisional samples from `first` on. Those lack
    /// the low-cut, whose output is the band's less a slow part (below 50 Hz); that part, the difference at the
    /// band's last final sample, is held and subtracted.
    private func continueProvisionally(band: Int, first: Int, values: UnsafeMutableBufferPointer<Double>) {
        let final = events[band].sampleCount
        let skip = final - first
        guard skip >= 0, skip <= values.count else { return }
        let slow = skip >= 1 ? values[skip - 1] - events[band].lastSample : 0
        provisionalEvents[band].copy(events[band], from: cursors[band])
        // One mutating call for the whole span: appending sample by sample through the array costs an
        // exclusivity and uniqueness check each.
        provisionalEvents[band].append(contentsOf: UnsafeBufferPointer(rebasing: values[skip...]), less: slow)
    }

    private func frameCentre(_ frame: Int) -> Int {
        Int((Double(frame) * samplesPerFrame).rounded())
    }

    /// Settles the next frame from everything the input filtered so far reveals: candidates of the frames from
    /// it to where the lowest band's filtered signal ends. Live, from the final and provisional events, the
    /// candidates of the frames from it to the last whose centre the input has reached (measured on speech,
    /// bench/Micro's live-f0, this window agrees best with whole-signal DIO; one ending half a window or a window of
    /// the lowest band earlier, where the provisional band signals end, agrees less).
    private func settleNextFrame(inputThrough inputHorizon: Int) {
        let frame = repair.drainedCount
        let windowEnd = options.live ? inputHorizon : inputHorizon - bandReaches[0]
        var last = frame
        while frameCentre(last + 1) <= windowEnd {
            last += 1
        }
        if options.live {
            fillWindow(frames: frame..<(last + 1), horizon: nil, from: provisionalEvents, holdingLast: true)
            // The cursors index intervals of the final events; those revealed only provisionally may not survive.
            for band in events.indices {
                let counts = events[band].counts
                var positions = cursors[band].positions
                positions.0 = max(1, min(positions.0, counts.0 - 1))
                positions.1 = max(1, min(positions.1, counts.1 - 1))
                positions.2 = max(1, min(positions.2, counts.2 - 1))
                positions.3 = max(1, min(positions.3, counts.3 - 1))
                cursors[band].positions = positions
            }
        } else {
            fillWindow(frames: frame..<(last + 1), horizon: inputHorizon)
        }
        drain(frameCount: nil)
        if options.live {
            final[final.count - 1] = decideVoicing(
                frame: frame, dio: final[final.count - 1], row: 0, frameCount: nil, available: inputHorizon + 1)
        }
        for band in events.indices {
            events[band].dropIntervals(before: cursors[band])
        }
    }

    /// Every band's candidate and score for `frames`, from the events the input up to `horizon` reveals
    /// (all events when nil). Every frame a block settles sees the same input horizon, so the next frame's window
    /// is the last one's without its first rows: those are kept rather than filled again.
    private func fillWindow(frames: Range<Int>, horizon: Int?) {
        if let horizon, horizon == windowHorizon, frames.upperBound == windowFrames.upperBound,
           frames.lowerBound >= windowFrames.lowerBound {
            let settledCells = (frames.lowerBound - windowFrames.lowerBound) * events.count
            windowCandidates.removeFirst(settledCells)
            windowScores.removeFirst(settledCells)
            windowFrames = frames
            return
        }
        fillWindow(frames: frames, horizon: horizon, from: events, holdingLast: false)
        windowHorizon = horizon
    }

    /// `holdingLast`: frames past a band's last interval take its frequency, or the open interval's (see
    /// `Dio.EventSeries.value`).
    private func fillWindow(frames: Range<Int>, horizon: Int?, from events: [Dio.BandEvents], holdingLast: Bool) {
        let bands = events.count
        windowFrames = frames
        windowHorizon = nil
        windowCandidates.removeAll(keepingCapacity: true)
        windowCandidates.append(contentsOf: repeatElement(0, count: frames.count * bands))
        windowScores.removeAll(keepingCapacity: true)
        windowScores.append(contentsOf: repeatElement(0, count: frames.count * bands))
        for band in 0..<bands {
            let snapshot = events[band].snapshot(revealedBy: horizon.map { $0 - bandReaches[band] })
            var cursor = cursors[band]
            for (row, frame) in frames.enumerated() {
                let time = Double(frame) * options.dio.framePeriod / 1000.0
                let frequencies = events[band].eventFrequencies(
                    at: time, in: snapshot, holdingLast: holdingLast, cursor: &cursor)
                let scored = scorers[band].score(frequencies)
                windowCandidates[row * bands + band] = scored.candidate
                windowScores[row * bands + band] = scored.score
                if row == 0 {
                    cursors[band] = cursor
                }
            }
        }
    }

    private func drain(frameCount: Int?) {
        windowCandidates.withUnsafeBufferPointer { candidates in
            windowScores.withUnsafeBufferPointer { scores in
                repair.drain(candidates: candidates, scores: scores, frameCount: frameCount, into: &final)
            }
        }
    }

    /// Live mode: the F0 of `frame`, given its DIO F0 and the window's row `row` of candidates, from the input
    /// before `available`.
    private func decideVoicing(frame: Int, dio: Double, row: Int, frameCount: Int?, available: Int) -> Double {
        let bands = events.count
        let centre = frameCentre(frame)
        let cells = (row * bands)..<((row + 1) * bands)
        return windowCandidates.withUnsafeBufferPointer { candidates in
            windowScores.withUnsafeBufferPointer { scores in
                voicing.decide(
                    frame: frame, dio: dio, candidates: UnsafeBufferPointer(rebasing: candidates[cells]),
                    scores: UnsafeBufferPointer(rebasing: scores[cells]),
                    ahead: Dio.LiveVoicing.Ahead(
                        candidates: UnsafeBufferPointer(rebasing: candidates[cells.upperBound...]),
                        scores: UnsafeBufferPointer(rebasing: scores[cells.upperBound...]), bands: bands),
                    peak: periodicity.peak(
                        around: centre, halfWidth: Int(Dio.LiveVoicing.peakHalfSpan * periodicity.rate),
                        available: available),
                    frameCount: frameCount
                ) { [periodicity] f0 in
                    periodicity.correlation(around: centre, f0: f0, available: available)
                }
            }
        }
    }
}
