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
    package struct Settings {
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
    }

    private let sampleRate: Int
    private let settings = Settings()
    private let hop: Int
    private let pitchWindow: [Double]
    private var windowAutocorrelation: [Double] = []
    private let pitchFFT: ForwardRealFFT
    private let pitchInverse: InverseRealFFT
    private let minimumLag: Int
    private let maximumLag: Int
    private var formants: FormantFinder

    /// Samples not yet consumed by a frame, `consumedSamples` having been dropped before them; the next frame
    /// starts at `nextFrame` in them.
    private var pending: [Double] = []
    private var consumedSamples = 0
    private var nextFrame = 0
    private var globalPeak = 0.0
    /// Per frame: its local peak, and its candidates (frequency, strength), the unvoiced one (frequency 0) first.
    private var localPeaks: [Double] = []
    private var candidates: [[(frequency: Float, strength: Float)]] = []

    package init(sampleRate: Int) throws(KoeError) {
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
        windowAutocorrelation = autocorrelation(of: pitchWindow)
    }

    /// Takes the next samples of the recording. Throws `KoeError.badInput` for one that is not finite.
    package mutating func add(_ samples: [Double]) throws(KoeError) {
        if let index = SignalRequirements.firstNonFinite(samples) {
            throw .badInput(source: nil, reason: "sample \(consumedSamples + pending.count + index) is not a finite number (NaN or infinity)")
        }
        for sample in samples { globalPeak = max(globalPeak, abs(sample)) }
        pending.append(contentsOf: samples)
        while nextFrame + max(pitchWindow.count, formants.windowLength) <= pending.count {
            analyseFrame(at: nextFrame)
            nextFrame += hop
        }
        // The sample before the next frame stays: the formants' pre-emphasis reads it.
        let spent = max(0, nextFrame - 1)
        pending.removeFirst(spent)
        nextFrame -= spent
        consumedSamples += spent
    }

    /// The profile of everything added. Throws `KoeError.badInput` when no frame was voiced.
    package mutating func finish() throws(KoeError) -> SpeakerProfile {
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
        return SpeakerProfile(
            f0Median: quantile(f0, 0.5), f0Spread: 12 * log2(high / low),
            vocalTractLength: formants.vocalTractLength(frames: voicedFrames, speedOfSound: settings.speedOfSound),
            voicedSeconds: Double(f0.count) * settings.timeStep)
    }

    // MARK: pitch candidates (Boersma 1993, Praat's Sound_to_Pitch with the AC method)

    private mutating func analyseFrame(at start: Int) {
        let length = pitchWindow.count
        // The pitch window and the formant window share a centre.
        let centre = start + max(length, formants.windowLength) / 2
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
        localPeaks.append(peak)
        let r = normalisedAutocorrelation()
        var frame: [(frequency: Float, strength: Float)] = [(0, 0)]
        var best = 0.0
        if let r {
            for lag in minimumLag...maximumLag where r[lag] > 0.5 * settings.voicingThreshold && r[lag] > r[lag - 1] && r[lag] >= r[lag + 1] {
                let (left, middle, right) = (r[lag - 1], r[lag], r[lag + 1])
                let curvature = left - 2 * middle + right
                let shift = curvature != 0 ? 0.5 * (left - right) / curvature : 0
                var value = middle - 0.25 * (left - right) * shift
                if value > 1 { value = 1 / value }
                let period = (Double(lag) + shift) / Double(sampleRate)
                let strength = value - settings.octaveCost * log2(settings.minimumPitch * period)
                frame.append((Float(1 / period), Float(strength)))
                best = max(best, value)
            }
        }
        if frame.count > settings.maximumCandidates {
            let strongest = frame.dropFirst().sorted { $0.strength > $1.strength }.prefix(settings.maximumCandidates - 1)
            frame = [frame[0]] + strongest
        }
        candidates.append(frame)
        formants.analyseFrame(pending, centre: centre, likelyVoiced: best >= settings.voicingThreshold)
    }

    /// The frame's autocorrelation divided by its window's, each normalised at lag 0; nil for a silent frame.
    private func normalisedAutocorrelation() -> [Double]? {
        let length = pitchWindow.count
        for index in length..<pitchFFT.size { pitchFFT.waveform[index] = 0 }
        let raw = powerAutocorrelation()
        guard raw[0] > 0 else { return nil }
        return (0...maximumLag + 1).map { raw[$0] / raw[0] / windowAutocorrelation[$0] }
    }

    private func autocorrelation(of window: [Double]) -> [Double] {
        for index in 0..<pitchFFT.size { pitchFFT.waveform[index] = index < window.count ? window[index] : 0 }
        let raw = powerAutocorrelation()
        return (0...maximumLag + 1).map { raw[$0] / raw[0] }
    }

    /// The autocorrelation of what `pitchFFT.waveform` holds, by way of its power spectrum.
    private func powerAutocorrelation() -> [Double] {
        pitchFFT.execute()
        for bin in 0..<pitchFFT.spectrum.count {
            let value = pitchFFT.spectrum[bin]
            pitchInverse.spectrum[bin] = Complex(value.real * value.real + value.imag * value.imag, 0)
        }
        pitchInverse.execute()
        return Array(pitchInverse.waveform.prefix(maximumLag + 2))
    }

    // MARK: the path (Praat's Pitch_pathFinder)

    /// The frequency of each frame on the cheapest path through the candidates, 0 where it is unvoiced.
    private func bestPath() -> [Double] {
        guard !candidates.isEmpty else { return [] }
        let voicing = settings.voicingThreshold
        let silence = settings.silenceThreshold
        func strengths(_ frame: Int) -> [Double] {
            candidates[frame].indices.map { index in
                if index == 0 {
                    let relative = globalPeak > 0 ? localPeaks[frame] / globalPeak : 0
                    return voicing + max(0, 2 - relative / (silence / (1 + voicing)))
                }
                return Double(candidates[frame][index].strength)
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
                    let previousFrequency = Double(before[previous].frequency)
                    let transition: Double
                    switch (frequency > 0, previousFrequency > 0) {
                    case (false, false): transition = 0
                    case (true, true): transition = settings.octaveJumpCost * abs(log2(frequency / previousFrequency))
                    default: transition = settings.voicedUnvoicedCost
                    }
                    let total = cost[previous] + transition
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

/// Formants frame by frame, from an LPC fit to the spectrum below a band edge (selective linear prediction,
/// Makhoul 1975), and the long-term spectrum that says where the recording's band ends.
private struct FormantFinder {
    /// One way to fit: up to `band` Hz with `order` coefficients, `count` formants read.
    struct Fit {
        let band: Double
        let order: Int
        let count: Int
        var perFrame: [[Float]] = []
    }

    let sampleRate: Int
    let windowLength: Int
    private let window: [Double]
    private let fft: ForwardRealFFT
    private let preEmphasis: Double
    private var fits: [Fit]
    /// The long-term power spectrum of likely voiced frames, with the pre-emphasis undone.
    private var longTermSpectrum: [Double]
    private var spectrumFrames = 0

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
        var fits = [Fit(band: min(Self.narrowBand, rate / 2), order: 8, count: 3)]
        if rate / 2 > 5000 { fits.append(Fit(band: min(Self.wideBand, rate / 2), order: 10, count: 4)) }
        self.fits = fits
        longTermSpectrum = [Double](repeating: 0, count: size / 2 + 1)
    }

    /// Fits the frame centred on `centre` of `samples` when it is likely voiced; marks it missing otherwise.
    mutating func analyseFrame(_ samples: [Double], centre: Int, likelyVoiced: Bool) {
        guard likelyVoiced else {
            for index in fits.indices { fits[index].perFrame.append([]) }
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
        var power = [Double](repeating: 0, count: fft.spectrum.count)
        for bin in power.indices {
            let value = fft.spectrum[bin]
            power[bin] = value.real * value.real + value.imag * value.imag
            longTermSpectrum[bin] += power[bin]
        }
        spectrumFrames += 1
        for index in fits.indices {
            fits[index].perFrame.append(formants(power, fits[index]))
        }
    }

    /// The formants of one frame's power spectrum below `fit.band`, lowest first, at most `fit.count`.
    private func formants(_ power: [Double], _ fit: Fit) -> [Float] {
        let binWidth = Double(sampleRate) / Double(fft.size)
        let last = min(power.count - 1, Int(fit.band / binWidth))
        var r = [Double](repeating: 0, count: fit.order + 1)
        for lag in 0...fit.order {
            var sum = 0.0
            for bin in 0...last {
                let weight = bin == 0 || bin == last ? 0.5 : 1
                sum += weight * power[bin] * cos(Double.pi * Double(lag) * Double(bin) * binWidth / fit.band)
            }
            r[lag] = sum
        }
        guard r[0] > 0, let coefficients = levinson(r) else { return [] }
        let roots = polynomialRoots(coefficients)
        var found: [Double] = []
        for root in roots where root.imag > 0 {
            let frequency = atan2(root.imag, root.real) / Double.pi * fit.band
            // The band is sampled at 2 × band: a pole of radius r is -ln(r) · 2 band / π wide.
            let bandwidth = -log(root.real * root.real + root.imag * root.imag) / Double.pi * fit.band
            if frequency > 50 && frequency < fit.band - 50 && bandwidth < Self.widestFormant { found.append(frequency) }
        }
        return found.sorted().prefix(fit.count).map(Float.init)
    }

    /// The vocal-tract length from the formants of `frames` (the voiced ones), in cm.
    func vocalTractLength(frames: [Int], speedOfSound: Double) -> Double {
        let fit = fits.count > 1 && bandEdge >= 5000 ? fits[1] : fits[0]
        var sumProduct = 0.0, sumSquares = 0.0
        for formant in 0..<fit.count {
            var values: [Double] = []
            for frame in frames where frame < fit.perFrame.count && fit.perFrame[frame].count > formant {
                values.append(Double(fit.perFrame[frame][formant]))
            }
            guard !values.isEmpty else { continue }
            values.sort()
            let position = Double(2 * formant + 1) / 2
            sumProduct += quantile(values, 0.5) * position
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
        var level = [Double](repeating: -400, count: longTermSpectrum.count)
        var reference = 0.0, referenceBins = 0
        for bin in level.indices {
            let omega = 2 * Double.pi * Double(bin) / Double(fft.size)
            let emphasis = 1 + preEmphasis * preEmphasis - 2 * preEmphasis * cos(omega)
            level[bin] = 10 * log10(max(longTermSpectrum[bin] / max(emphasis, 1e-12), 1e-300))
            let frequency = Double(bin) * binWidth
            if frequency >= 300 && frequency <= 3000 {
                reference += level[bin]
                referenceBins += 1
            }
        }
        guard referenceBins > 0 else { return 0 }
        reference /= Double(referenceBins)
        let highest = level.indices.last { level[$0] > reference - Self.edgeDrop } ?? 0
        return Double(highest) * binWidth
    }
}

/// The prediction polynomial 1 + a₁z⁻¹ + … + aₚz⁻ᵖ of autocorrelation `r` (Levinson–Durbin), as [1, a₁, …, aₚ];
/// nil when the recursion breaks down (a reflection coefficient of magnitude 1 or more).
private func levinson(_ r: [Double]) -> [Double]? {
    let order = r.count - 1
    var a = [Double](repeating: 0, count: order + 1)
    a[0] = 1
    var error = r[0]
    for m in 1...order {
        var sum = r[m]
        for i in 1..<m { sum += a[i] * r[m - i] }
        let k = -sum / error
        guard abs(k) < 1 else { return nil }
        let previous = a
        for i in 1..<m { a[i] = previous[i] + k * previous[m - i] }
        a[m] = k
        error *= 1 - k * k
    }
    return a
}

/// The roots of zᵖ + c₁zᵖ⁻¹ + … + cₚ (`coefficients` = [1, c₁, …, cₚ]) by the Durand–Kerner iteration.
private func polynomialRoots(_ coefficients: [Double]) -> [Complex] {
    let degree = coefficients.count - 1
    guard degree > 0 else { return [] }
    func times(_ x: Complex, _ y: Complex) -> Complex {
        Complex(x.real * y.real - x.imag * y.imag, x.real * y.imag + x.imag * y.real)
    }
    func divided(_ x: Complex, _ y: Complex) -> Complex {
        let norm = y.real * y.real + y.imag * y.imag
        return Complex((x.real * y.real + x.imag * y.imag) / norm, (x.imag * y.real - x.real * y.imag) / norm)
    }
    func value(at z: Complex) -> Complex {
        var result = Complex(1, 0)
        for coefficient in coefficients.dropFirst() {
            result = times(result, z)
            result.real += coefficient
        }
        return result
    }
    let seed = Complex(0.4, 0.9)
    var roots = [Complex(1, 0)]
    for _ in 1..<degree { roots.append(times(roots[roots.count - 1], seed)) }
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
    return roots
}
