import Foundation
import KoeDSP

/// WORLD's Harvest F0 estimator (M. Morise, "Harvest: A high-performance fundamental frequency estimator
/// from speech signals", Interspeech 2017).
///
/// The signal is brought down to about 8 kHz and split by many band-pass filters; zero-crossing intervals
/// in each band give raw F0 candidates, which are refined by instantaneous frequency, scored, joined into
/// voiced sections and smoothed. All of this runs on a 1 ms grid; the requested frame period picks the
/// nearest 1 ms frame, exactly as WORLD does.
public struct Harvest: Sendable {
    public struct Options: Sendable, Equatable {
        /// Hop between output frames, in milliseconds. WORLD's default: 5 ms.
        public var framePeriod: Double
        /// Lowest F0 searched, in Hz. WORLD's default: 71 Hz.
        public var f0Floor: Double
        /// Highest F0 searched, in Hz. WORLD's default: 800 Hz.
        public var f0Ceil: Double

        public init(framePeriod: Double = 5.0, f0Floor: Double = 71.0, f0Ceil: Double = 800.0) {
            self.framePeriod = framePeriod
            self.f0Floor = f0Floor
            self.f0Ceil = f0Ceil
        }
    }

    public let sampleRate: Int
    public let options: Options
    /// The band-pass channels, made once: every estimate uses the same.
    private let filterBank: HarvestFilterBank

    /// Throws if the rate is not supported or an option is out of range.
    public init(sampleRate: Int, options: Options = Options()) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try SignalRequirements.validateFramePeriod(options.framePeriod)
        try SignalRequirements.validateF0Range(floor: options.f0Floor, ceil: options.f0Ceil, sampleRate: sampleRate)
        self.sampleRate = sampleRate
        self.options = options
        let rate = DecimatedSignal.rate(from: sampleRate)
        filterBank = HarvestFilterBank(centres: Self.bandCentres(options), sampleRate: rate)
    }

    /// F0 every `options.framePeriod` ms; 0 marks unvoiced frames. Throws if `signal` is shorter than three
    /// periods of the F0 floor or not finite throughout.
    public func estimate(_ signal: [Double]) throws(WorldError) -> F0Contour {
        try SignalRequirements.validate(signal, sampleRate: sampleRate, f0Floor: options.f0Floor)
        return estimate(unchecked: signal)
    }

    /// `estimate` of a signal segment of any length from 1 sample, finite throughout: the streaming analysis
    /// estimates segments of a longer signal.
    package func estimate(unchecked signal: [Double]) -> F0Contour {
        let basic = basicContour(signal)
        let frameCount = F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: options.framePeriod)
        let f0 = (0..<frameCount).map { frame in
            let time = Double(frame) * options.framePeriod / 1000.0
            return basic[min(basic.count - 1, Matlab.round(time * 1000.0))]
        }
        return F0Contour(f0: f0, framePeriod: options.framePeriod)
    }

    /// The whole estimation on Harvest's own 1 ms grid.
    private func basicContour(_ signal: [Double]) -> [Double] {
        let frameCount = F0Contour.frameCount(samples: signal.count, sampleRate: sampleRate, framePeriod: Tuning.basicFramePeriod)
        let frameTimes = (0..<frameCount).map { Double($0) / 1000.0 }
        let decimated = DecimatedSignal(signal, sampleRate: sampleRate)

        let search = ZeroCrossingSearch(
            signal: decimated, filterBank: filterBank, frameTimes: frameTimes,
            f0Floor: options.f0Floor, f0Ceil: options.f0Ceil)
        let raw = search.rawCandidates()
        let perFrameLimit = Matlab.round(Double(filterBank.filters.count) / 10.0)
        var candidates = spreadToNeighbours(officialCandidates(raw, limit: perFrameLimit))

        let refiner = InstantaneousFrequencyRefiner(signal: decimated, f0Floor: options.f0Floor, f0Ceil: options.f0Ceil)
        var scores = refiner.refine(&candidates, frameTimes: frameTimes)
        removeUnreliableCandidates(&candidates, scores: &scores)

        let best = ContourFixer(candidates: candidates, scores: scores).bestContour()
        return smoothed(best)
    }

    /// Centre frequencies of the band-pass channels: 40 a octave, from just under the floor to just over the ceil.
    private static func bandCentres(_ options: Options) -> [Double] {
        let lowest = options.f0Floor * 0.9
        let highest = options.f0Ceil * 1.1
        let count = 1 + Int(log(highest / lowest) / Tuning.log2 * Tuning.channelsInOctave)
        return (0..<count).map { lowest * pow(2.0, Double($0 + 1) / Tuning.channelsInOctave) }
    }
}

/// Constants WORLD fixed for Harvest, tuned on speech databases.
private enum Tuning {
    /// WORLD's spelling of ln 2; the exact digits matter for channel counts and FFT sizes.
    static let log2 = 0.69314718055994529
    static let channelsInOctave = 40.0
    /// Harvest analyses near this rate whatever the input rate.
    static let targetSampleRate = 8000.0
    /// Largest decimation factor WORLD designed a filter for.
    static let maximumDecimation = 12
    /// Samples of edge padding (at the input rate, rounded up to whole factors) so decimation transients fall outside.
    static let decimationPadding = 140.0
    static let basicFramePeriod = 1.0
    /// Each frame also tries the candidates of this many frames on each side.
    static let spreadFrames = 3
    /// A run of voiced channels must be at least this long to yield a candidate.
    static let minimumChannelRun = 10
    static let minimumScore = 2.5
    static let maximumHarmonics = 6
    static let safeGuard = 0.000000000001
}

// MARK: - Decimated signal

/// The input brought down to about 8 kHz (never by more than WORLD's largest factor), with its mean removed.
private struct DecimatedSignal {
    let samples: [Double]
    let sampleRate: Double

    init(_ signal: [Double], sampleRate: Int) {
        let factor = Self.factor(from: sampleRate)
        let count = Int((Double(signal.count) / Double(factor)).rounded(.up))
        self.sampleRate = Self.rate(from: sampleRate)
        var samples = factor == 1 ? signal : Self.decimateWithPadding(signal, factor: factor, count: count)
        Self.removeMean(&samples)
        self.samples = samples
    }

    static func rate(from sampleRate: Int) -> Double {
        Double(sampleRate) / Double(factor(from: sampleRate))
    }

    private static func factor(from sampleRate: Int) -> Int {
        let speed = Matlab.round(Double(sampleRate) / Tuning.targetSampleRate)
        return max(min(speed, Tuning.maximumDecimation), 1)
    }

    /// Edge-padded with the end samples before decimating, so the filter's start-up stays out of the result.
    private static func decimateWithPadding(_ signal: [Double], factor: Int, count: Int) -> [Double] {
        let padding = Int((Tuning.decimationPadding / Double(factor)).rounded(.up) * Double(factor))
        var padded = [Double](repeating: signal[0], count: padding)
        padded.reserveCapacity(signal.count + 2 * padding)
        padded.append(contentsOf: signal)
        padded.append(contentsOf: repeatElement(signal[signal.count - 1], count: padding))
        let start = padding / factor
        let decimated = Matlab.decimate(padded, factor: factor, count: start + count)
        return Array(decimated[start...])
    }

    private static func removeMean(_ samples: inout [Double]) {
        var sum = 0.0
        for sample in samples {
            sum += sample
        }
        let mean = sum / Double(samples.count)
        for i in samples.indices {
            samples[i] -= mean
        }
    }
}

// MARK: - Raw candidates from zero crossings

/// Band-pass filters the decimated signal channel by channel and reads F0 from the spacing of four kinds
/// of events (falling and rising zero crossings, peaks, dips), interpolated onto the 1 ms grid.
private final class ZeroCrossingSearch {
    private let sampleRate: Double
    private let length: Int
    private let frameTimes: [Double]
    private let f0Floor: Double
    private let f0Ceil: Double

    private let filters: [HarvestFilterBank.Filter]
    private let signalFFT: ForwardRealFFT
    /// The filters' spectra kept by the bank, if it keeps them at this size; otherwise each is made when used.
    private let filterSpectra: FilterSpectra?
    private lazy var filterTransform = FilterTransform(fftSize: signalFFT.size)
    private let inverseFFT: InverseRealFFT
    private var filtered: [Double]
    private let crossings: ZeroCrossings
    private var events: [EventIntervals]
    private var difference: [Double]
    /// The four kinds' rates on the frame grid, one kind after another.
    private let interpolated: UnsafeMutableBufferPointer<Double>

    init(signal: DecimatedSignal, filterBank: HarvestFilterBank, frameTimes: [Double], f0Floor: Double, f0Ceil: Double) {
        let length = signal.samples.count
        sampleRate = signal.sampleRate
        self.length = length
        self.frameTimes = frameTimes
        self.f0Floor = f0Floor
        self.f0Ceil = f0Ceil
        filters = filterBank.filters
        let longestFilter = 2 * Int(2.0 * signal.sampleRate / filters[0].centre)
        let fftSize = Matlab.suitableFFTSize(length + 5 + longestFilter)
        signalFFT = ForwardRealFFT(size: fftSize)
        filterSpectra = filterBank.spectra(fftSize: fftSize)
        inverseFFT = InverseRealFFT(size: fftSize)
        filtered = [Double](repeating: 0, count: length)
        crossings = ZeroCrossings(capacity: length)
        events = (0..<4).map { _ in EventIntervals(capacity: length) }
        difference = [Double](repeating: 0, count: length)
        interpolated = .allocate(capacity: 4 * frameTimes.count)
        interpolated.initialize(repeating: 0)

        for i in 0..<length {
            signalFFT.waveform[i] = signal.samples[i]
        }
        signalFFT.execute()
    }

    deinit {
        interpolated.deallocate()
    }

    /// One F0 contour a channel, as columns of a frames x channels matrix; 0 where the channel has none.
    func rawCandidates() -> Matrix {
        var raw = Matrix.zeros(rows: frameTimes.count, columns: filters.count)
        for (channel, filter) in filters.enumerated() {
            let band = filter.centre
            bandPass(channel: channel)
            findEventIntervals()
            guard events.allSatisfy({ $0.count >= 3 }) else { continue }
            interpolateEvents()
            let channels = filters.count
            raw.storage.withUnsafeMutableBufferPointer { raw in
                for frame in 0..<frameTimes.count {
                    raw[frame * channels + channel] = candidate(frame: frame, band: band)
                }
            }
        }
        return raw
    }

    /// Convolves the signal with a channel's filter through the FFT and compensates the filter's delay.
    private func bandPass(channel: Int) {
        let filter = filters[channel]
        multiplySpectra(by: filterSpectra?.spectrum(channel: channel) ?? filterTransform.spectrum(of: filter))
        inverseFFT.execute()
        let delay = filter.half + 1
        for i in 0..<length {
            filtered[i] = inverseFFT.waveform[i + delay]
        }
    }

    /// Signal spectrum times filter spectrum into the inverse FFT's input. WORLD mirrors bins in place
    /// while it multiplies, which leaves the two top bins both holding the Nyquist bin times the product
    /// one below it; that is reproduced here so the filtered signals agree.
    private func multiplySpectra(by filter: UnsafeBufferPointer<Complex>) {
        let half = signalFFT.size / 2
        let signal = signalFFT.spectrum
        let product = inverseFFT.spectrum
        for k in 0..<(half - 1) {
            product[k] = signal[k] * filter[k]
        }
        let belowNyquist = signal[half - 1] * filter[half - 1]
        product[half] = signal[half] * belowNyquist
        product[half - 1] = product[half]
    }

    /// Falling and rising crossings of the filtered signal, then peaks and dips as the falling and rising
    /// crossings of its first difference. (WORLD finds rising crossings as the falling crossings of the negated
    /// signal, and differences that; the crossings and their fractional positions come out the same.)
    private func findEventIntervals() {
        filtered.withUnsafeBufferPointer { signal in
            difference.withUnsafeMutableBufferPointer { difference in
                crossings.find(in: signal)
                for i in 0..<(length - 1) {
                    difference[i] = signal[i + 1] - signal[i]
                }
                let slope = UnsafeBufferPointer(rebasing: difference[0..<(length - 1)])
                for kind in EventKind.allCases {
                    events[kind.rawValue].measure(
                        crossings: crossings[kind], in: kind.onSlope ? slope : signal, sampleRate: sampleRate)
                }
            }
        }
    }

    private func interpolateEvents() {
        frameTimes.withUnsafeBufferPointer { times in
            for kind in 0..<4 {
                let frames = times.count
                events[kind].interpolate(
                    at: times, into: UnsafeMutableBufferPointer(rebasing: interpolated[(kind * frames)..<((kind + 1) * frames)]))
            }
        }
    }

    /// The four event estimates averaged, kept only near this channel's band and inside the search range.
    @inline(__always)
    private func candidate(frame: Int, band: Double) -> Double {
        let frames = frameTimes.count
        let f0 = (interpolated[frame] + interpolated[frames + frame] + interpolated[2 * frames + frame]
            + interpolated[3 * frames + frame]) / 4.0
        let outside = f0 > band * 1.1 || f0 < band * 0.9 || f0 > f0Ceil || f0 < f0Floor
        return outside ? 0 : f0
    }
}

/// Rates (Hz) and positions (s) of the intervals between successive events of one kind.
private struct EventIntervals {
    var locations: [Double]
    var rates: [Double]
    var count = 0

    init(capacity: Int) {
        locations = [Double](repeating: 0, count: capacity)
        rates = [Double](repeating: 0, count: capacity)
    }

    /// Crossings (a crossing at `i` lies between samples `i` and `i + 1`) located to a fraction of a sample,
    /// at WORLD's one-based positions; each pair of neighbours gives one interval.
    mutating func measure(crossings: UnsafeBufferPointer<Int32>, in signal: UnsafeBufferPointer<Double>, sampleRate: Double) {
        var found = 0
        locations.withUnsafeMutableBufferPointer { locations in
            rates.withUnsafeMutableBufferPointer { rates in
                var previousEdge = -1.0
                for crossing in crossings {
                    let edge = Int(crossing) + 1
                    let fineEdge = Double(edge) - signal[edge - 1] / (signal[edge] - signal[edge - 1])
                    if previousEdge >= 0 {
                        rates[found] = sampleRate / (fineEdge - previousEdge)
                        locations[found] = (previousEdge + fineEdge) / 2.0 / sampleRate
                        found += 1
                    }
                    previousEdge = fineEdge
                }
            }
        }
        count = found
    }

    func interpolate(at times: UnsafeBufferPointer<Double>, into output: UnsafeMutableBufferPointer<Double>) {
        locations.withUnsafeBufferPointer { x in
            rates.withUnsafeBufferPointer { y in
                Matlab.interp1(
                    x: UnsafeBufferPointer(rebasing: x[0..<count]), y: UnsafeBufferPointer(rebasing: y[0..<count]),
                    at: times, into: output)
            }
        }
    }
}

/// Harvest's four kinds of event: a signal's falling and rising zero crossings, and its peaks and dips, which
/// are the falling and rising zero crossings of its first difference (its slope).
private enum EventKind: Int, CaseIterable {
    case falling, rising, peak, dip

    var onSlope: Bool { self == .peak || self == .dip }
}

/// Where a signal and its slope cross zero going down (`x[i] > 0 >= x[i + 1]`) and going up
/// (`x[i] < 0 <= x[i + 1]`), by the index `i` before the crossing, each kind in its own list. Found in one
/// pass without branching on the signal, whose crossings no branch predictor foresees.
private final class ZeroCrossings {
    /// Room for one list of `capacity` indices a kind, kind after kind.
    private let indices: UnsafeMutableBufferPointer<Int32>
    private let capacity: Int
    private var counts = [0, 0, 0, 0]

    /// For signals of at most `capacity` samples.
    init(capacity: Int) {
        precondition(capacity < Int(Int32.max), "signal too long to index with 32 bits")
        self.capacity = capacity
        indices = .allocate(capacity: 4 * capacity)
    }

    deinit {
        indices.deallocate()
    }

    subscript(kind: EventKind) -> UnsafeBufferPointer<Int32> {
        let start = kind.rawValue * capacity
        return UnsafeBufferPointer(rebasing: indices[start..<(start + counts[kind.rawValue])])
    }

    /// The slope at `i` is `x[i + 1] - x[i]`, so its crossings need one sample more and stop one pair earlier.
    func find(in signal: UnsafeBufferPointer<Double>) {
        precondition(signal.count <= capacity)
        let falling = indices.baseAddress!
        let rising = falling + capacity
        let peaks = rising + capacity
        let dips = peaks + capacity
        var (fallingFound, risingFound, peaksFound, dipsFound) = (0, 0, 0, 0)
        let pairs = max(signal.count - 1, 0)
        // The signal and its slope side by side, compared together.
        var here = SIMD2(pairs > 0 ? signal[0] : 0, pairs > 0 ? signal[1] - signal[0] : 0)
        // Every index is written at the next free place; only a crossing moves the place on.
        for i in 0..<max(pairs - 1, 0) {
            let nextSample = signal[i + 1]
            let next = SIMD2(nextSample, signal[i + 2] - nextSample)
            // A true lane of a mask is all ones: -1 as an integer.
            let down = unsafeBitCast((here .> 0) .& (next .<= 0), to: SIMD2<Int64>.self)
            let up = unsafeBitCast((here .< 0) .& (next .>= 0), to: SIMD2<Int64>.self)
            let index = Int32(truncatingIfNeeded: i)
            falling[fallingFound] = index
            rising[risingFound] = index
            peaks[peaksFound] = index
            dips[dipsFound] = index
            fallingFound &-= Int(down[0])
            risingFound &-= Int(up[0])
            peaksFound &-= Int(down[1])
            dipsFound &-= Int(up[1])
            here = next
        }
        if pairs > 0 {
            let (last, next) = (signal[pairs - 1], signal[pairs])
            falling[fallingFound] = Int32(truncatingIfNeeded: pairs - 1)
            rising[risingFound] = Int32(truncatingIfNeeded: pairs - 1)
            fallingFound &+= (last > 0 ? 1 : 0) & (next <= 0 ? 1 : 0)
            risingFound &+= (last < 0 ? 1 : 0) & (next >= 0 ? 1 : 0)
        }
        counts[0] = fallingFound
        counts[1] = risingFound
        counts[2] = peaksFound
        counts[3] = dipsFound
    }
}

// MARK: - Candidate selection

/// Per frame, the mean F0 of each run of at least ten neighbouring channels that all found one
/// (the outermost channels never count as voiced). Returns frames x candidates, zero-padded.
private func officialCandidates(_ raw: Matrix, limit: Int) -> Matrix {
    let (frames, channels) = (raw.rows, raw.columns)
    let columns = max(limit, 0)
    var perFrame = Matrix.zeros(rows: frames, columns: columns)
    var widest = 0
    raw.storage.withUnsafeBufferPointer { raw in
        perFrame.storage.withUnsafeMutableBufferPointer { perFrame in
            for frame in 0..<frames {
                let row = frame * channels
                var found = 0
                var runStart = 0
                var previousVoiced = false
                for channel in 1..<channels {
                    let voiced = channel < channels - 1 && raw[row + channel] > 0
                    if voiced && !previousVoiced {
                        runStart = channel
                    } else if !voiced && previousVoiced && channel - runStart >= Tuning.minimumChannelRun && found < limit {
                        var sum = 0.0
                        for run in runStart..<channel {
                            sum += raw[row + run]
                        }
                        perFrame[frame * columns + found] = sum / Double(channel - runStart)
                        found += 1
                    }
                    previousVoiced = voiced
                }
                widest = max(widest, found)
            }
        }
    }
    var narrowed = Matrix.zeros(rows: raw.rows, columns: widest)
    for frame in 0..<raw.rows {
        for column in 0..<widest {
            narrowed[frame, column] = perFrame[frame, column]
        }
    }
    return narrowed
}

/// Each frame also receives the candidates of the three frames before and after it:
/// columns `[own | 1, 2, 3 frames back | 1, 2, 3 frames ahead]`, zero where there is no such frame.
private func spreadToNeighbours(_ own: Matrix) -> Matrix {
    let frames = own.rows
    let count = own.columns
    let spread = Tuning.spreadFrames
    let columns = count * (2 * spread + 1)
    var all = Matrix.zeros(rows: frames, columns: columns)
    own.storage.withUnsafeBufferPointer { own in
        all.storage.withUnsafeMutableBufferPointer { all in
            for frame in 0..<frames {
                for j in 0..<count {
                    all[frame * columns + j] = own[frame * count + j]
                }
            }
            for shift in 1...spread {
                for j in 0..<count {
                    for frame in stride(from: shift, to: frames, by: 1) {
                        all[frame * columns + j + count * shift] = own[(frame - shift) * count + j]
                    }
                    for frame in stride(from: 0, to: frames - shift, by: 1) {
                        all[frame * columns + j + count * (shift + spread)] = own[(frame + shift) * count + j]
                    }
                }
            }
        }
    }
    return all
}

/// The candidate nearest `reference` within `allowedRange` (relative), and its relative error;
/// (0, allowedRange) when none is that close. Later candidates win ties.
private func nearestCandidate(to reference: Double, in row: UnsafeBufferPointer<Double>, allowedRange: Double) -> (f0: Double, error: Double) {
    var best = 0.0
    var bestError = allowedRange
    for candidate in row {
        let error = abs(reference - candidate) / reference
        if error > bestError { continue }
        best = candidate
        bestError = error
    }
    return (best, bestError)
}

/// A candidate with nothing within 5 % in either neighbouring frame is dropped (F0 and score set to 0).
private func removeUnreliableCandidates(_ candidates: inout Matrix, scores: inout Matrix) {
    let original = candidates
    let frames = candidates.rows
    let count = candidates.columns
    original.storage.withUnsafeBufferPointer { all in
        func row(_ frame: Int) -> UnsafeBufferPointer<Double> {
            UnsafeBufferPointer(rebasing: all[(frame * count)..<((frame + 1) * count)])
        }
        for frame in stride(from: 1, to: frames - 1, by: 1) {
            for j in 0..<count {
                let reference = all[frame * count + j]
                if reference == 0 { continue }
                if hasCandidate(near: reference, in: row(frame + 1)) || hasCandidate(near: reference, in: row(frame - 1)) {
                    continue
                }
                candidates[frame, j] = 0
                scores[frame, j] = 0
            }
        }
    }
}

/// Whether some candidate lies within 5 % of `reference` (relative): WORLD takes the nearest candidate's
/// error and compares it with 5 %, which comes to the same.
@inline(__always)
private func hasCandidate(near reference: Double, in row: UnsafeBufferPointer<Double>) -> Bool {
    let threshold = 0.05
    for candidate in row where candidate != 0 && abs(reference - candidate) / reference <= threshold {
        return true
    }
    return false
}

// MARK: - Refinement by instantaneous frequency

/// Re-estimates each candidate from the instantaneous frequencies of its first harmonics, measured with a
/// Blackman window three periods long and its derivative; scores it by how well the harmonics agree.
private final class InstantaneousFrequencyRefiner {
    private let signal: [Double]
    private let sampleRate: Double
    private let f0Floor: Double
    private let f0Ceil: Double
    private let twiddles = SingleBinDFT()
    /// One window a length, made when first needed.
    private var windows: [RefinementWindow?]
    /// `fftSize(half:)` for every half length of window up to the longest.
    private var fftSizes: [Int]
    private var windowedSamples: UnsafeMutableBufferPointer<Double>
    /// The signal under the main window and under its derivative, side by side, sample by sample.
    private var windowedPairs: UnsafeMutableBufferPointer<SIMD2<Double>>
    /// Length of the window now applied in `windowedPairs`, at the current frame; 0 for none yet.
    private var windowedLength = 0
    private var frame = 0
    /// Bins summed lately, in slots hashed from window length and bin; a slot keeps its latest. A frame's
    /// candidates come from it and its neighbours, so many share a window length and several harmonic bins,
    /// and a bin summed again would come out the same.
    private let summedBins: UnsafeMutableBufferPointer<SummedBin>
    private let harmonicBins: UnsafeMutableBufferPointer<Int>
    private let harmonicSpectra: UnsafeMutableBufferPointer<BinSpectra>
    /// The harmonics whose bins still need summing, their bins, and the sums.
    private let missingHarmonics: UnsafeMutableBufferPointer<Int>
    private let missingBins: UnsafeMutableBufferPointer<Int>
    private let missingSpectra: UnsafeMutableBufferPointer<BinSpectra>

    init(signal: DecimatedSignal, f0Floor: Double, f0Ceil: Double) {
        self.signal = signal.samples
        sampleRate = signal.sampleRate
        self.f0Floor = f0Floor
        self.f0Ceil = f0Ceil
        let longest = 2 * Int(1.5 * sampleRate / f0Floor + 1.0) + 1
        windows = Array(repeating: nil, count: longest + 1)
        fftSizes = (0...(longest / 2)).map(Self.fftSize(half:))
        summedBins = .allocate(capacity: 1 << 11)
        summedBins.initialize(repeating: SummedBin())
        windowedSamples = .allocate(capacity: longest)
        windowedPairs = .allocate(capacity: longest)
        harmonicBins = .allocate(capacity: Tuning.maximumHarmonics)
        harmonicSpectra = .allocate(capacity: Tuning.maximumHarmonics)
        missingHarmonics = .allocate(capacity: Tuning.maximumHarmonics)
        missingBins = .allocate(capacity: Tuning.maximumHarmonics)
        missingSpectra = .allocate(capacity: Tuning.maximumHarmonics)
    }

    deinit {
        windowedSamples.deallocate()
        windowedPairs.deallocate()
        summedBins.deallocate()
        harmonicBins.deallocate()
        harmonicSpectra.deallocate()
        missingHarmonics.deallocate()
        missingBins.deallocate()
        missingSpectra.deallocate()
    }

    /// Refines every candidate in place (0 where it fails) and returns their scores.
    func refine(_ candidates: inout Matrix, frameTimes: [Double]) -> Matrix {
        var scores = Matrix.zeros(rows: candidates.rows, columns: candidates.columns)
        let (rows, columns) = (candidates.rows, candidates.columns)
        candidates.storage.withUnsafeMutableBufferPointer { candidates in
            scores.storage.withUnsafeMutableBufferPointer { scores in
                for frame in 0..<rows {
                    self.frame = frame
                    windowedLength = 0
                    for index in (frame * columns)..<((frame + 1) * columns) {
                        (candidates[index], scores[index]) = refine(candidates[index], at: frameTimes[frame])
                    }
                }
            }
        }
        return scores
    }

    private func refine(_ f0: Double, at position: Double) -> (f0: Double, score: Double) {
        guard f0 > 0 else { return (0, 0) }
        let half = Int(1.5 * sampleRate / f0 + 1.0)
        let length = 2 * half + 1
        ensureCapacity(length)
        let fftSize = fftSizes[half]
        if length != windowedLength {
            applyWindow(length: length, half: half, position: position)
        }
        let (refined, score) = harmonicEstimate(length: length, fftSize: fftSize, f0: f0)
        if refined < f0Floor || refined > f0Ceil || score < Tuning.minimumScore {
            return (0, 0)
        }
        return (refined, score)
    }

    private func ensureCapacity(_ length: Int) {
        guard length > windowedPairs.count else { return }
        windowedSamples.deallocate()
        windowedPairs.deallocate()
        windowedSamples = .allocate(capacity: length)
        windowedPairs = .allocate(capacity: length)
        windows += Array(repeating: nil, count: length + 1 - windows.count)
        fftSizes += (fftSizes.count...(length / 2)).map(Self.fftSize(half:))
    }

    /// The DFT size WORLD takes for a window of 2 `half` + 1 samples: a power of two, two to four times longer.
    private static func fftSize(half: Int) -> Int {
        Int(pow(2.0, 2.0 + Double(Int(log(Double(half) * 2.0 + 1.0) / Tuning.log2))))
    }

    /// Windows the signal around `position` with the window of `length` = 2 `half` + 1 samples.
    private func applyWindow(length: Int, half: Int, position: Double) {
        let firstIndex = Matlab.round((position + Double(-half) / sampleRate) * sampleRate + 0.001)
        // Phase 2π t / duration at t = (firstIndex - 1) / fs - position, with duration = length / fs.
        let duration = Double(length) / sampleRate
        let firstTime = (Double(firstIndex) - 1.0) / sampleRate - position
        let window = window(length: length)
        window.place(startPhase: 2.0 * Double.pi * firstTime / duration)
        applyWindow(window, firstIndex: firstIndex)
        windowedLength = length
    }

    private func window(length: Int) -> RefinementWindow {
        if let window = windows[length] { return window }
        let window = RefinementWindow(length: length)
        windows[length] = window
        return window
    }

    /// The signal over samples `firstIndex ..< firstIndex + length` (one-based) under both windows, as pairs;
    /// samples beyond the ends repeat the end samples.
    private func applyWindow(_ window: RefinementWindow, firstIndex: Int) {
        let length = window.length
        signal.withUnsafeBufferPointer { x in
            let samples = UnsafeMutableBufferPointer(rebasing: windowedSamples[0..<length])
            samples.copyClamped(from: x, first: firstIndex - 1)
            for i in 0..<length {
                windowedPairs[i] = window.pairs[i] * samples[i]
            }
        }
    }

    /// Amplitude-weighted mean of the harmonics' instantaneous frequencies divided by their numbers, and a
    /// score that is the inverse of their mean relative disagreement with `f0`. Only the harmonics' bins of the
    /// windowed signals' `fftSize`-point spectra are needed, so they are summed directly.
    private func harmonicEstimate(length: Int, fftSize: Int, f0: Double) -> (f0: Double, score: Double) {
        let size = Double(fftSize)
        let harmonics = min(Int(sampleRate / 2.0 / f0), Tuning.maximumHarmonics)
        for harmonic in 0..<harmonics {
            harmonicBins[harmonic] = Matlab.round(f0 * size / sampleRate * (Double(harmonic) + 1.0))
        }
        sumHarmonicBins(harmonics, length: length, fftSize: fftSize)
        var numerator = 0.0
        var denominator = 0.0
        var disagreement = 0.0
        for harmonic in 0..<harmonics {
            let number = Double(harmonic) + 1.0
            let bin = harmonicBins[harmonic]
            let (main, derivative) = harmonicSpectra[harmonic]
            let power = main.real * main.real + main.imag * main.imag
            let phaseRate = main.real * derivative.imag - main.imag * derivative.real
            let frequency = power == 0.0 ? 0.0 : Double(bin) * sampleRate / size + phaseRate / power * sampleRate / 2.0 / Double.pi
            let amplitude = power.squareRoot()
            numerator += amplitude * frequency
            denominator += amplitude * number
            disagreement += abs((frequency / number - f0) / f0)
        }
        let refined = numerator / (denominator + Tuning.safeGuard)
        let score = 1.0 / (disagreement / Double(harmonics) + Tuning.safeGuard)
        return (refined, score)
    }

    /// The spectra at `harmonicBins` into `harmonicSpectra`: those this frame already has copied,
    /// the others summed together and kept for the frame's other candidates.
    private func sumHarmonicBins(_ harmonics: Int, length: Int, fftSize: Int) {
        var missing = 0
        for harmonic in 0..<harmonics {
            let bin = harmonicBins[harmonic]
            if let known = summedBin(length: length, bin: bin) {
                harmonicSpectra[harmonic] = known
            } else {
                missingHarmonics[missing] = harmonic
                missingBins[missing] = bin
                missing += 1
            }
        }
        guard missing > 0 else { return }
        twiddles.bins(
            UnsafeBufferPointer(rebasing: missingBins[0..<missing]), size: fftSize,
            of: UnsafeBufferPointer(rebasing: windowedPairs[0..<length]), into: missingSpectra)
        for k in 0..<missing {
            harmonicSpectra[missingHarmonics[k]] = missingSpectra[k]
            summedBins[slot(length: length, bin: missingBins[k])] = SummedBin(
                frame: frame, length: length, bin: missingBins[k], spectra: missingSpectra[k])
        }
    }

    private func summedBin(length: Int, bin: Int) -> BinSpectra? {
        let summed = summedBins[slot(length: length, bin: bin)]
        return summed.frame == frame && summed.length == length && summed.bin == bin ? summed.spectra : nil
    }

    @inline(__always)
    private func slot(length: Int, bin: Int) -> Int {
        (bin &* 31 &+ length &* 977) & (summedBins.count - 1)
    }
}

/// One bin of the spectra of the signal under the main window and under its derivative.
private typealias BinSpectra = (main: Complex, derivative: Complex)

/// A bin's sums at one frame, for the window of one length.
private struct SummedBin {
    var frame = -1
    var length = 0
    var bin = 0
    var spectra: BinSpectra = (.zero, .zero)
}

/// A Blackman window of one length and its central-difference derivative (negated, as WORLD takes it), as
/// (main, derivative) pairs. The window's phase steps by 2π / length a sample from a start phase that
/// depends only on rounding in the frame's position, so the few start phases recur: the window is remade
/// only when the phase differs from the last one.
private final class RefinementWindow {
    let length: Int
    let pairs: UnsafeMutableBufferPointer<SIMD2<Double>>
    private let progression: Trigonometry.Progression
    private let main: UnsafeMutableBufferPointer<Double>
    private var startPhase: Double?

    init(length: Int) {
        precondition(length >= 3, "a refinement window spans at least three samples")
        self.length = length
        progression = Trigonometry.Progression(step: 2.0 * Double.pi / Double(length), count: length)
        pairs = .allocate(capacity: length)
        main = .allocate(capacity: length)
    }

    deinit {
        pairs.deallocate()
        main.deallocate()
    }

    func place(startPhase: Double) {
        guard startPhase.bitPattern != self.startPhase?.bitPattern else { return }
        self.startPhase = startPhase
        progression.cosines(start: startPhase, into: main)
        for i in 0..<length {
            let cosine = main[i]
            main[i] = 0.42 + 0.5 * cosine + 0.08 * (2.0 * cosine * cosine - 1.0)
        }
        pairs[0] = SIMD2(main[0], -main[1] / 2.0)
        for i in 1..<(length - 1) {
            pairs[i] = SIMD2(main[i], -(main[i + 1] - main[i - 1]) / 2.0)
        }
        pairs[length - 1] = SIMD2(main[length - 1], main[length - 2] / 2.0)
    }
}

/// Single bins of forward DFTs (FFTW's sign and scale) of zero-padded power-of-two sizes, from one table
/// of `exp(-2πi m / size)` for the largest size seen. Bins are summed three at a time in one pass over the
/// samples: each bin's sums still run sample by sample (so the values are those of one bin at a time), but
/// the three bins' additions no longer wait on one another.
private final class SingleBinDFT {
    private var size = 0
    /// `(cos, cos, sin, sin)` of `2π m / size`, laid out to multiply a (main, derivative) pair twice over.
    private var table: [SIMD4<Double>] = []

    /// Bins `bins` of the `size`-point DFTs of both halves of `pairs` (at most `size` of them), as
    /// (main, derivative) spectra in `spectra`.
    func bins(
        _ bins: UnsafeBufferPointer<Int>, size: Int, of pairs: UnsafeBufferPointer<SIMD2<Double>>,
        into spectra: UnsafeMutableBufferPointer<BinSpectra>
    ) {
        precondition(size > 0 && size & (size - 1) == 0 && pairs.count <= size && spectra.count >= bins.count)
        if size > self.size { makeTable(size: size) }
        let step = self.size / size
        func tableStride(_ index: Int) -> Int {
            let bin = bins[min(index, bins.count - 1)]
            return ((bin % size + size) % size) * step
        }
        func store(_ sum: SIMD4<Double>, at index: Int) {
            guard index < bins.count else { return }
            spectra[index] = (Complex(sum[0], -sum[2]), Complex(sum[1], -sum[3]))
        }
        table.withUnsafeBufferPointer { table in
            for first in stride(from: 0, to: bins.count, by: 3) {
                if first == bins.count - 1 {
                    store(oneBin(stride: tableStride(first), of: pairs, table: table), at: first)
                    break
                }
                // A group of two repeats its last bin: still faster than two single passes.
                let sums = threeBins(
                    strides: (tableStride(first), tableStride(first + 1), tableStride(first + 2)), of: pairs, table: table)
                store(sums.0, at: first)
                store(sums.1, at: first + 1)
                store(sums.2, at: first + 2)
            }
        }
    }

    /// Sums `(pair.main, pair.derivative, pair.main, pair.derivative) * (cos, cos, sin, sin)` over the
    /// samples, for three bins given by their strides through the table.
    @inline(__always)
    private func threeBins(
        strides: (Int, Int, Int), of pairs: UnsafeBufferPointer<SIMD2<Double>>, table: UnsafeBufferPointer<SIMD4<Double>>
    ) -> (SIMD4<Double>, SIMD4<Double>, SIMD4<Double>) {
        let mask = size - 1
        var sumA = SIMD4<Double>(repeating: 0)
        var sumB = SIMD4<Double>(repeating: 0)
        var sumC = SIMD4<Double>(repeating: 0)
        var indexA = 0
        var indexB = 0
        var indexC = 0
        for n in 0..<pairs.count {
            let pair = pairs[n]
            let twice = SIMD4(lowHalf: pair, highHalf: pair)
            sumA += twice * table[indexA]
            sumB += twice * table[indexB]
            sumC += twice * table[indexC]
            indexA = (indexA + strides.0) & mask
            indexB = (indexB + strides.1) & mask
            indexC = (indexC + strides.2) & mask
        }
        return (sumA, sumB, sumC)
    }

    @inline(__always)
    private func oneBin(
        stride: Int, of pairs: UnsafeBufferPointer<SIMD2<Double>>, table: UnsafeBufferPointer<SIMD4<Double>>
    ) -> SIMD4<Double> {
        let mask = size - 1
        var sum = SIMD4<Double>(repeating: 0)
        var index = 0
        for n in 0..<pairs.count {
            let pair = pairs[n]
            sum += SIMD4(lowHalf: pair, highHalf: pair) * table[index]
            index = (index + stride) & mask
        }
        return sum
    }

    private func makeTable(size: Int) {
        self.size = size
        table = (0..<size).map { m in
            let angle = 2.0 * Double.pi * Double(m) / Double(size)
            let (cosine, sine) = (cos(angle), sin(angle))
            return SIMD4(cosine, cosine, sine, sine)
        }
    }
}

// MARK: - Contour

/// A voiced run of frames, both ends included.
private struct Section {
    var start: Int
    var end: Int
}

/// Voiced runs of `f0`; the first and last frames never count as voiced.
private func voicedSections(_ f0: [Double]) -> [Section] {
    var sections: [Section] = []
    var start = 0
    var previousVoiced = false
    for i in stride(from: 1, to: f0.count, by: 1) {
        let voiced = i < f0.count - 1 && f0[i] > 0
        if voiced && !previousVoiced {
            start = i
        } else if !voiced && previousVoiced {
            sections.append(Section(start: start, end: i - 1))
        }
        previousVoiced = voiced
    }
    return sections
}

/// Picks the best-scoring candidate in each frame, then cleans the contour in four steps.
private struct ContourFixer {
    let candidates: Matrix
    let scores: Matrix

    private var frameCount: Int { candidates.rows }

    func bestContour() -> [Double] {
        let base = highestScoring()
        let withoutJumps = removingJumps(base, allowedRange: 0.008)
        let withoutShortSections = removingShortSections(withoutJumps, minimumLength: 6)
        let extended = extendingSections(withoutShortSections, allowedRange: 0.18)
        return bridgingShortGaps(extended, maximumGap: 9)
    }

    private func highestScoring() -> [Double] {
        let columns = candidates.columns
        return candidates.storage.withUnsafeBufferPointer { candidates in
            scores.storage.withUnsafeBufferPointer { scores in
                (0..<frameCount).map { frame in
                    var best = 0.0
                    var bestScore = 0.0
                    for index in (frame * columns)..<((frame + 1) * columns) where scores[index] > bestScore {
                        best = candidates[index]
                        bestScore = scores[index]
                    }
                    return best
                }
            }
        }
    }

    /// A frame is cleared when it departs by more than `allowedRange` both from the straight line through
    /// the two frames before it and from the frame just before it.
    private func removingJumps(_ f0: [Double], allowedRange: Double) -> [Double] {
        var result = [Double](repeating: 0, count: f0.count)
        for i in stride(from: 2, to: f0.count, by: 1) where f0[i] != 0.0 {
            let predicted = f0[i - 1] * 2 - f0[i - 2]
            let offLine = abs((f0[i] - predicted) / predicted) > allowedRange
            let offPrevious = abs(f0[i] - f0[i - 1]) / f0[i - 1] > allowedRange
            result[i] = offLine && offPrevious ? 0.0 : f0[i]
        }
        return result
    }

    private func removingShortSections(_ f0: [Double], minimumLength: Int) -> [Double] {
        var result = f0
        for section in voicedSections(f0) where section.end - section.start < minimumLength {
            for i in section.start...section.end {
                result[i] = 0
            }
        }
        return result
    }

    /// Grows each voiced section outwards along matching candidates, keeps the long ones, and merges them
    /// into one contour, settling overlaps by candidate score.
    private func extendingSections(_ f0: [Double], allowedRange: Double) -> [Double] {
        var sections = voicedSections(f0)
        guard !sections.isEmpty else { return f0 }
        var tracks = Matrix.zeros(rows: sections.count, columns: frameCount)
        for (index, section) in sections.enumerated() {
            for i in section.start...section.end {
                tracks[index, i] = f0[i]
            }
        }
        let reach = 100
        for index in sections.indices {
            let section = sections[index]
            sections[index].end = extend(
                &tracks, row: index, from: section.end, to: min(frameCount - 2, section.end + reach), step: 1,
                allowedRange: allowedRange)
            sections[index].start = extend(
                &tracks, row: index, from: section.start, to: max(1, section.start - reach), step: -1,
                allowedRange: allowedRange)
        }
        let kept = longEnoughSections(sections, tracks: tracks)
        guard !kept.isEmpty else { return f0 }
        return merged(kept.map { sections[$0] }, rows: kept, tracks: tracks)
    }

    /// Walks from `origin` towards `limit` (one frame past it), taking the candidate nearest the last
    /// accepted F0, until four frames in a row have none. Returns the last frame that got one.
    private func extend(
        _ tracks: inout Matrix, row: Int, from origin: Int, to limit: Int, step: Int, allowedRange: Double
    ) -> Int {
        let maximumMisses = 4
        var current = tracks[row, origin]
        var reached = origin
        var misses = 0
        candidates.storage.withUnsafeBufferPointer { all in
            let columns = candidates.columns
            for distance in 0...abs(limit - origin) {
                let frame = origin + step * distance + step
                let frameCandidates = UnsafeBufferPointer(rebasing: all[(frame * columns)..<((frame + 1) * columns)])
                let found = nearestCandidate(to: current, in: frameCandidates, allowedRange: allowedRange).f0
                tracks[row, frame] = found
                if found == 0.0 {
                    misses += 1
                } else {
                    current = found
                    misses = 0
                    reached = frame
                }
                if misses == maximumMisses { break }
            }
        }
        return reached
    }

    /// Sections longer than 2200 / (running mean F0) frames, in their original order. The running mean
    /// is WORLD's: it carries over from one section to the next rather than restarting.
    private func longEnoughSections(_ sections: [Section], tracks: Matrix) -> [Int] {
        let threshold = 2200.0
        var kept: [Int] = []
        var mean = 0.0
        for (index, section) in sections.enumerated() {
            for i in section.start..<section.end {
                mean += tracks[index, i]
            }
            mean /= Double(section.end - section.start)
            if threshold / mean < Double(section.end - section.start) {
                kept.append(index)
            }
        }
        return kept
    }

    /// Lays the sections over the first one in order of their starts (WORLD's partial insertion sort);
    /// a section starting after the current end is copied in, an overlapping one goes through `overlay`.
    private func merged(_ sections: [Section], rows: [Int], tracks: Matrix) -> [Double] {
        var sections = sections
        let order = startOrder(sections)
        var contour = tracks.row(rows[0])
        for i in stride(from: 1, to: sections.count, by: 1) {
            let next = order[i]
            let track = rows[next]
            if sections[next].start - sections[0].end > 0 {
                for frame in sections[next].start...sections[next].end {
                    contour[frame] = tracks[track, frame]
                }
                sections[0] = sections[next]
            } else {
                sections[0].end = overlay(&contour, current: sections[0], with: sections[next], track: track, tracks: tracks)
            }
        }
        return contour
    }

    private func startOrder(_ sections: [Section]) -> [Int] {
        var order = Array(sections.indices)
        for i in stride(from: 1, to: sections.count, by: 1) {
            for j in stride(from: i - 1, through: 0, by: -1) {
                guard sections[order[j]].start > sections[order[i]].start else { break }
                order.swapAt(i, j)
            }
        }
        return order
    }

    /// Where two sections overlap, the one whose F0 carries the higher total candidate score wins the overlap.
    private func overlay(_ contour: inout [Double], current: Section, with other: Section, track: Int, tracks: Matrix) -> Int {
        if current.start <= other.start && current.end >= other.end { return current.end }
        var currentScore = 0.0
        var otherScore = 0.0
        for frame in stride(from: other.start, through: current.end, by: 1) {
            currentScore += bestScore(of: contour[frame], frame: frame)
            otherScore += bestScore(of: tracks[track, frame], frame: frame)
        }
        let from = currentScore > otherScore ? current.end : other.start
        for frame in stride(from: from, through: other.end, by: 1) {
            contour[frame] = tracks[track, frame]
        }
        return other.end
    }

    /// The highest score among this frame's candidates equal to `f0`.
    private func bestScore(of f0: Double, frame: Int) -> Double {
        var best = 0.0
        for j in 0..<candidates.columns where f0 == candidates[frame, j] && best < scores[frame, j] {
            best = scores[frame, j]
        }
        return best
    }

    /// Unvoiced gaps shorter than `maximumGap` frames between two sections are filled by a straight line
    /// (from one above the F0 before the gap to one below the F0 after it).
    private func bridgingShortGaps(_ f0: [Double], maximumGap: Int) -> [Double] {
        var result = f0
        let sections = voicedSections(f0)
        for i in stride(from: 0, to: sections.count - 1, by: 1) {
            let before = sections[i].end
            let after = sections[i + 1].start
            let distance = after - before - 1
            if distance >= maximumGap { continue }
            let from = f0[before] + 1
            let to = f0[after] - 1
            let slope = (to - from) / (Double(distance) + 1.0)
            var step = 1
            for frame in stride(from: before + 1, through: after - 1, by: 1) {
                result[frame] = from + slope * Double(step)
                step += 1
            }
        }
        return result
    }
}

// MARK: - Smoothing

/// Each voiced section, held constant beyond its ends, goes forwards and backwards through a
/// second-order Butterworth low-pass; unvoiced frames stay 0.
private func smoothed(_ f0: [Double]) -> [Double] {
    let padding = 300
    let length = f0.count + 2 * padding
    var padded = [Double](repeating: 0, count: length)
    for i in f0.indices {
        padded[i + padding] = f0[i]
    }
    var result = [Double](repeating: 0, count: f0.count)
    var held = [Double](repeating: 0, count: length)
    var backwards = [Double](repeating: 0, count: length)
    var filtered = [Double](repeating: 0, count: length)
    for section in voicedSections(padded) {
        for i in 0..<length {
            held[i] = padded[min(max(i, section.start), section.end)]
        }
        zeroPhaseLowPass(held, scratch: &backwards, into: &filtered)
        for i in section.start...section.end {
            result[i - padding] = filtered[i]
        }
    }
    return result
}

private func zeroPhaseLowPass(_ x: [Double], scratch reversed: inout [Double], into y: inout [Double]) {
    let b0 = 0.0078202080334971724
    let b1 = 0.015640416066994345
    let a0 = 1.7347257688092754
    let a1 = -0.76600660094326412
    let count = x.count
    var w0 = 0.0
    var w1 = 0.0
    for i in 0..<count {
        let w = x[i] + a0 * w0 + a1 * w1
        reversed[count - i - 1] = b0 * w + b1 * w0 + b0 * w1
        w1 = w0
        w0 = w
    }
    w0 = 0
    w1 = 0
    for i in 0..<count {
        let w = reversed[i] + a0 * w0 + a1 * w1
        y[count - i - 1] = b0 * w + b1 * w0 + b0 * w1
        w1 = w0
        w0 = w
    }
}
