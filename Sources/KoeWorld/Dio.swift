import Foundation

/// WORLD's DIO F0 estimator (Distributed Inline-filter Operation).
///
/// The signal is low-passed at a ladder of cut-off frequencies. In each band the spacing of four event
/// types (rising and falling zero crossings, peaks, dips) gives an F0 candidate per frame, scored by how much
/// the four disagree; the steadiest candidate wins, and four passes over the contour remove jumps and
/// extend voiced runs into their edges. Numbers follow WORLD's `Dio` step for step.
public struct Dio: Sendable {
    public struct Options: Sendable, Equatable {
        /// Time between frame centres, in milliseconds (WORLD: 5 ms).
        public var framePeriod = 5.0
        /// Lowest F0 searched, in Hz (WORLD's `kFloorF0`, 71 Hz).
        public var f0Floor = 71.0
        /// Highest F0 searched, in Hz (WORLD's `kCeilF0`, 800 Hz).
        public var f0Ceil = 800.0
        /// Low-pass bands per octave between floor and ceiling (WORLD: 2).
        public var channelsInOctave = 2.0
        /// Decimation factor before analysis, clamped to 1...12; 1 analyses at full rate (WORLD: 1).
        public var speed = 1
        /// Largest relative F0 change between neighbouring frames that stays voiced (WORLD: 0.1).
        public var allowedRange = 0.1

        public init() {}
    }

    public let sampleRate: Int
    public let options: Options

    public init(sampleRate: Int, options: Options = Options()) {
        self.sampleRate = sampleRate
        self.options = options
    }

    public func estimate(_ signal: [Double]) -> F0Contour {
        let frameCount = F0Contour.frameCount(
            samples: signal.count, sampleRate: sampleRate, framePeriod: options.framePeriod)
        let time = F0Contour.timeAxis(frameCount: frameCount, framePeriod: options.framePeriod)
        let layout = DioLayout(signalLength: signal.count, sampleRate: sampleRate, options: options)

        let forward = ForwardRealFFT(size: layout.fftSize)
        let spectrum = lowCutSpectrum(of: signal, layout: layout, fft: forward)
        let bank = candidateBank(spectrum: spectrum, layout: layout, time: time, fft: forward)
        let best = bank.bestContour()
        let f0 = ContourFixer(bank: bank, options: options).fixed(best)
        return F0Contour(time: time, f0: f0)
    }

    private func candidateBank(
        spectrum: [Complex], layout: DioLayout, time: [Double], fft: ForwardRealFFT
    ) -> CandidateBank {
        var bank = CandidateBank(bands: layout.boundaries.count, frames: time.count)
        let analyzer = BandAnalyzer(
            layout: layout, spectrum: spectrum, options: options, frames: time.count, forward: fft)
        for (band, boundary) in layout.boundaries.enumerated() {
            analyzer.candidates(boundary: boundary, time: time, band: band, into: &bank)
        }
        return bank
    }
}

/// Sizes derived once from the signal length, rate and options.
private struct DioLayout {
    /// Upper edge of each low-pass band, in Hz.
    let boundaries: [Double]
    let decimationRatio: Int
    let decimatedLength: Int
    let decimatedRate: Double
    let fftSize: Int
    /// Half length, in decimated samples, of the taps that remove everything below `lowCutFrequency`.
    let lowCutHalfLength: Int

    /// DIO's DC-removal cut-off, in Hz (WORLD's `kCutOff`).
    static let lowCutFrequency = 50.0

    init(signalLength: Int, sampleRate: Int, options: Dio.Options) {
        let octaves = log(options.f0Ceil / options.f0Floor) / log(2.0)
        let bandCount = max(1, 1 + Int(octaves * options.channelsInOctave))
        boundaries = (0..<bandCount).map { band in
            options.f0Floor * pow(2.0, Double(band + 1) / options.channelsInOctave)
        }
        // WORLD's decimation reflects `padding + 1` samples at each end; shorter signals stay at full rate.
        let ratio = min(max(options.speed, 1), 12)
        decimationRatio = signalLength > 2 * Matlab.decimationPadding ? ratio : 1
        decimatedLength = 1 + signalLength / decimationRatio
        decimatedRate = Double(sampleRate) / Double(decimationRatio)
        lowCutHalfLength = Matlab.round(decimatedRate / Self.lowCutFrequency)
        let widestBandTaps = 4 * Int(1.0 + decimatedRate / boundaries[0] / 2.0)
        fftSize = Matlab.suitableFFTSize(decimatedLength + lowCutHalfLength * 2 + 1 + widestBandTaps)
    }
}

extension Dio {
    /// Spectrum of the decimated, mean-removed signal after a zero-phase high-pass at 50 Hz.
    fileprivate func lowCutSpectrum(of signal: [Double], layout: DioLayout, fft: ForwardRealFFT) -> [Complex] {
        let waveform = fft.waveform
        loadDecimatedSignal(signal, layout: layout, into: waveform)
        removeMean(waveform, count: layout.decimatedLength)
        fft.execute()
        var spectrum = Array(fft.spectrum)

        designLowCutFilter(taps: layout.lowCutHalfLength * 2 + 1, into: waveform)
        fft.execute()
        for bin in spectrum.indices {
            spectrum[bin] = multiply(spectrum[bin], fft.spectrum[bin])
        }
        return spectrum
    }

    /// The analysed length is one sample longer than the (decimated) signal; WORLD leaves that sample
    /// zero at full rate and, when decimating, takes whatever its decimation wrote there.
    private func loadDecimatedSignal(_ signal: [Double], layout: DioLayout, into waveform: UnsafeMutableBufferPointer<Double>) {
        let samples = layout.decimationRatio == 1
            ? signal
            : Matlab.decimate(signal, factor: layout.decimationRatio, count: layout.decimatedLength)
        for i in 0..<waveform.count {
            waveform[i] = i < samples.count && i < layout.decimatedLength ? samples[i] : 0
        }
    }

    private func removeMean(_ waveform: UnsafeMutableBufferPointer<Double>, count: Int) {
        var mean = 0.0
        for i in 0..<count {
            mean += waveform[i]
        }
        mean /= Double(count)
        for i in 0..<count {
            waveform[i] -= mean
        }
    }

    /// A raised-cosine low-pass of `taps` taps, negated and centred on sample 0 (wrapping around),
    /// plus a unit impulse: all-pass minus low-pass, i.e. a zero-phase high-pass.
    private func designLowCutFilter(taps: Int, into filter: UnsafeMutableBufferPointer<Double>) {
        let size = filter.count
        let half = (taps - 1) / 2
        for i in 1...taps {
            filter[i - 1] = 0.5 - 0.5 * cos(Double(i) * 2.0 * Double.pi / Double(taps + 1))
        }
        for i in taps..<size {
            filter[i] = 0
        }
        var sum = 0.0
        for i in 0..<taps {
            sum += filter[i]
        }
        for i in 0..<taps {
            filter[i] = -filter[i] / sum
        }
        for i in 0..<half {
            filter[size - half + i] = filter[i]
        }
        for i in 0..<taps {
            filter[i] = filter[i + half]
        }
        filter[0] += 1.0
    }
}

@inline(__always)
private func multiply(_ a: Complex, _ b: Complex) -> Complex {
    Complex(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)
}

/// F0 candidates and their scores (lower is better), one row a band, one column a frame.
private struct CandidateBank {
    var candidates: Matrix
    var scores: Matrix

    init(bands: Int, frames: Int) {
        candidates = Matrix(rows: bands, columns: frames)
        scores = Matrix(rows: bands, columns: frames)
    }

    var bands: Int { candidates.rows }
    var frames: Int { candidates.columns }

    /// Per frame, the candidate of the band with the lowest score (the first band on ties).
    func bestContour() -> [Double] {
        (0..<frames).map { frame in
            var bestScore = scores[0, frame]
            var best = candidates[0, frame]
            for band in 1..<bands where bestScore > scores[band, frame] {
                bestScore = scores[band, frame]
                best = candidates[band, frame]
            }
            return best
        }
    }

    /// The candidate nearest `reference` across all bands at `frame`.
    func nearestCandidate(to reference: Double, frame: Int) -> Double {
        var best = candidates[0, frame]
        var smallestError = abs(reference - best)
        for band in 1..<bands {
            let error = abs(reference - candidates[band, frame])
            if error < smallestError {
                smallestError = error
                best = candidates[band, frame]
            }
        }
        return best
    }
}

/// Intervals between successive events of one kind, with where each interval sits in time.
private struct EventIntervals {
    var locations: [Double]
    var frequencies: [Double]
    var count = 0

    init(capacity: Int) {
        locations = [Double](repeating: 0, count: capacity)
        frequencies = [Double](repeating: 0, count: capacity)
    }

    /// Records the positive-to-non-positive zero crossings of `signal[0..<length]`, located to a fraction
    /// of a sample by linear interpolation; each gap between crossings becomes a frequency at its midpoint.
    mutating func collectFallingCrossings(of signal: [Double], length: Int, rate: Double) {
        count = 0
        var previousEdge = 0.0
        var edgeCount = 0
        for i in 0..<max(length - 1, 0) where 0.0 < signal[i] && signal[i + 1] <= 0.0 {
            let edge = Double(i + 1) - signal[i] / (signal[i + 1] - signal[i])
            if edgeCount > 0 {
                frequencies[count] = rate / (edge - previousEdge)
                locations[count] = (previousEdge + edge) / 2.0 / rate
                count += 1
            }
            previousEdge = edge
            edgeCount += 1
        }
    }

    /// The interval frequencies linearly interpolated (and extrapolated) at `time`.
    func interpolate(at time: [Double], into output: UnsafeMutableBufferPointer<Double>) {
        locations.withUnsafeBufferPointer { x in
            frequencies.withUnsafeBufferPointer { y in
                time.withUnsafeBufferPointer { xi in
                    Matlab.interp1(
                        x: UnsafeBufferPointer(rebasing: x[0..<count]),
                        y: UnsafeBufferPointer(rebasing: y[0..<count]),
                        at: xi, into: output)
                }
            }
        }
    }
}

/// Filters the low-cut spectrum band by band and turns each band's events into F0 candidates.
/// FFTs and workspaces are made once and reused for every band.
private final class BandAnalyzer {
    private let layout: DioLayout
    private let spectrum: [Complex]
    private let options: Dio.Options
    private let forward: ForwardRealFFT
    private let inverse: InverseRealFFT
    private var filtered: [Double]
    /// Falling crossings, rising crossings, peaks, dips.
    private var events: [EventIntervals]
    private var interpolated: Matrix

    /// Score given to frames without a candidate (WORLD's `kMaximumValue`).
    private static let missingScore = 100_000.0
    /// Keeps divisions by a zero candidate finite (WORLD's `kMySafeGuardMinimum`).
    static let safeGuard = 1e-12

    init(layout: DioLayout, spectrum: [Complex], options: Dio.Options, frames: Int, forward: ForwardRealFFT) {
        self.layout = layout
        self.spectrum = spectrum
        self.options = options
        self.forward = forward
        inverse = InverseRealFFT(size: layout.fftSize)
        filtered = [Double](repeating: 0, count: layout.decimatedLength)
        events = Array(repeating: EventIntervals(capacity: layout.decimatedLength), count: 4)
        interpolated = Matrix(rows: 4, columns: frames)
    }

    func candidates(boundary: Double, time: [Double], band: Int, into bank: inout CandidateBank) {
        let halfAverageLength = Matlab.round(layout.decimatedRate / boundary / 2.0)
        lowPass(halfAverageLength: halfAverageLength)
        collectEvents()
        guard events.allSatisfy({ $0.count > 2 }) else {
            for frame in 0..<time.count {
                bank.candidates[band, frame] = 0
                bank.scores[band, frame] = Self.missingScore / Self.safeGuard
            }
            return
        }
        interpolateEvents(at: time)
        scoreCandidates(boundary: boundary, band: band, into: &bank)
    }

    /// Convolves the signal with a Nuttall window of `4 * halfAverageLength` taps and compensates its delay.
    private func lowPass(halfAverageLength: Int) {
        let taps = halfAverageLength * 4
        let window = Window.nuttall(length: taps)
        let waveform = forward.waveform
        for i in 0..<waveform.count {
            waveform[i] = i < taps ? window[i] : 0
        }
        forward.execute()
        multiplySpectra()
        inverse.execute()
        let delay = halfAverageLength * 2
        for i in 0..<filtered.count {
            filtered[i] = inverse.waveform[i + delay]
        }
    }

    /// Bin-wise product of signal and filter spectra. WORLD writes each product also to the mirrored
    /// bin `size - i - 1`; for the top two bins that lands inside the half spectrum, so the Nyquist bin
    /// becomes the signal's Nyquist value times the product one bin below, and that bin takes the same
    /// value. The filter is negligible there, but the quirk is kept so results match WORLD's.
    private func multiplySpectra() {
        let half = layout.fftSize / 2
        let filter = forward.spectrum
        let product = inverse.spectrum
        for bin in 0..<half {
            product[bin] = multiply(spectrum[bin], filter[bin])
        }
        product[half] = multiply(spectrum[half], product[half - 1])
        product[half - 1] = product[half]
    }

    /// Falling and rising zero crossings of the filtered signal, then those of its (negated) first
    /// difference, which fall at peaks and dips.
    private func collectEvents() {
        let length = filtered.count
        let rate = layout.decimatedRate
        events[0].collectFallingCrossings(of: filtered, length: length, rate: rate)
        for i in 0..<length {
            filtered[i] = -filtered[i]
        }
        events[1].collectFallingCrossings(of: filtered, length: length, rate: rate)
        for i in 0..<max(length - 1, 0) {
            filtered[i] = filtered[i] - filtered[i + 1]
        }
        events[2].collectFallingCrossings(of: filtered, length: length - 1, rate: rate)
        for i in 0..<max(length - 1, 0) {
            filtered[i] = -filtered[i]
        }
        events[3].collectFallingCrossings(of: filtered, length: length - 1, rate: rate)
    }

    private func interpolateEvents(at time: [Double]) {
        for kind in 0..<4 {
            interpolated.withMutableRow(kind) { row in
                events[kind].interpolate(at: time, into: row)
            }
        }
    }

    /// The candidate is the mean of the four event frequencies, its score their sample standard deviation
    /// relative to the candidate; candidates outside the band or the search range are dropped.
    private func scoreCandidates(boundary: Double, band: Int, into bank: inout CandidateBank) {
        for frame in 0..<interpolated.columns {
            let a = interpolated[0, frame]
            let b = interpolated[1, frame]
            let c = interpolated[2, frame]
            let d = interpolated[3, frame]
            var candidate = (a + b + c + d) / 4.0
            let squares = (a - candidate) * (a - candidate) + (b - candidate) * (b - candidate)
                + (c - candidate) * (c - candidate) + (d - candidate) * (d - candidate)
            var score = (squares / 3.0).squareRoot()
            if candidate > boundary || candidate < boundary / 2.0
                || candidate > options.f0Ceil || candidate < options.f0Floor {
                candidate = 0
                score = Self.missingScore
            }
            bank.candidates[band, frame] = candidate
            bank.scores[band, frame] = score / (candidate + Self.safeGuard)
        }
    }
}

/// DIO's four post-processing passes over the best contour.
private struct ContourFixer {
    let bank: CandidateBank
    let options: Dio.Options

    /// Shortest voiced run kept, in frames: about one period of the F0 floor on each side, odd.
    private var voiceRangeMinimum: Int {
        Int(0.5 + 1000.0 / options.framePeriod / options.f0Floor) * 2 + 1
    }

    func fixed(_ best: [Double]) -> [Double] {
        let frames = best.count
        guard frames > voiceRangeMinimum else {
            return [Double](repeating: 0, count: frames)
        }
        let stepped = removeJumps(best)
        let trimmed = removeShortRuns(stepped)
        let (onsets, offsets) = voicedBoundaries(trimmed)
        let extended = extendForward(trimmed, from: offsets)
        return extendBackward(extended, from: onsets)
    }

    /// Step 1: frames near either end become unvoiced, as does any frame whose F0 jumps by more than
    /// the allowed range from the previous frame.
    private func removeJumps(_ best: [Double]) -> [Double] {
        let frames = best.count
        let margin = voiceRangeMinimum
        var base = best
        for i in 0..<margin {
            base[i] = 0
            base[frames - 1 - i] = 0
        }
        var result = [Double](repeating: 0, count: frames)
        for i in margin..<frames {
            let change = abs((base[i] - base[i - 1]) / (BandAnalyzer.safeGuard + base[i]))
            result[i] = change < options.allowedRange ? base[i] : 0
        }
        return result
    }

    /// Step 2: a frame stays voiced only if its whole neighbourhood of `voiceRangeMinimum` frames is voiced.
    private func removeShortRuns(_ f0: [Double]) -> [Double] {
        let center = (voiceRangeMinimum - 1) / 2
        var result = f0
        for i in center..<(f0.count - center) {
            for j in -center...center where f0[i + j] == 0 {
                result[i] = 0
                break
            }
        }
        return result
    }

    /// First frame of each voiced run, and last frame of each.
    private func voicedBoundaries(_ f0: [Double]) -> (onsets: [Int], offsets: [Int]) {
        var onsets: [Int] = []
        var offsets: [Int] = []
        for i in 1..<f0.count {
            if f0[i] == 0 && f0[i - 1] != 0 {
                offsets.append(i - 1)
            } else if f0[i - 1] == 0 && f0[i] != 0 {
                onsets.append(i)
            }
        }
        return (onsets, offsets)
    }

    /// Step 3: continue each voiced run forwards while some band offers a candidate close to the
    /// linear extrapolation of the last two frames.
    private func extendForward(_ f0: [Double], from offsets: [Int]) -> [Double] {
        var result = f0
        for (k, offset) in offsets.enumerated() {
            let limit = k == offsets.count - 1 ? result.count - 1 : offsets[k + 1]
            var j = offset
            while j < limit {
                result[j + 1] = continuation(current: result[j], previous: result[j - 1], frame: j + 1)
                if result[j + 1] == 0 { break }
                j += 1
            }
        }
        return result
    }

    /// Step 4: the same, backwards from the start of each voiced run.
    private func extendBackward(_ f0: [Double], from onsets: [Int]) -> [Double] {
        var result = f0
        for k in stride(from: onsets.count - 1, through: 0, by: -1) {
            let limit = k == 0 ? 1 : onsets[k - 1]
            var j = onsets[k]
            while j > limit {
                result[j - 1] = continuation(current: result[j], previous: result[j + 1], frame: j - 1)
                if result[j - 1] == 0 { break }
                j -= 1
            }
        }
        return result
    }

    /// The candidate at `frame` nearest the extrapolation from `previous` through `current`,
    /// or 0 when even that one is further away than the allowed range.
    private func continuation(current: Double, previous: Double, frame: Int) -> Double {
        let reference = (current * 3.0 - previous) / 2.0
        let best = bank.nearestCandidate(to: reference, frame: frame)
        return abs(1.0 - best / reference) > options.allowedRange ? 0 : best
    }
}
