import Glibc
import KoeDSP
import KoeWorld

/// What a voice is, measured on its voiced frames: where its F0 sits (the median), how far it moves (the spread),
/// and how long its vocal tract is. The presets aim at a voice from it (`koe profile` prints it).
///
/// F0 is found as Praat's "To Pitch (ac)" finds it with its standard settings (Boersma 1993: a 40 ms Hann window
/// every 10 ms, normalised autocorrelation peaks between 75 and 600 Hz as candidates, voicing threshold 0.45,
/// silence threshold 0.03, octave cost 0.01, then the cheapest path through the candidates with octave-jump cost
/// 0.35 and voiced/unvoiced cost 0.14). The path is what makes the median robust to octave errors: a frame whose
/// best peak is an octave off costs a jump on either side, so the path stays with the voice, and a voice whose
/// fundamental was filtered out (a radio or telephone band) is still found at its period, where Harvest and DIO
/// find the second harmonic.
///
/// The vocal-tract length comes from the formant spacing: each likely voiced frame's formants are the roots of an
/// LPC polynomial fitted to its spectrum up to 5.5 kHz (order 10, 50 ms Gaussian window, pre-emphasis from 50 Hz,
/// as Praat's "To Formant (burg)"; poles wider than 1.2 kHz are no formants), the median of each of F1 to F4
/// over the voiced frames is taken, and the spacing ΔF fits Fᵢ = (2i − 1) ΔF / 2 (a uniform tube closed at the
/// glottis) by least squares; the length is c / 2ΔF with c = 350 m/s (warm, humid air). A recording whose band ends below 5 kHz (telephone speech, an 8 kHz
/// file resampled) is fitted up to 3.8 kHz with order 8 and F1 to F3, since higher formants are not there.
public struct SpeakerProfile: Sendable {
    /// Median F0 of the voiced frames, in Hz.
    public let f0Median: Double
    /// How far F0 moves: semitones between the 10th and the 90th percentile of the voiced frames' F0.
    public let f0Spread: Double
    /// Vocal-tract length estimated from the formant spacing, in cm (about 17 for adult men, 14.5 for women).
    public let vocalTractLength: Double
    /// Seconds of voiced frames the figures rest on.
    public let voicedSeconds: Double

    /// The profile of a mono recording. Throws `KoeError` for a sample rate outside 8 to 192 kHz, a sample that
    /// is not finite, or a recording with no voiced frame in it (silence, noise, a whisper).
    public init(analyzing samples: [Double], sampleRate: Int) throws(KoeError) {
        var profiler = try SpeakerProfiler(sampleRate: sampleRate)
        try profiler.add(samples)
        self = try profiler.finish()
    }

    package init(f0Median: Double, f0Spread: Double, vocalTractLength: Double, voicedSeconds: Double) {
        self.f0Median = f0Median
        self.f0Spread = f0Spread
        self.vocalTractLength = vocalTractLength
        self.voicedSeconds = voicedSeconds
    }
}

/// A `SpeakerProfile` measured as samples arrive, so a file is read once in pieces: each 10 ms frame's pitch
/// candidates and formants are kept (a few dozen numbers a frame), and the path through them is found at the end.
package struct SpeakerProfiler {
    private var frames: ProfileFrames
    /// Every sample's largest magnitude: what a frame's level is measured against on the path.
    private var globalPeak = 0.0
    /// Per frame: its local peak, and its candidates (frequency, strength), the unvoiced one (frequency 0) first.
    private var localPeaks: [Double] = []
    private var candidates: [[(frequency: Float, strength: Float)]] = []
    /// Per fit of the formant finder, per frame: the formants found (none where the frame was not likely voiced).
    private var formantsPerFrame: [[[Float]]]

    package init(sampleRate: Int) throws(KoeError) {
        frames = try ProfileFrames(sampleRate: sampleRate)
        formantsPerFrame = Array(repeating: [], count: frames.formants.fits.count)
    }

    /// Takes the next samples of the recording. Throws `KoeError.badInput` for one that is not finite.
    package mutating func add(_ samples: [Double]) throws(KoeError) {
        if let index = SignalRequirements.firstNonFinite(samples) {
            throw .badInput(source: nil, reason: "sample \(frames.samplesAdded + index) is not a finite number (NaN or infinity)")
        }
        for sample in samples { globalPeak = max(globalPeak, abs(sample)) }
        samples.withUnsafeBufferPointer { frames.append($0) }
        while frames.analyseNextFrame() {
            let frame = frames.frame
            localPeaks.append(frame.localPeak)
            candidates.append((0..<frame.candidateCount).map { (frame.frequencies[$0], frame.strengths[$0]) })
            for fit in formantsPerFrame.indices {
                let found = frames.formants.fits[fit]
                formantsPerFrame[fit].append(Array(found.found[0..<found.foundCount]))
            }
        }
        frames.dropSpentSamples()
    }

    /// The profile of everything added. Throws `KoeError.badInput` when no frame was voiced.
    package mutating func finish() throws(KoeError) -> SpeakerProfile {
        let settings = frames.settings
        let path = bestPath()
        var f0: [Double] = []
        var voicedFrames: [Int] = []
        for (frame, frequency) in path.enumerated() where frequency > 0 {
            f0.append(frequency)
            voicedFrames.append(frame)
        }
        guard !f0.isEmpty else {
            throw .badInput(source: nil, reason: candidates.isEmpty
                ? "too short for a profile: it takes at least \(Int(1000 * settings.periodsPerWindow / settings.minimumPitch)) ms of speech"
                : "no voiced frame found: a profile needs a voice (not silence, noise or a whisper)")
        }
        f0.sort()
        let low = quantile(f0, 0.1), high = quantile(f0, 0.9)
        let fit = frames.formants.chosenFit
        let length = FormantFinder.tubeLength(formants: frames.formants.fits[fit].count, speedOfSound: settings.speedOfSound) { formant in
            var values: [Double] = []
            for frame in voicedFrames where formantsPerFrame[fit][frame].count > formant {
                values.append(Double(formantsPerFrame[fit][frame][formant]))
            }
            guard !values.isEmpty else { return nil }
            values.sort()
            return quantile(values, 0.5)
        }
        return SpeakerProfile(
            f0Median: quantile(f0, 0.5), f0Spread: 12 * log2(high / low), vocalTractLength: length,
            voicedSeconds: Double(f0.count) * settings.timeStep)
    }

    // MARK: the path (Praat's Pitch_pathFinder)

    /// The frequency of each frame on the cheapest path through the candidates, 0 where it is unvoiced.
    private func bestPath() -> [Double] {
        guard !candidates.isEmpty else { return [] }
        let settings = frames.settings
        func strengths(_ frame: Int) -> [Double] {
            candidates[frame].indices.map { index in
                index == 0
                    ? settings.unvoicedStrength(localPeak: localPeaks[frame], globalPeak: globalPeak)
                    : Double(candidates[frame][index].strength)
            }
        }
        var cost = strengths(0).map { -$0 }
        var back: [[Int]] = []
        back.reserveCapacity(candidates.count)
        for frame in 1..<candidates.count {
            let here = candidates[frame], before = candidates[frame - 1]
            let strength = strengths(frame)
            var next = [Double](repeating: 0, count: here.count)
            var from = [Int](repeating: 0, count: here.count)
            for index in here.indices {
                let frequency = Double(here[index].frequency)
                var bestCost = Double.infinity, bestFrom = 0
                for previous in before.indices {
                    let total = cost[previous] + settings.transitionCost(from: Double(before[previous].frequency), to: frequency)
                    if total < bestCost { (bestCost, bestFrom) = (total, previous) }
                }
                next[index] = bestCost - strength[index]
                from[index] = bestFrom
            }
            cost = next
            back.append(from)
        }
        var index = cost.indices.min { cost[$0] < cost[$1] }!
        var path = [Double](repeating: 0, count: candidates.count)
        for frame in stride(from: candidates.count - 1, through: 0, by: -1) {
            path[frame] = Double(candidates[frame][index].frequency)
            if frame > 0 { index = back[frame - 1][index] }
        }
        return path
    }
}

/// Praat's quantile of sorted values: linear between the two values around rank q·n + ½ (1-based).
private func quantile(_ sorted: [Double], _ q: Double) -> Double {
    let place = q * Double(sorted.count) + 0.5
    let left = Int(place.rounded(.down))
    if left < 1 { return sorted[0] }
    if left >= sorted.count { return sorted[sorted.count - 1] }
    return sorted[left - 1] + (place - Double(left)) * (sorted[left] - sorted[left - 1])
}

/// Praat's settings for "To Pitch (ac)" and the path through its candidates, and the speed of sound the
/// vocal-tract length is computed with.
struct ProfileSettings {
    var minimumPitch = 75.0
    var maximumPitch = 600.0
    var timeStep = 0.01
    var periodsPerWindow = 3.0
    var maximumCandidates = 15
    var silenceThreshold = 0.03
    var voicingThreshold = 0.45
    var octaveCost = 0.01
    var octaveJumpCost = 0.35
    var voicedUnvoicedCost = 0.14
    /// Speed of sound in the vocal tract, cm/s.
    var speedOfSound = 35_000.0

    /// The unvoiced candidate's strength in a frame of `localPeak` when the loudest sample is `globalPeak`: a
    /// quiet frame is more likely unvoiced.
    func unvoicedStrength(localPeak: Double, globalPeak: Double) -> Double {
        let relative = globalPeak > 0 ? localPeak / globalPeak : 0
        return voicingThreshold + max(0, 2 - relative / (silenceThreshold / (1 + voicingThreshold)))
    }

    /// The cost of going from a candidate of `previous` Hz to one of `frequency` Hz (0: unvoiced).
    func transitionCost(from previous: Double, to frequency: Double) -> Double {
        switch (frequency > 0, previous > 0) {
        case (false, false): 0
        case (true, true): octaveJumpCost * abs(log2(frequency / previous))
        default: voicedUnvoicedCost
        }
    }
}

/// A recording's 10 ms frames as samples arrive, each analysed for `SpeakerProfiler` and `RunningSpeakerProfile`
/// alike: its pitch candidates (Boersma 1993, Praat's Sound_to_Pitch with the AC method) and, where likely voiced,
/// its formants. Allocates nothing once its buffers have room for the pieces it is given (`reserve`).
struct ProfileFrames {
    /// One frame's measures, in buffers reused from frame to frame.
    struct Frame {
        /// The largest magnitude in the pitch window, its mean removed.
        var localPeak = 0.0
        /// The pitch candidates, the unvoiced one (frequency 0) first: the first `candidateCount` entries.
        var candidateCount = 0
        var frequencies: [Float]
        var strengths: [Float]
        /// Whether a candidate was strong enough for the frame's formants to be measured (`formants.fits`' `found`).
        var isLikelyVoiced = false
    }

    let settings = ProfileSettings()
    let sampleRate: Int
    private let hop: Int
    private let pitchWindow: [Double]
    private var windowAutocorrelation: [Double] = []
    private let pitchFFT: ForwardRealFFT
    private let pitchInverse: InverseRealFFT
    private let minimumLag: Int
    private let maximumLag: Int
    /// The frame's formants, and the long-term spectrum of likely voiced frames.
    private(set) var formants: FormantFinder
    /// The frame last analysed.
    private(set) var frame: Frame
    /// Where it ends: one past the last sample it read, counted from the start of the recording.
    private(set) var frameEnd = 0
    /// Samples taken so far.
    private(set) var samplesAdded = 0

    /// Samples not yet consumed by a frame, `consumedSamples` having been dropped before them; the next frame
    /// starts at `nextFrame` in them.
    private var pending: [Double] = []
    private var consumedSamples = 0
    private var nextFrame = 0
    /// Scratch: the normalised autocorrelation, and the peaks found in it before the strongest are kept.
    private var normalised: [Double]
    private var peakFrequencies: [Float]
    private var peakStrengths: [Float]

    init(sampleRate: Int) throws(KoeError) {
        guard SignalRequirements.sampleRates.contains(sampleRate) else {
            throw .invalidArgument(WorldError.unsupportedSampleRate(sampleRate).description)
        }
        self.sampleRate = sampleRate
        let rate = Double(sampleRate)
        hop = Int((settings.timeStep * rate).rounded())
        let length = Int((settings.periodsPerWindow / settings.minimumPitch * rate).rounded()) | 1
        pitchWindow = (0..<length).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0 + 1) / Double(length + 1)) }
        var size = 1
        while size < length * 3 / 2 { size *= 2 }
        pitchFFT = ForwardRealFFT(size: size)
        pitchInverse = InverseRealFFT(size: size)
        minimumLag = max(2, Int((rate / settings.maximumPitch).rounded(.down)))
        maximumLag = min(Int((rate / settings.minimumPitch).rounded(.up)), length / 2)
        formants = FormantFinder(sampleRate: sampleRate)
        frame = Frame(
            frequencies: [Float](repeating: 0, count: settings.maximumCandidates),
            strengths: [Float](repeating: 0, count: settings.maximumCandidates))
        normalised = [Double](repeating: 0, count: maximumLag + 2)
        // Each buffer its own: arrays sharing storage would copy it (allocate) at their first write, in a stream's
        // first frames.
        peakFrequencies = [Float](repeating: 0, count: maximumLag - minimumLag + 1)
        peakStrengths = [Float](repeating: 0, count: maximumLag - minimumLag + 1)
        windowAutocorrelation = autocorrelation(of: pitchWindow)
    }

    /// Makes room for pieces of up to `samples` samples: `append` then allocates nothing.
    mutating func reserve(forPiecesOf samples: Int) {
        pending.reserveCapacity(span + hop + samples)
    }

    /// Samples a frame reads: the longer of the pitch and the formant window, which share a centre.
    private var span: Int { max(pitchWindow.count, formants.windowLength) }

    /// Takes the next samples of the recording; `analyseNextFrame` then analyses the frames they complete.
    mutating func append(_ samples: UnsafeBufferPointer<Double>) {
        pending.append(contentsOf: samples)
        samplesAdded += samples.count
    }

    /// Analyses the next frame into `frame` when its samples have all come; false when they have not.
    mutating func analyseNextFrame() -> Bool {
        guard nextFrame + span <= pending.count else { return false }
        analyseFrame(at: nextFrame)
        frameEnd = consumedSamples + nextFrame + span
        nextFrame += hop
        return true
    }

    /// Drops the samples no frame will read again.
    mutating func dropSpentSamples() {
        // The sample before the next frame stays: the formants' pre-emphasis reads it.
        let spent = max(0, nextFrame - 1)
        pending.removeFirst(spent)
        nextFrame -= spent
        consumedSamples += spent
    }

    /// The largest magnitude among the samples from `start` (counted from the start of the recording) up to the
    /// end of the frame last analysed, of those still held.
    func peak(from start: Int) -> Double {
        var peak = 0.0
        for index in max(0, start - consumedSamples)..<max(0, frameEnd - consumedSamples) {
            peak = max(peak, abs(pending[index]))
        }
        return peak
    }

    /// Forgets every sample taken, as at the start of a recording; the room made stays.
    mutating func reset() {
        pending.removeAll(keepingCapacity: true)
        consumedSamples = 0
        nextFrame = 0
        frameEnd = 0
        samplesAdded = 0
        formants.reset()
    }

    // MARK: pitch candidates

    private mutating func analyseFrame(at start: Int) {
        let length = pitchWindow.count
        // The pitch window and the formant window share a centre.
        let centre = start + span / 2
        let first = centre - length / 2
        var mean = 0.0
        for index in 0..<length { mean += pending[first + index] }
        mean /= Double(length)
        var peak = 0.0
        for index in 0..<length {
            let value = pending[first + index] - mean
            peak = max(peak, abs(value))
            pitchFFT.waveform[index] = value * pitchWindow[index]
        }
        frame.localPeak = peak
        var best = 0.0
        var peaks = 0
        if normaliseAutocorrelation() {
            let threshold = 0.5 * settings.voicingThreshold
            for lag in minimumLag...maximumLag
            where normalised[lag] > threshold && normalised[lag] > normalised[lag - 1] && normalised[lag] >= normalised[lag + 1] {
                let (left, middle, right) = (normalised[lag - 1], normalised[lag], normalised[lag + 1])
                let curvature = left - 2 * middle + right
                let shift = curvature != 0 ? 0.5 * (left - right) / curvature : 0
                var value = middle - 0.25 * (left - right) * shift
                if value > 1 { value = 1 / value }
                let period = (Double(lag) + shift) / Double(sampleRate)
                peakFrequencies[peaks] = Float(1 / period)
                peakStrengths[peaks] = Float(value - settings.octaveCost * log2(settings.minimumPitch * period))
                peaks += 1
                best = max(best, value)
            }
        }
        // Beyond the candidates a frame keeps, the strongest stay, strongest first (a stable sort: equal ones in
        // the order of their lags).
        if peaks + 1 > settings.maximumCandidates {
            for index in 1..<peaks {
                let (frequency, strength) = (peakFrequencies[index], peakStrengths[index])
                var place = index
                while place > 0 && peakStrengths[place - 1] < strength {
                    peakFrequencies[place] = peakFrequencies[place - 1]
                    peakStrengths[place] = peakStrengths[place - 1]
                    place -= 1
                }
                (peakFrequencies[place], peakStrengths[place]) = (frequency, strength)
            }
            peaks = settings.maximumCandidates - 1
        }
        frame.frequencies[0] = 0
        frame.strengths[0] = 0
        for index in 0..<peaks {
            frame.frequencies[index + 1] = peakFrequencies[index]
            frame.strengths[index + 1] = peakStrengths[index]
        }
        frame.candidateCount = peaks + 1
        frame.isLikelyVoiced = best >= settings.voicingThreshold
        formants.analyseFrame(pending, centre: centre, likelyVoiced: frame.isLikelyVoiced)
    }

    /// The frame's autocorrelation divided by its window's, each normalised at lag 0, into `normalised`; false
    /// for a silent frame.
    private mutating func normaliseAutocorrelation() -> Bool {
        for index in pitchWindow.count..<pitchFFT.size { pitchFFT.waveform[index] = 0 }
        let raw = powerAutocorrelation()
        guard raw[0] > 0 else { return false }
        for lag in 0...maximumLag + 1 { normalised[lag] = raw[lag] / raw[0] / windowAutocorrelation[lag] }
        return true
    }

    private func autocorrelation(of window: [Double]) -> [Double] {
        for index in 0..<pitchFFT.size { pitchFFT.waveform[index] = index < window.count ? window[index] : 0 }
        let raw = powerAutocorrelation()
        return (0...maximumLag + 1).map { raw[$0] / raw[0] }
    }

    /// The autocorrelation of what `pitchFFT.waveform` holds, by way of its power spectrum (unnormalised).
    private func powerAutocorrelation() -> UnsafeMutableBufferPointer<Double> {
        pitchFFT.execute()
        for bin in 0..<pitchFFT.spectrum.count {
            let value = pitchFFT.spectrum[bin]
            pitchInverse.spectrum[bin] = Complex(value.real * value.real + value.imag * value.imag, 0)
        }
        pitchInverse.execute()
        return pitchInverse.waveform
    }
}

/// Formants frame by frame, from an LPC fit to the spectrum below a band edge (selective linear prediction,
/// Makhoul 1975), and the long-term spectrum that says where the recording's band ends.
struct FormantFinder {
    /// One way to fit: up to `band` Hz with `order` coefficients, `count` formants read.
    struct Fit {
        let band: Double
        let order: Int
        let count: Int
        /// The bins the fit reads, and the cosine of each bin at each lag, lag by lag.
        let lastBin: Int
        let cosines: [Double]
        /// The latest frame's formants, lowest first: the first `foundCount` (at most `count`; none where the
        /// frame was not likely voiced).
        fileprivate(set) var found: [Float]
        fileprivate(set) var foundCount = 0
    }

    let sampleRate: Int
    let windowLength: Int
    private let window: [Double]
    private let fft: ForwardRealFFT
    private let preEmphasis: Double
    private(set) var fits: [Fit]
    /// The long-term power spectrum of likely voiced frames, with the pre-emphasis undone.
    private var longTermSpectrum: [Double]
    private var spectrumFrames = 0
    /// Scratch: a frame's power spectrum, the fit's autocorrelation and prediction polynomial, its roots and the
    /// formants among them.
    private var power: [Double]
    private var lpc: LinearPrediction
    private var formantBuffer: [Float]

    static let wideBand = 5500.0, narrowBand = 3800.0
    /// A pole wider than this (Hz) shapes the spectrum's tilt or fills a gap between formants; it is no formant.
    static let widestFormant = 1200.0
    /// Where a band ends: the highest bin within this many dB of the mean level between 300 Hz and 3 kHz.
    static let edgeDrop = 45.0

    init(sampleRate: Int) {
        self.sampleRate = sampleRate
        let rate = Double(sampleRate)
        let windowLength = Int((0.05 * rate).rounded())
        self.windowLength = windowLength
        let edge = exp(-3.0)
        window = (0..<windowLength).map { index in
            let x = (Double(index) + 0.5) / Double(windowLength) - 0.5
            return exp(-12 * x * x) - edge
        }
        var size = 1
        while size < windowLength { size *= 2 }
        fft = ForwardRealFFT(size: size)
        preEmphasis = exp(-2 * Double.pi * 50 / rate)
        let binWidth = rate / Double(size)
        func fit(band: Double, order: Int, count: Int) -> Fit {
            let lastBin = min(size / 2, Int(band / binWidth))
            let cosines = (0...order).flatMap { lag in
                (0...lastBin).map { bin in cos(Double.pi * Double(lag) * Double(bin) * binWidth / band) }
            }
            return Fit(band: band, order: order, count: count, lastBin: lastBin, cosines: cosines, found: [Float](repeating: 0, count: count))
        }
        var fits = [fit(band: min(Self.narrowBand, rate / 2), order: 8, count: 3)]
        if rate / 2 > 5000 { fits.append(fit(band: min(Self.wideBand, rate / 2), order: 10, count: 4)) }
        self.fits = fits
        longTermSpectrum = [Double](repeating: 0, count: size / 2 + 1)
        power = [Double](repeating: 0, count: size / 2 + 1)
        let highestOrder = fits.map(\.order).max()!
        lpc = LinearPrediction(highestOrder: highestOrder)
        formantBuffer = [Float](repeating: 0, count: highestOrder)
    }

    /// Forgets the long-term spectrum.
    mutating func reset() {
        for bin in longTermSpectrum.indices { longTermSpectrum[bin] = 0 }
        spectrumFrames = 0
    }

    /// Fits the frame centred on `centre` of `samples` when it is likely voiced, into each fit's `found`.
    mutating func analyseFrame(_ samples: [Double], centre: Int, likelyVoiced: Bool) {
        guard likelyVoiced else {
            for index in fits.indices { fits[index].foundCount = 0 }
            return
        }
        let first = centre - windowLength / 2
        var previous = first > 0 ? samples[first - 1] : samples[first]
        for index in 0..<windowLength {
            let sample = samples[first + index]
            fft.waveform[index] = (sample - preEmphasis * previous) * window[index]
            previous = sample
        }
        for index in windowLength..<fft.size { fft.waveform[index] = 0 }
        fft.execute()
        for bin in power.indices {
            let value = fft.spectrum[bin]
            power[bin] = value.real * value.real + value.imag * value.imag
            longTermSpectrum[bin] += power[bin]
        }
        spectrumFrames += 1
        for index in fits.indices {
            let count = formants(fits[index])
            for formant in 0..<count { fits[index].found[formant] = formantBuffer[formant] }
            fits[index].foundCount = count
        }
    }

    /// The formants of the frame's power spectrum below `fit.band`, lowest first, into `formantBuffer`; how many
    /// of them the fit keeps (at most `fit.count`).
    private mutating func formants(_ fit: Fit) -> Int {
        let bins = fit.lastBin + 1
        for lag in 0...fit.order {
            var sum = 0.0
            for bin in 0...fit.lastBin {
                let weight = bin == 0 || bin == fit.lastBin ? 0.5 : 1
                sum += weight * power[bin] * fit.cosines[lag * bins + bin]
            }
            lpc.autocorrelation[lag] = sum
        }
        guard lpc.autocorrelation[0] > 0, lpc.predict(order: fit.order) else { return 0 }
        lpc.findRoots(order: fit.order)
        var count = 0
        for root in lpc.roots[0..<fit.order] where root.imag > 0 {
            let frequency = atan2(root.imag, root.real) / Double.pi * fit.band
            // The band is sampled at 2 × band: a pole of radius r is -ln(r) · 2 band / π wide.
            let bandwidth = -log(root.real * root.real + root.imag * root.imag) / Double.pi * fit.band
            if frequency > 50 && frequency < fit.band - 50 && bandwidth < Self.widestFormant {
                // Kept in order as they come (insertion), lowest first.
                let value = Float(frequency)
                var place = count
                while place > 0 && formantBuffer[place - 1] > value {
                    formantBuffer[place] = formantBuffer[place - 1]
                    place -= 1
                }
                formantBuffer[place] = value
                count += 1
            }
        }
        return min(count, fit.count)
    }

    /// The fit whose formants measure the tract: the wide one where the recording's band reaches 5 kHz.
    var chosenFit: Int {
        fits.count > 1 && bandEdge >= 5000 ? 1 : 0
    }

    /// The vocal-tract length, in cm, of a tube closed at the glottis whose formants Fᵢ = (2i − 1) ΔF / 2 fit
    /// the medians of the first `formants` formants (`median(i)`, nil where none was found) by least squares;
    /// NaN when none was found.
    static func tubeLength(formants: Int, speedOfSound: Double, median: (Int) -> Double?) -> Double {
        var sumProduct = 0.0, sumSquares = 0.0
        for formant in 0..<formants {
            guard let value = median(formant) else { continue }
            let position = Double(2 * formant + 1) / 2
            sumProduct += value * position
            sumSquares += position * position
        }
        guard sumProduct > 0 else { return .nan }
        let spacing = sumProduct / sumSquares
        return speedOfSound / (2 * spacing)
    }

    /// The highest frequency the likely voiced frames hold within `edgeDrop` dB of their level between 300 Hz and
    /// 3 kHz, in Hz: about 4 kHz for telephone speech, far above 5 kHz for a wide-band recording.
    private var bandEdge: Double {
        guard spectrumFrames > 0 else { return 0 }
        let binWidth = Double(sampleRate) / Double(fft.size)
        func level(_ bin: Int) -> Double {
            let omega = 2 * Double.pi * Double(bin) / Double(fft.size)
            let emphasis = 1 + preEmphasis * preEmphasis - 2 * preEmphasis * cos(omega)
            return 10 * log10(max(longTermSpectrum[bin] / max(emphasis, 1e-12), 1e-300))
        }
        var reference = 0.0, referenceBins = 0
        for bin in longTermSpectrum.indices {
            let frequency = Double(bin) * binWidth
            if frequency >= 300 && frequency <= 3000 {
                reference += level(bin)
                referenceBins += 1
            }
        }
        guard referenceBins > 0 else { return 0 }
        reference /= Double(referenceBins)
        let highest = longTermSpectrum.indices.last { level($0) > reference - Self.edgeDrop } ?? 0
        return Double(highest) * binWidth
    }
}

/// Linear prediction in buffers reused from frame to frame: the prediction polynomial of an autocorrelation
/// (Levinson–Durbin) and its roots (Durand–Kerner).
private struct LinearPrediction {
    /// The autocorrelation to predict from: lags 0 to the order.
    var autocorrelation: [Double]
    /// The polynomial 1 + a₁z⁻¹ + … + aₚz⁻ᵖ as [1, a₁, …, aₚ], and the one before the latest step.
    private var coefficients: [Double]
    private var previous: [Double]
    private(set) var roots: [Complex]

    init(highestOrder: Int) {
        autocorrelation = [Double](repeating: 0, count: highestOrder + 1)
        coefficients = [Double](repeating: 0, count: highestOrder + 1)
        previous = [Double](repeating: 0, count: highestOrder + 1)
        roots = [Complex](repeating: Complex(0, 0), count: highestOrder)
    }

    /// The prediction polynomial of order `order` into `coefficients`; false when the recursion breaks down (a
    /// reflection coefficient of magnitude 1 or more).
    mutating func predict(order: Int) -> Bool {
        for index in 0...order { coefficients[index] = 0 }
        coefficients[0] = 1
        var error = autocorrelation[0]
        for m in 1...order {
            var sum = autocorrelation[m]
            for i in 1..<m { sum += coefficients[i] * autocorrelation[m - i] }
            let k = -sum / error
            guard abs(k) < 1 else { return false }
            for i in 0...order { previous[i] = coefficients[i] }
            for i in 1..<m { coefficients[i] = previous[i] + k * previous[m - i] }
            coefficients[m] = k
            error *= 1 - k * k
        }
        return true
    }

    /// The roots of zᵖ + a₁zᵖ⁻¹ + … + aₚ, the polynomial `predict(order:)` made, into `roots[0..<order]`, by the
    /// Durand–Kerner iteration.
    mutating func findRoots(order degree: Int) {
        guard degree > 0 else { return }
        func times(_ x: Complex, _ y: Complex) -> Complex {
            Complex(x.real * y.real - x.imag * y.imag, x.real * y.imag + x.imag * y.real)
        }
        func divided(_ x: Complex, _ y: Complex) -> Complex {
            let norm = y.real * y.real + y.imag * y.imag
            return Complex((x.real * y.real + x.imag * y.imag) / norm, (x.imag * y.real - x.real * y.imag) / norm)
        }
        func value(at z: Complex) -> Complex {
            var result = Complex(1, 0)
            for index in 1...degree {
                result = times(result, z)
                result.real += coefficients[index]
            }
            return result
        }
        let seed = Complex(0.4, 0.9)
        roots[0] = Complex(1, 0)
        for index in 1..<degree { roots[index] = times(roots[index - 1], seed) }
        for _ in 0..<500 {
            var largestStep = 0.0
            for i in 0..<degree {
                var denominator = Complex(1, 0)
                for j in 0..<degree where j != i {
                    denominator = times(denominator, Complex(roots[i].real - roots[j].real, roots[i].imag - roots[j].imag))
                }
                if denominator.real == 0 && denominator.imag == 0 { denominator = Complex(1e-12, 0) }
                let step = divided(value(at: roots[i]), denominator)
                roots[i].real -= step.real
                roots[i].imag -= step.imag
                largestStep = max(largestStep, abs(step.real) + abs(step.imag))
            }
            if largestStep < 1e-12 { break }
        }
    }
}
