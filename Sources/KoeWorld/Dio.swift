import KoeDSP

/// WORLD's DIO F0 estimator (Distributed Inline-filter Operation).
///
/// The signal is low-passed at a ladder of cut-off frequencies. In each band the spacing of four event
/// types (rising and falling zero crossings, peaks, dips) gives an F0 candidate per frame, scored by how much
/// the four disagree; the steadiest candidate wins, and four passes over the contour remove jumps and
/// extend voiced runs into their edges. Numbers follow WORLD's `Dio` step for step, except that the bands are
/// filtered block by block (overlap-save) rather than with one FFT of the whole signal: the same taps, equal
/// up to rounding.
///
/// `StreamingDio` runs the same bands, events, candidates and contour passes on a signal that arrives in pieces.
public struct Dio: F0Estimator {
    public struct Options: Sendable, Equatable, Codable {
        /// Time between frame centres, in milliseconds (WORLD: 5 ms).
        public var framePeriod = 5.0
        /// Lowest F0 searched, in Hz (WORLD's `kFloorF0`, 71 Hz).
        public var f0Floor = 71.0
        /// Highest F0 searched, in Hz (WORLD's `kCeilF0`, 800 Hz).
        public var f0Ceil = 800.0
        /// Low-pass bands per octave between floor and ceiling, above 0 and at most 100 (WORLD: 2).
        public var channelsInOctave = 2.0
        /// Decimation factor before analysis, clamped to 1...12; 1 analyses at full rate (WORLD: 1).
        public var speed = 1
        /// Largest relative F0 change between neighbouring frames that stays voiced (WORLD: 0.1).
        public var allowedRange = 0.1

        public init() {}
    }

    public let sampleRate: Int
    public let options: Options

    /// Throws if the rate is not supported or an option is out of range.
    public init(sampleRate: Int, options: Options = Options()) throws(WorldError) {
        try Self.validate(options, sampleRate: sampleRate)
        self.sampleRate = sampleRate
        self.options = options
    }

    /// The most bands per octave accepted; WORLD uses 2.
    public static let mostChannelsInOctave = 100.0

    public var framePeriod: Double { options.framePeriod }
    public var f0Floor: Double { options.f0Floor }

    /// Throws unless `options` suit DIO at `sampleRate`; `speed` needs no check, as any value is clamped.
    static func validate(_ options: Options, sampleRate: Int) throws(WorldError) {
        try validate(
            sampleRate: sampleRate, framePeriod: options.framePeriod, f0Floor: options.f0Floor, f0Ceil: options.f0Ceil)
        guard options.channelsInOctave > 0, options.channelsInOctave <= mostChannelsInOctave else {
            throw .invalidOption(
                "DIO's channels in octave must be above 0 and at most \(mostChannelsInOctave) (got \(options.channelsInOctave))")
        }
        guard options.allowedRange.isFinite, options.allowedRange >= 0 else {
            throw .invalidOption("DIO's allowed range must be a finite number, 0 or more (got \(options.allowedRange))")
        }
    }

    public func estimate(_ signal: [Double]) throws(WorldError) -> F0Contour {
        try validate(signal)
        return estimate(unchecked: signal)
    }

    /// `estimate` of a signal known to meet `SignalRequirements`.
    func estimate(unchecked signal: [Double]) -> F0Contour {
        let frameCount = F0Contour.frameCount(
            samples: signal.count, sampleRate: sampleRate, framePeriod: options.framePeriod)
        let time = F0Contour.timeAxis(frameCount: frameCount, framePeriod: options.framePeriod)
        let (samples, rate) = analysedSignal(signal)
        let ladder = Ladder(rate: rate, options: options)
        let events = bandEvents(of: samples, ladder: ladder, rate: rate)
        var candidates = [Double](repeating: 0, count: frameCount * ladder.bandCount)
        var scores = candidates
        for band in 0..<ladder.bandCount {
            let scorer = CandidateScorer(boundary: ladder.boundaries[band], options: options)
            let snapshot = events[band].snapshot()
            var cursor = EventCursor()
            for frame in 0..<frameCount {
                let scored = scorer.score(events[band].eventFrequencies(at: time[frame], in: snapshot, cursor: &cursor))
                candidates[frame * ladder.bandCount + band] = scored.candidate
                scores[frame * ladder.bandCount + band] = scored.score
            }
        }
        var repair = ContourRepair(bands: ladder.bandCount, options: options)
        var f0: [Double] = []
        f0.reserveCapacity(frameCount)
        candidates.withUnsafeBufferPointer { candidates in
            scores.withUnsafeBufferPointer { scores in
                repair.drain(candidates: candidates, scores: scores, frameCount: frameCount, into: &f0)
            }
        }
        return F0Contour(sameLengthTime: time, f0: f0)
    }

    /// The signal DIO analyses, and its rate: decimated by `speed` (signals too short for WORLD's decimation
    /// stay at full rate), one sample longer (WORLD leaves that sample zero at full rate and, when decimating,
    /// takes whatever its decimation wrote there), minus its mean.
    private func analysedSignal(_ signal: [Double]) -> (samples: [Double], rate: Double) {
        let ratio = signal.count > 2 * Matlab.decimationPadding ? min(max(options.speed, 1), 12) : 1
        let length = 1 + signal.count / ratio
        var samples = ratio == 1 ? signal + [0] : Matlab.decimate(signal, factor: ratio, count: length)
        var mean = 0.0
        for i in 0..<length {
            mean += samples[i]
        }
        mean /= Double(length)
        for i in 0..<length {
            samples[i] -= mean
        }
        return (samples, Double(sampleRate) / Double(ratio))
    }

    /// Each band's events over the whole signal, filtered in blocks as long as is efficient.
    private func bandEvents(of samples: [Double], ladder: Ladder, rate: Double) -> [BandEvents] {
        var events = Array(repeating: BandEvents(rate: rate), count: ladder.bandCount)
        let quirk = NyquistQuirk(samples: samples, ladder: ladder)
        var filters = BandFilterBank(ladder: ladder, blockLength: BandFilterBank.efficientBlockLength(for: ladder))
        let deliver = { (band: Int, first: Int, values: UnsafeMutableBufferPointer<Double>) in
            quirk.apply(band: band, first: first, to: values)
            events[band].append(contentsOf: UnsafeBufferPointer(values))
        }
        filters.push(samples, deliver: deliver) { _ in }
        filters.finish(through: samples.count - 1, deliver: deliver)
        return events
    }
}
