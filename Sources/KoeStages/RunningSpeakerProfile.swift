import Glibc

/// A speaker's profile estimated while the voice runs, for a stream whose voice aims at a preset's target: the
/// measure `SpeakerProfiler` takes of a file (the same frames, Praat's pitch candidates and path, the same LPC
/// formants), kept up to date as samples arrive. It is usable once `usableVoicedSeconds` of voiced frames have been
/// heard; silence, noise, a whisper or breath add no voiced frame, so they leave it as it is.
///
/// Where the file's path is decided at its end, here each frame is decided `decisionLag` frames after it, on the
/// cheapest path to the newest frame (Viterbi with a fixed lag): by then the paths through the frames between have
/// met, so an octave error of a few frames is outvoted as in the file. The voiced frames' F0 and formants go into
/// histograms (F0 in cents, formants in 2 Hz bins) whose medians give the profile; their weights fade by e over
/// `memorySeconds` of voiced speech, so the estimate settles and moves slowly, and follows a new speaker within
/// minutes. Each frame is analysed in the call that completes it; once made, nothing here allocates, for pieces of
/// up to the size `reserve` made room for.
package struct RunningSpeakerProfile {
    /// Voiced speech heard before the estimate is used. Speech is voiced about half the time, and a short recording
    /// may hold little of it (one of 5 s holds 1.7 s, the first 1 s of it heard only 3.3 s in), so the aim starts
    /// early and goes on moving as the estimate does, every 100 ms of voice, at most `Preset.Aiming.semitonesPerSecond`.
    /// Praat's median of a voice's first 0.5 s of voiced frames is within 9 % of its whole recording's on 10 of 13
    /// voices (6.1 % in the median; the first 1 s, 12 of 13 and 4.6 %); waiting for 1 s left that short recording
    /// 16 to 47 % off its target after 3 s, 0.5 s within 14 % (bench/profile.py live).
    package static let usableVoicedSeconds = 0.5
    /// Frames a frame is decided after: 0.3 s, well beyond where the paths of speech meet.
    static let decisionLag = 30
    /// Voiced speech over which a frame's weight fades by e.
    static let memorySeconds = 120.0
    /// Frames between estimates: a new one each 100 ms of voice.
    static let estimateInterval = 10

    private var frames: ProfileFrames
    private var settings: ProfileSettings { frames.settings }
    /// The largest magnitude of the samples up to the newest frame's end, and where its scan stopped.
    private var peak = 0.0
    private var peakScanned = 0

    // The path's latest `decisionLag + 1` frames, a ring of slots: their candidates, their formants per fit, and
    // for each candidate the one before it on its cheapest path; the cost of the cheapest path to each candidate of
    // the newest frame.
    private let slots: Int
    private let candidateRoom: Int
    private var frequencies: [Float]
    private var strengths: [Float]
    private var candidateCounts: [Int]
    private var cameFrom: [Int]
    private var formantRoom: [Int]
    private var formants: [[Float]]
    private var formantCounts: [[Int]]
    private var cost: [Double]
    private var nextCost: [Double]
    private var framesSeen = 0

    // The voiced frames decided so far, weighted: F0 in cents above `lowestF0`, each fit's formants in 2 Hz bins.
    private static let lowestF0 = 70.0, f0Octaves = 3.33, formantBinHz = 2.0
    private var f0Weights: [Double]
    private var f0Total = 0.0
    private let formantBins: Int
    private var formantWeights: [[Double]]
    private var formantTotals: [[Double]]
    private var weight = 1.0
    private let weightGrowth: Double
    private var voicedFrames = 0
    private var voicedSinceEstimate = 0
    private var decidedSinceEstimate = 0

    /// The estimate, once `usableVoicedSeconds` of voice have been heard; nil before.
    package private(set) var estimate: SpeakerProfile?
    /// A profile known before the stream (`koe profile --json`'s), which holds until the estimate is usable.
    package var known: SpeakerProfile? {
        didSet { knownChanged = true }
    }
    private var knownChanged = false

    /// The profile a voice aims from now: the estimate, or until there is one, the profile known.
    package var current: SpeakerProfile? { estimate ?? known }

    package init(sampleRate: Int) throws(KoeError) {
        frames = try ProfileFrames(sampleRate: sampleRate)
        let settings = frames.settings
        let slots = Self.decisionLag + 1
        self.slots = slots
        candidateRoom = settings.maximumCandidates
        // Each buffer its own: arrays sharing storage would copy it (allocate) at their first write.
        frequencies = [Float](repeating: 0, count: slots * candidateRoom)
        strengths = [Float](repeating: 0, count: slots * candidateRoom)
        candidateCounts = [Int](repeating: 0, count: slots)
        cameFrom = [Int](repeating: 0, count: slots * candidateRoom)
        let fits = frames.formants.fits
        formantRoom = fits.map(\.count)
        formants = fits.map { [Float](repeating: 0, count: slots * $0.count) }
        formantCounts = fits.map { _ in [Int](repeating: 0, count: slots) }
        cost = [Double](repeating: 0, count: candidateRoom)
        nextCost = [Double](repeating: 0, count: candidateRoom)
        f0Weights = [Double](repeating: 0, count: Int(1200 * Self.f0Octaves))
        let formantBins = Int(FormantFinder.wideBand / Self.formantBinHz) + 1
        self.formantBins = formantBins
        formantWeights = fits.map { [Double](repeating: 0, count: $0.count * formantBins) }
        formantTotals = fits.map { [Double](repeating: 0, count: $0.count) }
        weightGrowth = exp(settings.timeStep / Self.memorySeconds)
    }

    /// Makes room for pieces of up to `samples` samples.
    package mutating func reserve(forPiecesOf samples: Int) {
        frames.reserve(forPiecesOf: samples)
    }

    /// Takes the next samples of the voice (finite ones). Each time the profile a voice aims from changes
    /// (`current`), `changed` hears the new one and the sample it holds from, counted from the start of the stream:
    /// where the frame that decided it ends, so the same samples give the same profiles at the same places however
    /// they are cut into pieces.
    package mutating func add(_ samples: UnsafeBufferPointer<Double>, changed: (_ position: Int, SpeakerProfile?) -> Void) {
        if knownChanged {
            knownChanged = false
            if estimate == nil { changed(frames.samplesAdded, known) }
        }
        frames.append(samples)
        while frames.analyseNextFrame() {
            peak = max(peak, frames.peak(from: peakScanned))
            peakScanned = frames.frameEnd
            if advancePath(), let estimate { changed(frames.frameEnd, estimate) }
        }
        frames.dropSpentSamples()
    }

    /// Forgets the voice heard, as a new stream starts; the profile known stays, and is heard again first.
    package mutating func reset() {
        frames.reset()
        peak = 0
        peakScanned = 0
        framesSeen = 0
        for index in f0Weights.indices { f0Weights[index] = 0 }
        for fit in formantWeights.indices {
            for index in formantWeights[fit].indices { formantWeights[fit][index] = 0 }
            for index in formantTotals[fit].indices { formantTotals[fit][index] = 0 }
        }
        f0Total = 0
        weight = 1
        voicedFrames = 0
        voicedSinceEstimate = 0
        decidedSinceEstimate = 0
        estimate = nil
        knownChanged = known != nil
    }

    // MARK: the path

    /// Puts the newest frame on the path and decides the frame `decisionLag` before it; true when that gave a new
    /// estimate.
    private mutating func advancePath() -> Bool {
        let slot = framesSeen % slots
        let frame = frames.frame
        let count = frame.candidateCount
        candidateCounts[slot] = count
        for index in 0..<count {
            frequencies[slot * candidateRoom + index] = frame.frequencies[index]
            strengths[slot * candidateRoom + index] = frame.strengths[index]
        }
        for fit in formants.indices {
            let found = frames.formants.fits[fit]
            formantCounts[fit][slot] = found.foundCount
            for index in 0..<found.foundCount { formants[fit][slot * formantRoom[fit] + index] = found.found[index] }
        }
        // The unvoiced candidate's strength comes from the frame's level against the loudest sample so far.
        strengths[slot * candidateRoom] = Float(settings.unvoicedStrength(localPeak: frame.localPeak, globalPeak: peak))
        if framesSeen == 0 {
            for index in 0..<count { cost[index] = -Double(strengths[slot * candidateRoom + index]) }
        } else {
            let before = (framesSeen - 1) % slots
            var lowest = Double.infinity
            for index in 0..<count {
                let frequency = Double(frequencies[slot * candidateRoom + index])
                var bestCost = Double.infinity, bestFrom = 0
                for previous in 0..<candidateCounts[before] {
                    let previousFrequency = Double(frequencies[before * candidateRoom + previous])
                    let total = cost[previous] + settings.transitionCost(from: previousFrequency, to: frequency)
                    if total < bestCost { (bestCost, bestFrom) = (total, previous) }
                }
                nextCost[index] = bestCost - Double(strengths[slot * candidateRoom + index])
                cameFrom[slot * candidateRoom + index] = bestFrom
                lowest = min(lowest, nextCost[index])
            }
            // Only differences between costs matter: kept near 0, they keep their precision however long the stream.
            for index in 0..<count { cost[index] = nextCost[index] - lowest }
        }
        framesSeen += 1
        guard framesSeen > Self.decisionLag else { return false }
        var index = 0
        for candidate in 1..<count where cost[candidate] < cost[index] { index = candidate }
        for newer in stride(from: framesSeen - 1, to: framesSeen - 1 - Self.decisionLag, by: -1) {
            index = cameFrom[(newer % slots) * candidateRoom + index]
        }
        return decide(slot: (framesSeen - 1 - Self.decisionLag) % slots, candidate: index)
    }

    /// Counts a decided frame; true when that gave a new estimate.
    private mutating func decide(slot: Int, candidate: Int) -> Bool {
        let f0 = Double(frequencies[slot * candidateRoom + candidate])
        if f0 > 0 {
            let cents = 1200 * log2(f0 / Self.lowestF0)
            f0Weights[min(max(Int(cents), 0), f0Weights.count - 1)] += weight
            f0Total += weight
            for fit in formants.indices {
                for formant in 0..<formantCounts[fit][slot] {
                    let bin = Int(Double(formants[fit][slot * formantRoom[fit] + formant]) / Self.formantBinHz)
                    formantWeights[fit][formant * formantBins + min(bin, formantBins - 1)] += weight
                    formantTotals[fit][formant] += weight
                }
            }
            voicedFrames += 1
            voicedSinceEstimate += 1
            weight *= weightGrowth
            // Weights grow instead of fading: the same ratios, rescaled long before they could overflow.
            if weight > 1e100 { rescaleWeights(by: 1e-100) }
        }
        decidedSinceEstimate += 1
        guard decidedSinceEstimate >= Self.estimateInterval else { return false }
        decidedSinceEstimate = 0
        guard voicedSinceEstimate > 0, Double(voicedFrames) * settings.timeStep >= Self.usableVoicedSeconds else { return false }
        voicedSinceEstimate = 0
        estimate = measured()
        return true
    }

    private mutating func rescaleWeights(by factor: Double) {
        weight *= factor
        f0Total *= factor
        for index in f0Weights.indices { f0Weights[index] *= factor }
        for fit in formantWeights.indices {
            for index in formantWeights[fit].indices { formantWeights[fit][index] *= factor }
            for index in formantTotals[fit].indices { formantTotals[fit][index] *= factor }
        }
    }

    // MARK: the estimate

    /// The profile of the voiced frames counted.
    private func measured() -> SpeakerProfile {
        let (low, median, high) = quantiles(of: f0Weights, total: f0Total, bins: 0..<f0Weights.count)
        func f0(_ cents: Double) -> Double { Self.lowestF0 * exp2(cents / 1200) }
        let fit = frames.formants.chosenFit
        let length = FormantFinder.tubeLength(formants: formantRoom[fit], speedOfSound: settings.speedOfSound) { formant in
            guard formantTotals[fit][formant] > 0 else { return nil }
            let row = formant * formantBins..<(formant + 1) * formantBins
            return quantiles(of: formantWeights[fit], total: formantTotals[fit][formant], bins: row).median * Self.formantBinHz
        }
        return SpeakerProfile(
            f0Median: f0(median), f0Spread: (high - low) / 100, vocalTractLength: length,
            voicedSeconds: Double(voicedFrames) * settings.timeStep)
    }

    /// The 10th, 50th and 90th percentiles of one histogram, `bins` of `weights` (whose sum is `total`), in
    /// bins from the first: linear within the bin where the weight below reaches each.
    private func quantiles(of weights: [Double], total: Double, bins: Range<Int>) -> (low: Double, median: Double, high: Double) {
        let goals = (low: 0.1 * total, median: 0.5 * total, high: 0.9 * total)
        var found = (low: Double.nan, median: Double.nan, high: Double.nan)
        var below = 0.0, end = 0.0
        for bin in bins where weights[bin] > 0 {
            let here = weights[bin], position = Double(bin - bins.lowerBound)
            if below < goals.low && below + here >= goals.low { found.low = position + (goals.low - below) / here }
            if below < goals.median && below + here >= goals.median { found.median = position + (goals.median - below) / here }
            if below < goals.high && below + here >= goals.high { found.high = position + (goals.high - below) / here }
            below += here
            end = position + 1
        }
        // A sum that rounding left a hair short of a goal puts it at the end of the last bin.
        return (found.low.isNaN ? end : found.low, found.median.isNaN ? end : found.median, found.high.isNaN ? end : found.high)
    }
}
