import Foundation
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
public struct Dio: Sendable {
    public struct Options: Sendable, Equatable {
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

    /// Throws unless `options` suit DIO at `sampleRate`; `speed` needs no check, as any value is clamped.
    static func validate(_ options: Options, sampleRate: Int) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try SignalRequirements.validateFramePeriod(options.framePeriod)
        try SignalRequirements.validateF0Range(floor: options.f0Floor, ceil: options.f0Ceil, sampleRate: sampleRate)
        guard options.channelsInOctave > 0, options.channelsInOctave <= mostChannelsInOctave else {
            throw .invalidOption(
                "DIO's channels in octave must be above 0 and at most \(mostChannelsInOctave) (got \(options.channelsInOctave))")
        }
        guard options.allowedRange.isFinite, options.allowedRange >= 0 else {
            throw .invalidOption("DIO's allowed range must be a finite number, 0 or more (got \(options.allowedRange))")
        }
    }

    /// F0 every `options.framePeriod` ms; 0 marks unvoiced frames. Throws if `signal` is shorter than three
    /// periods of the F0 floor or not finite throughout.
    public func estimate(_ signal: [Double]) throws(WorldError) -> F0Contour {
        try SignalRequirements.validate(signal, sampleRate: sampleRate, f0Floor: options.f0Floor)
        return estimate(unchecked: signal)
    }

    /// `estimate` of a signal known to meet `SignalRequirements`.
    package func estimate(unchecked signal: [Double]) -> F0Contour {
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
                repair.settle(candidates: candidates, scores: scores, frameCount: frameCount, into: &f0)
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
        filters.append(samples, deliver: deliver) { _ in }
        filters.flush(through: samples.count - 1, deliver: deliver)
        return events
    }
}

extension Dio {
    /// The bands DIO filters at one (decimated) rate, and its filters' lengths.
    struct Ladder {
        /// Upper edge of each low-pass band, in Hz.
        let boundaries: [Double]
        /// Per band, a quarter of the Nuttall low-pass length, in samples.
        let halfAverageLengths: [Int]
        /// Half length, in samples, of the taps that remove everything below `lowCutFrequency`.
        let lowCutHalfLength: Int

        /// The (decimated) sample rate, in Hz.
        let rate: Double

        /// DIO's DC-removal cut-off, in Hz (WORLD's `kCutOff`).
        static let lowCutFrequency = 50.0

        init(rate: Double, options: Options) {
            self.rate = rate
            let octaves = log(options.f0Ceil / options.f0Floor) / log(2.0)
            let bandCount = max(1, 1 + Int(octaves * options.channelsInOctave))
            boundaries = (0..<bandCount).map { band in
                options.f0Floor * pow(2.0, Double(band + 1) / options.channelsInOctave)
            }
            halfAverageLengths = boundaries.map { Matlab.round(rate / $0 / 2.0) }
            lowCutHalfLength = Matlab.round(rate / Self.lowCutFrequency)
        }

        var bandCount: Int { boundaries.count }

        /// Per band, input samples past a filtered sample that it depends on: the low-cut's half length plus
        /// half the Nuttall window. The lowest band reaches furthest.
        var reaches: [Int] { halfAverageLengths.map { 2 * $0 + lowCutHalfLength } }

        /// The zero-phase high-pass: a raised-cosine low-pass of `2 * lowCutHalfLength + 1` taps, negated and
        /// normalised, plus a unit impulse at its centre (index `lowCutHalfLength`).
        func lowCutTaps() -> [Double] {
            let count = lowCutHalfLength * 2 + 1
            var taps = (1...count).map { i in 0.5 - 0.5 * cos(Double(i) * 2.0 * Double.pi / Double(count + 1)) }
            var sum = 0.0
            for tap in taps {
                sum += tap
            }
            for i in taps.indices {
                taps[i] = -taps[i] / sum
            }
            taps[lowCutHalfLength] += 1.0
            return taps
        }
    }
}

// MARK: Band filtering, shared with StreamingDio

extension Dio {
    /// DIO's band signals, the input taken in fixed blocks of `blockLength` samples. A band's taps are the 50 Hz
    /// low-cut convolved with its Nuttall window, advanced by half the window as WORLD compensates it, so the
    /// result is WORLD's linear convolution of the zero-extended signal. Whole signals are filtered by
    /// overlap-save: one forward FFT a block, then per band a product with the spectrum of its taps and one
    /// inverse FFT, the FFTs as long as the taps and a block. Live blocks are far shorter than the taps, and are
    /// filtered by `PartitionedConvolution`, which differs only in rounding. Block boundaries depend only on
    /// sample indices, never on how the input was chunked.
    struct BandFilterBank {
        let blockLength: Int
        private let reaches: [Int]
        private let filtering: Filtering
        /// Live mode only (else empty): per band, the reach of its provisional samples (half the Nuttall window).
        private let provisionalReaches: [Int]
        /// Live mode: per band, its latest provisional samples, the block's after those of earlier blocks that
        /// the block's provisional span still covers.
        private var provisionalSignals: [[Double]]
        /// Input from absolute index `historyStart`; the next block ends before `nextBlockEnd`.
        private var history: [Double] = []
        private var historyStart = 0
        private var nextBlockEnd: Int
        private(set) var received = 0

        private enum Filtering {
            /// Per band, the spectrum of its taps, for FFTs of `forward.size`.
            case overlapSave(kernels: [[Complex]], forward: ForwardRealFFT, inverse: InverseRealFFT)
            /// Kernels 0..<bands: the bands' taps, causal; kernels bands..<2 bands: their Nuttall windows alone.
            case partitioned(PartitionedConvolution)
        }

        /// Input samples held for blocks still to come.
        var heldSampleCount: Int { history.count }

        /// Input samples before a block's end that its filtering reads.
        private var span: Int {
            switch filtering {
            case .overlapSave(_, let forward, _): forward.size
            case .partitioned: blockLength
            }
        }

        typealias Delivery = (_ band: Int, _ first: Int, _ samples: UnsafeMutableBufferPointer<Double>) -> Void

        /// `live`: every block also yields each band's provisional samples (see `append`), and blocks are
        /// filtered by partitioned convolution.
        init(ladder: Ladder, blockLength: Int, live: Bool = false) {
            self.blockLength = blockLength
            reaches = ladder.reaches
            nextBlockEnd = blockLength
            guard live else {
                let fftSize = Matlab.suitableFFTSize(Self.kernelLength(of: ladder) + blockLength)
                let forward = ForwardRealFFT(size: fftSize)
                filtering = .overlapSave(
                    kernels: Self.kernelSpectra(ladder: ladder, forward: forward), forward: forward,
                    inverse: InverseRealFFT(size: fftSize))
                provisionalReaches = []
                provisionalSignals = []
                return
            }
            let windows = ladder.halfAverageLengths.map { Window.nuttall(length: 4 * $0) }
            filtering = .partitioned(
                PartitionedConvolution(kernels: Self.causalTaps(ladder: ladder) + windows, blockLength: blockLength))
            provisionalReaches = ladder.halfAverageLengths.map { 2 * $0 }
            // One array a band, not one shared until first written, which would then allocate.
            provisionalSignals = (0..<ladder.bandCount).map { _ in
                Array(repeating: 0, count: ladder.lowCutHalfLength + 1 + blockLength)
            }
        }

        /// Taps of the lowest band, the longest.
        private static func kernelLength(of ladder: Ladder) -> Int {
            4 * ladder.halfAverageLengths[0] + 2 * ladder.lowCutHalfLength
        }

        /// A block length that keeps the FFTs about four times the taps: cheapest per sample, for whole signals.
        static func efficientBlockLength(for ladder: Ladder) -> Int {
            let taps = kernelLength(of: ladder)
            return Matlab.suitableFFTSize(4 * taps) - taps - 1
        }

        /// Spectra of each band's taps, scaled to undo the unnormalised inverse FFT.
        private static func kernelSpectra(ladder: Ladder, forward: ForwardRealFFT) -> [[Complex]] {
            loadCircularly(ladder.lowCutTaps(), centre: ladder.lowCutHalfLength, into: forward.waveform)
            forward.execute()
            let lowCutSpectrum = Array(forward.spectrum)
            let scale = 1.0 / Double(forward.size)
            return ladder.halfAverageLengths.map { halfAverageLength in
                loadCircularly(
                    Window.nuttall(length: 4 * halfAverageLength), centre: 2 * halfAverageLength, into: forward.waveform)
                forward.execute()
                return lowCutSpectrum.indices.map { bin in
                    let product = lowCutSpectrum[bin] * forward.spectrum[bin]
                    return Complex(product.real * scale, product.imag * scale)
                }
            }
        }

        /// Each band's taps in causal order: tap j weighs the input `reach` samples past the output's sample, less j.
        private static func causalTaps(ladder: Ladder) -> [[Double]] {
            let size = Matlab.suitableFFTSize(kernelLength(of: ladder) + 1)
            let forward = ForwardRealFFT(size: size)
            let inverse = InverseRealFFT(size: size)
            return zip(kernelSpectra(ladder: ladder, forward: forward), ladder.reaches).map { spectrum, reach in
                for bin in spectrum.indices {
                    inverse.spectrum[bin] = spectrum[bin]
                }
                inverse.execute()
                return (0..<(2 * reach)).map { inverse.waveform[($0 - reach + size) % size] }
            }
        }

        /// Makes room for appends of up to `samples` samples: the input a block reads, the latest append, and as
        /// much again, as the input is dropped once half of it can go.
        mutating func reserve(forAppendsOf samples: Int) {
            history.reserveCapacity(2 * (span + blockLength + samples))
        }

        /// Appends input and filters every block it completes. `deliver(band, first, samples)` receives each
        /// band's filtered samples in order, from index 0, `first` being the index of the first; `afterBlock(last)`
        /// runs once a block is done, with the index of its last input sample.
        mutating func append(
            _ samples: [Double], deliver: Delivery, afterBlock: (Int) -> Void
        ) {
            append(samples, deliver: deliver, provisional: { _, _, _ in }, afterBlock: afterBlock)
        }

        /// `append`, and, when the bank was made `live`, after each band's `deliver`
        /// `provisional(band, first, samples)`: the band's signal without the low-cut (its Nuttall window alone,
        /// which needs only half the window of input ahead) from its last delivered sample, `first` (0 before
        /// the first), as far as the block's input allows.
        mutating func append(
            _ samples: [Double], deliver: Delivery, provisional: Delivery, afterBlock: (Int) -> Void
        ) {
            history.append(contentsOf: samples)
            received += samples.count
            while nextBlockEnd <= received {
                filterBlock(through: Int.max, deliver: deliver, provisional: provisional)
                afterBlock(nextBlockEnd - blockLength - 1)
            }
        }

        /// The input has ended: filters zeros past it until every band has delivered its samples up to index
        /// `last`, and none after.
        mutating func flush(through last: Int, deliver: Delivery) {
            while nextBlockEnd - blockLength - 1 - reaches[0] < last {
                let missing = nextBlockEnd - (historyStart + history.count)
                if missing > 0 {
                    history.append(contentsOf: repeatElement(0, count: missing))
                }
                filterBlock(through: last, deliver: deliver, provisional: { _, _, _ in })
            }
        }

        /// Filters the block ending before `nextBlockEnd`. A band's output sample depends on input up to its
        /// reach past it, so the block yields each band's `blockLength` samples ending that reach before the
        /// block's last input sample (none before index 0 or after `through`), and, in live mode, its
        /// provisional samples from the last of those on.
        private mutating func filterBlock(through lastWanted: Int, deliver: Delivery, provisional: Delivery) {
            let last = nextBlockEnd - 1
            switch filtering {
            case .overlapSave(let kernels, let forward, let inverse):
                let first = last - forward.size + 1
                loadInput(from: first, into: forward.waveform)
                forward.execute()
                for band in kernels.indices {
                    kernels[band].withUnsafeBufferPointer { kernel in
                        for bin in kernel.indices {
                            inverse.spectrum[bin] = forward.spectrum[bin] * kernel[bin]
                        }
                    }
                    inverse.execute()
                    let firstOutput = last - reaches[band] - blockLength + 1
                    Self.hand(band, inverse.waveform, startingAt: first,
                              from: firstOutput, through: min(last - reaches[band], lastWanted), to: deliver)
                }
            case .partitioned(let convolution):
                history.withUnsafeBufferPointer { history in
                    let start = last - blockLength + 1 - historyStart
                    convolution.push(UnsafeBufferPointer(rebasing: history[start..<(start + blockLength)]))
                }
                let bands = reaches.count
                for band in 0..<bands {
                    let firstOutput = last - reaches[band] - blockLength + 1
                    Self.hand(band, convolution.output(ofKernel: band), startingAt: firstOutput,
                              from: firstOutput, through: min(last - reaches[band], lastWanted), to: deliver)
                    let lastProvisional = last - provisionalReaches[band]
                    provisionalSignals[band].withUnsafeMutableBufferPointer { signal in
                        let kept = signal.count - blockLength
                        for i in 0..<kept {
                            signal[i] = signal[i + blockLength]
                        }
                        let newest = convolution.output(ofKernel: bands + band)
                        for i in 0..<blockLength {
                            signal[kept + i] = newest[i]
                        }
                        Self.hand(band, signal, startingAt: lastProvisional - signal.count + 1,
                                  from: last - reaches[band], through: lastProvisional, to: provisional)
                    }
                }
            }
            nextBlockEnd += blockLength
            dropConsumedInput()
        }

        /// Hands `deliver` the band's samples `first` through `last` (none before index 0) of `signal`, whose
        /// element 0 is the band's sample `start`.
        private static func hand(
            _ band: Int, _ signal: UnsafeMutableBufferPointer<Double>, startingAt start: Int,
            from first: Int, through last: Int, to deliver: Delivery
        ) {
            let first = max(0, first)
            guard first <= last else { return }
            deliver(band, first, UnsafeMutableBufferPointer(rebasing: signal[(first - start)...(last - start)]))
        }

        /// The FFT input: `waveform.count` samples from absolute index `first`, zero before the signal.
        private func loadInput(from first: Int, into waveform: UnsafeMutableBufferPointer<Double>) {
            let available = max(0, historyStart - first)
            for i in 0..<min(available, waveform.count) {
                waveform[i] = 0
            }
            history.withUnsafeBufferPointer { history in
                for i in available..<waveform.count {
                    waveform[i] = history[first + i - historyStart]
                }
            }
        }

        private mutating func dropConsumedInput() {
            let removable = min(nextBlockEnd - span - historyStart, history.count)
            guard removable > 0, removable >= history.count / 2 else { return }
            history.removeFirst(removable)
            historyStart += removable
        }
    }
}

/// WORLD filters each band by multiplying whole-signal spectra, and writes each product to the mirrored bin too;
/// for the top two bins that lands inside the half spectrum, so the Nyquist bin becomes the signal's Nyquist
/// value times the product one bin below, and that bin takes the same value. The band filters are small there
/// at full rate but not after decimation, and on signals without events (DC, silence) that difference alone
/// decides the crossings. This adds it to the overlap-save result: the inverse transform of the two changed bins,
/// `(-1)^n (a + 2 Re(b e^(-2 pi i n / N)))` at WORLD's convolution index n, for WORLD's FFT size N.
private struct NyquistQuirk {
    /// WORLD's FFT size for the signal.
    let fftSize: Int
    /// Per band, the changes at Nyquist (its real part, which is all an inverse real FFT reads) and one bin below.
    private let nyquistChanges: [Double]
    private let belowChanges: [Complex]
    /// Per band, WORLD's index of filtered sample 0 in its convolution (half the Nuttall window).
    private let delays: [Int]
    private let rotation: Rotation

    init(samples: [Double], ladder: Dio.Ladder) {
        let length = samples.count
        let widestBandTaps = 4 * Int(1.0 + ladder.rate / ladder.boundaries[0] / 2.0)
        fftSize = Matlab.suitableFFTSize(length + ladder.lowCutHalfLength * 2 + 1 + widestBandTaps)
        rotation = Rotation(period: fftSize)
        let lowCut = ladder.lowCutTaps()
        let lowCutCentre = ladder.lowCutHalfLength
        let signalNyquist = Self.transform(samples, offset: 0, atNyquistOf: fftSize, rotation: rotation)
        let lowCutNyquist = Self.transform(lowCut, offset: -lowCutCentre, atNyquistOf: fftSize, rotation: rotation)
        let lowCutNyquistValue = signalNyquist.nyquist.real * lowCutNyquist.nyquist.real
        let lowCutBelow = signalNyquist.below * lowCutNyquist.below
        var nyquistChanges: [Double] = []
        var belowChanges: [Complex] = []
        for halfAverageLength in ladder.halfAverageLengths {
            let window = Self.transform(
                Window.nuttall(length: 4 * halfAverageLength), offset: 0, atNyquistOf: fftSize, rotation: rotation)
            let trueBelow = lowCutBelow * window.below
            let trueNyquist = lowCutNyquistValue * window.nyquist.real
            let written = Complex(lowCutNyquistValue * trueBelow.real, lowCutNyquistValue * trueBelow.imag)
            nyquistChanges.append(written.real - trueNyquist)
            belowChanges.append(Complex(written.real - trueBelow.real, written.imag - trueBelow.imag))
        }
        self.nyquistChanges = nyquistChanges
        self.belowChanges = belowChanges
        delays = ladder.halfAverageLengths.map { 2 * $0 }
    }

    /// The real DFT of `values` (value k at index k + offset) at bins N/2 and N/2 - 1 of an N-point transform.
    private static func transform(
        _ values: [Double], offset: Int, atNyquistOf size: Int, rotation: Rotation
    ) -> (nyquist: Complex, below: Complex) {
        var nyquist = 0.0
        var below = Complex.zero
        for (k, value) in values.enumerated() {
            let index = k + offset
            let sign = index & 1 == 0 ? 1.0 : -1.0
            // e^(-2 pi i (N/2 - 1) n / N) = (-1)^n e^(2 pi i n / N)
            let turn = rotation.unit(at: index)
            nyquist += sign * value
            below.real += sign * value * turn.real
            below.imag += sign * value * turn.imag
        }
        return (Complex(nyquist, 0), below)
    }

    /// Adds the changed bins' contribution, scaled as the overlap-save output is, to `values`, filtered samples
    /// of `band` from index `first` on. The rotation advances by one step a sample: over a block its rounding
    /// drifts by far less than the contribution's own size.
    func apply(band: Int, first: Int, to values: UnsafeMutableBufferPointer<Double>) {
        let a = nyquistChanges[band]
        let b = belowChanges[band]
        let scale = 1.0 / Double(fftSize)
        let n = first + delays[band]
        var sign = n & 1 == 0 ? scale : -scale
        var turn = rotation.unit(at: n)
        let step = rotation.unit(at: 1)
        for i in values.indices {
            // b e^(-2 pi i n / N) takes the conjugate turn.
            let real = b.real * turn.real + b.imag * turn.imag
            values[i] += sign * (a + 2 * real)
            sign = -sign
            turn = turn * step
        }
    }
}

/// e^(2 pi i n / period) for any integer n, from two small tables: accurate to rounding and cheap per call.
private struct Rotation {
    let period: Int
    private let coarse: [Complex]
    private let fine: [Complex]
    private let fineCount: Int

    init(period: Int) {
        self.period = period
        let fineCount = max(1, Int(Double(period).squareRoot()))
        self.fineCount = fineCount
        fine = (0..<fineCount).map { Rotation.exact($0, period: period) }
        coarse = (0...(period / fineCount)).map { Rotation.exact($0 * fineCount, period: period) }
    }

    private static func exact(_ n: Int, period: Int) -> Complex {
        let angle = 2.0 * Double.pi * Double(n) / Double(period)
        return Complex(cos(angle), sin(angle))
    }

    func unit(at n: Int) -> Complex {
        let wrapped = ((n % period) + period) % period
        let high = coarse[wrapped / fineCount]
        let low = fine[wrapped % fineCount]
        return high * low
    }
}

/// Writes `taps` so that tap `centre` lands on index 0 and the taps before it wrap to the end of `buffer`,
/// the rest of which is zero.
private func loadCircularly(_ taps: [Double], centre: Int, into buffer: UnsafeMutableBufferPointer<Double>) {
    for i in 0..<buffer.count {
        buffer[i] = 0
    }
    for (i, tap) in taps.enumerated() {
        buffer[(i - centre + buffer.count) % buffer.count] = tap
    }
}

// MARK: Events and candidates, shared with StreamingDio

extension Dio {
    /// Score given to frames without a candidate (WORLD's `kMaximumValue`).
    static let missingScore = 100_000.0
    /// Keeps divisions by a zero candidate finite (WORLD's `kMySafeGuardMinimum`).
    static let safeGuard = 1e-12

    /// Intervals between successive events of one kind, each as a frequency at its midpoint in time,
    /// gathered as the filtered signal arrives. Intervals no later frame needs can be dropped.
    struct EventSeries {
        private var locations: [Double] = []
        private var frequencies: [Double] = []
        /// Index of the filtered sample whose arrival revealed each interval (non-decreasing).
        private var revealedAt: [Int] = []
        /// Intervals dropped from the front; the indices used outside are absolute.
        private var dropped = 0
        private var lastEdge = 0.0
        private var hasEdge = false

        /// Intervals seen so far.
        var count: Int { dropped + locations.count }

        /// Intervals held in memory.
        var heldCount: Int { locations.count }

        mutating func addEdge(_ edge: Double, revealedAt index: Int, rate: Double) {
            if hasEdge {
                frequencies.append(rate / (edge - lastEdge))
                locations.append((lastEdge + edge) / 2.0 / rate)
                revealedAt.append(index)
            }
            lastEdge = edge
            hasEdge = true
        }

        /// How many intervals filtered samples up to `horizon` revealed.
        func count(revealedBy horizon: Int) -> Int {
            var low = 0
            var high = revealedAt.count
            while low < high {
                let middle = (low + high) / 2
                if revealedAt[middle] <= horizon {
                    low = middle + 1
                } else {
                    high = middle
                }
            }
            return dropped + low
        }

        /// The frequencies of the first `available` intervals linearly interpolated at `time` as WORLD's
        /// `interp1` does: from the first interval after `time` and the one before it, extrapolating from the
        /// first or last two. Like WORLD, nil (no candidate) unless there are three intervals.
        ///
        /// `openUntil` (live mode): the signal is known up to there, in samples, and every interval seen is
        /// available; then a time past the last interval takes its frequency instead of the extrapolation, unless
        /// the interval still open, from the last edge to `openUntil`, is already longer: then that interval's
        /// frequency, an upper bound, is what later times take, as whole-signal DIO's long interval across a gap
        /// gives them a frequency below any band's.
        /// `cursor` is where the search starts; it moves to where the next, later time's search can start.
        func value(at time: Double, available: Int, openUntil: Double?, rate: Double, cursor: inout Int) -> Double? {
            guard available > 2 else { return nil }
            var segment = max(cursor, 1)
            while segment < available - 1 && locations[segment - dropped] <= time {
                segment += 1
            }
            cursor = segment
            let previous = segment - 1 - dropped
            let position = (time - locations[previous]) / (locations[previous + 1] - locations[previous])
            guard let openUntil, position > 1 else {
                return frequencies[previous] + position * (frequencies[previous + 1] - frequencies[previous])
            }
            let last = previous + 1
            let open = openUntil - lastEdge
            guard open * frequencies[last] > rate else { return frequencies[last] }
            let openLocation = (lastEdge + openUntil) / 2.0 / rate
            let openFrequency = rate / open
            guard time < openLocation else { return openFrequency }
            let openPosition = (time - locations[last]) / (openLocation - locations[last])
            return frequencies[last] + openPosition * (openFrequency - frequencies[last])
        }

        /// Becomes `other` from interval `position - 1` on (absolute indices stay `other`'s): what a time at or
        /// after a cursor at `position` can use. Reuses its storage.
        mutating func copyTail(of other: EventSeries, from position: Int) {
            let start = min(max(position - 1, other.dropped), other.count) - other.dropped
            locations.removeAll(keepingCapacity: true)
            frequencies.removeAll(keepingCapacity: true)
            revealedAt.removeAll(keepingCapacity: true)
            locations.append(contentsOf: other.locations[start...])
            frequencies.append(contentsOf: other.frequencies[start...])
            revealedAt.append(contentsOf: other.revealedAt[start...])
            dropped = other.dropped + start
            lastEdge = other.lastEdge
            hasEdge = other.hasEdge
        }

        /// Intervals `dropIntervals` leaves in memory at most besides those a cursor can still use.
        static let dropBatch = 256

        /// Makes room for `intervals` held at once: adding intervals then allocates nothing while no more are held.
        mutating func reserveCapacity(_ intervals: Int) {
            locations.reserveCapacity(intervals)
            frequencies.reserveCapacity(intervals)
            revealedAt.reserveCapacity(intervals)
        }

        /// Forgets the intervals before `cursor`'s segment, which no time at or after the cursor's can use, once
        /// there are `dropBatch` of them.
        mutating func dropIntervals(before cursor: Int) {
            let removable = min(cursor - 1, count - 2) - dropped
            guard removable >= Self.dropBatch else { return }
            locations.removeFirst(removable)
            frequencies.removeFirst(removable)
            revealedAt.removeFirst(removable)
            dropped += removable
        }
    }

    /// Where each of a band's four event searches stands.
    struct EventCursor {
        var positions = (1, 1, 1, 1)
    }

    /// The four event series of one band, fed one filtered sample at a time: falling and rising zero
    /// crossings, then those of the negated first difference (WORLD's peaks) and of the difference (dips).
    /// Each crossing is located to a fraction of a sample by linear interpolation, with WORLD's arithmetic.
    struct BandEvents {
        let rate: Double
        private var falling = EventSeries()
        private var rising = EventSeries()
        private var peaks = EventSeries()
        private var dips = EventSeries()
        private var previous = 0.0
        private var previousDifference = 0.0
        private var index = 0

        init(rate: Double) {
            self.rate = rate
        }

        /// Appends each sample less `offset`. The latest samples are held in locals, not in the events, through
        /// the loop: most samples end no interval.
        mutating func append(contentsOf samples: UnsafeBufferPointer<Double>, less offset: Double = 0) {
            var previous = self.previous
            var previousDifference = self.previousDifference
            var index = self.index
            for value in samples {
                let sample = value - offset
                if index >= 1 {
                    let a = previous
                    let b = sample
                    if 0.0 < a && b <= 0.0 {
                        falling.addEdge(Double(index) - a / (b - a), revealedAt: index, rate: rate)
                    }
                    let negatedA = -a
                    let negatedB = -b
                    if 0.0 < negatedA && negatedB <= 0.0 {
                        rising.addEdge(Double(index) - negatedA / (negatedB - negatedA), revealedAt: index, rate: rate)
                    }
                    let difference = negatedA - negatedB
                    if index >= 2 {
                        let c = previousDifference
                        let d = difference
                        if 0.0 < c && d <= 0.0 {
                            peaks.addEdge(Double(index - 1) - c / (d - c), revealedAt: index, rate: rate)
                        }
                        let negatedC = -c
                        let negatedD = -d
                        if 0.0 < negatedC && negatedD <= 0.0 {
                            dips.addEdge(
                                Double(index - 1) - negatedC / (negatedD - negatedC), revealedAt: index, rate: rate)
                        }
                    }
                    previousDifference = difference
                }
                previous = sample
                index += 1
            }
            self.previous = previous
            self.previousDifference = previousDifference
            self.index = index
        }

        /// The events seen so far, or those revealed by filtered sample `horizon`: a band as whole-signal DIO
        /// would see it if the signal ended there.
        func snapshot(revealedBy horizon: Int? = nil) -> EventSnapshot {
            guard let horizon else {
                return EventSnapshot(available: (falling.count, rising.count, peaks.count, dips.count))
            }
            return EventSnapshot(available: (
                falling.count(revealedBy: horizon), rising.count(revealedBy: horizon),
                peaks.count(revealedBy: horizon), dips.count(revealedBy: horizon)))
        }

        /// The four event frequencies at `time` from the intervals in `snapshot`, or nil if a kind has too few;
        /// with `holdingLast` (live mode), past a kind's last interval, its frequency or the open interval's (see
        /// `EventSeries.value`).
        func eventFrequencies(
            at time: Double, in snapshot: EventSnapshot, holdingLast: Bool = false, cursor: inout EventCursor
        ) -> (Double, Double, Double, Double)? {
            let available = snapshot.available
            // The next zero crossing lies past the last sample, the next extremum past the one before.
            let crossingsUntil = holdingLast ? Double(index - 1) : nil
            let extremaUntil = holdingLast ? Double(index - 2) : nil
            guard let a = falling.value(at: time, available: available.0, openUntil: crossingsUntil, rate: rate, cursor: &cursor.positions.0),
                  let b = rising.value(at: time, available: available.1, openUntil: crossingsUntil, rate: rate, cursor: &cursor.positions.1),
                  let c = peaks.value(at: time, available: available.2, openUntil: extremaUntil, rate: rate, cursor: &cursor.positions.2),
                  let d = dips.value(at: time, available: available.3, openUntil: extremaUntil, rate: rate, cursor: &cursor.positions.3)
            else { return nil }
            return (a, b, c, d)
        }

        /// Filtered samples appended so far.
        var sampleCount: Int { index }

        /// The last filtered sample appended (0 before the first).
        var lastSample: Double { previous }

        /// Intervals seen so far, per kind.
        var counts: (Int, Int, Int, Int) { (falling.count, rising.count, peaks.count, dips.count) }

        /// Becomes `other` as far as times at or after `cursor`'s can tell, to be continued with other samples
        /// than `other`'s; reuses its storage.
        mutating func copy(_ other: BandEvents, from cursor: EventCursor) {
            falling.copyTail(of: other.falling, from: cursor.positions.0)
            rising.copyTail(of: other.rising, from: cursor.positions.1)
            peaks.copyTail(of: other.peaks, from: cursor.positions.2)
            dips.copyTail(of: other.dips, from: cursor.positions.3)
            previous = other.previous
            previousDifference = other.previousDifference
            index = other.index
        }

        /// Intervals held in memory, all kinds together.
        var heldIntervalCount: Int { falling.heldCount + rising.heldCount + peaks.heldCount + dips.heldCount }

        /// Makes room for `intervals` held at once of each kind.
        mutating func reserveCapacity(_ intervals: Int) {
            falling.reserveCapacity(intervals)
            rising.reserveCapacity(intervals)
            peaks.reserveCapacity(intervals)
            dips.reserveCapacity(intervals)
        }

        mutating func dropIntervals(before cursor: EventCursor) {
            falling.dropIntervals(before: cursor.positions.0)
            rising.dropIntervals(before: cursor.positions.1)
            peaks.dropIntervals(before: cursor.positions.2)
            dips.dropIntervals(before: cursor.positions.3)
        }
    }

    /// How many intervals of each kind a band offers (see `BandEvents.snapshot`).
    struct EventSnapshot {
        let available: (Int, Int, Int, Int)
    }

    /// Turns one band's four event frequencies into a candidate and its score.
    struct CandidateScorer {
        let boundary: Double
        let options: Options

        /// The candidate is the mean of the four event frequencies, its score their sample standard deviation
        /// relative to the candidate (lower is better); candidates outside the band or the search range, or
        /// without events, are dropped.
        func score(_ events: (Double, Double, Double, Double)?) -> (candidate: Double, score: Double) {
            guard let (a, b, c, d) = events else {
                return (0, Dio.missingScore / Dio.safeGuard)
            }
            var candidate = (a + b + c + d) / 4.0
            let squares = (a - candidate) * (a - candidate) + (b - candidate) * (b - candidate)
                + (c - candidate) * (c - candidate) + (d - candidate) * (d - candidate)
            var score = (squares / 3.0).squareRoot()
            if candidate > boundary || candidate < boundary / 2.0
                || candidate > options.f0Ceil || candidate < options.f0Floor {
                candidate = 0
                score = Dio.missingScore
            }
            return (candidate, score / (candidate + Dio.safeGuard))
        }
    }
}

// MARK: Contour repair, shared with StreamingDio

extension Dio {
    /// DIO's four passes over the best contour:
    /// 1. frames near either end, and frames whose F0 jumps by more than the allowed range, become unvoiced;
    /// 2. a frame stays voiced only if its whole neighbourhood of `voiceRangeMinimum` frames is voiced;
    /// 3. each voiced run continues forwards while some band offers a candidate close to the linear
    ///    extrapolation of its last two frames;
    /// 4. the same backwards from the start of each run, latest run first.
    ///
    /// Frames are settled in order. Given every frame's candidates and the frame count, `settle` settles all of
    /// them exactly as WORLD does. A stream instead settles one frame at a time from a window of frames after
    /// it: the earlier frames stay as they were settled, step 2 counts the frames past the window as voiced (so
    /// runs starting near its end count), and runs starting after the window cannot reach back into it (in
    /// WORLD they can, arbitrarily far).
    struct ContourRepair {
        let bands: Int
        let allowedRange: Double
        /// Shortest voiced run kept, in frames: about one period of the F0 floor on each side, odd.
        let voiceRangeMinimum: Int
        /// Frames of neighbourhood on either side in step 2.
        let halfRange: Int
        /// Settled frames the steps read behind the first unsettled one.
        private let history: Int

        /// Frames settled so far.
        private(set) var settledCount = 0
        /// Per frame from `settledCount - history` to the end of the window: the best candidate and the
        /// contour after steps 1, 2 and 3, and whether step 3 set the frame by extension.
        private var best: [Double]
        private var jumpFree: [Double]
        private var runsKept: [Double]
        private var extendedForward: [Double]
        private var extending: [Bool]
        private var candidates: UnsafeBufferPointer<Double> = UnsafeBufferPointer(start: nil, count: 0)
        private var onsets: [Int] = []
        /// The window's final contour, from its first frame.
        private var contour: [Double] = []

        init(bands: Int, options: Options) {
            self.bands = bands
            allowedRange = options.allowedRange
            voiceRangeMinimum = Int(0.5 + 1000.0 / options.framePeriod / options.f0Floor) * 2 + 1
            halfRange = (voiceRangeMinimum - 1) / 2
            history = max(halfRange, 2)
            best = [Double](repeating: 0, count: history)
            jumpFree = best
            runsKept = best
            extendedForward = best
            extending = [Bool](repeating: false, count: history)
        }

        /// Settles frames from `settledCount` on, given `candidates` and `scores` (frame by frame, `bands`
        /// values each) of the frames from there to the end of the window. With `frameCount` the window reaches
        /// the last frame of the signal and every frame is settled; without, only the first.
        mutating func settle(
            candidates: UnsafeBufferPointer<Double>, scores: UnsafeBufferPointer<Double>, frameCount: Int?,
            into final: inout [Double]
        ) {
            let start = settledCount
            let end = start + candidates.count / bands
            assert(frameCount.map { $0 == end } ?? (end > start), "the window must hold the frame to settle")
            self.candidates = candidates
            defer { self.candidates = UnsafeBufferPointer(start: nil, count: 0) }
            if let frameCount, frameCount <= voiceRangeMinimum {
                final.append(contentsOf: repeatElement(0, count: end - start))
                settledCount = end
                return
            }
            resizeWindow(to: end - start)
            for frame in start..<end {
                best[slot(frame)] = bestCandidate(frame, scores: scores)
            }
            for frame in start..<end {
                jumpFree[slot(frame)] = removingJump(at: frame, frameCount: frameCount)
            }
            for frame in start..<end {
                runsKept[slot(frame)] = keepingLongRuns(at: frame, frameCount: frameCount, windowEnd: end)
                extendForward(at: frame)
            }
            let settled = frameCount == nil ? start + 1 : end
            extendBackward(from: start, to: end)
            final.append(contentsOf: contour[0..<(settled - start)])
            keepHistory(settling: settled - start)
            settledCount = settled
        }

        // MARK: Window storage

        private func slot(_ frame: Int) -> Int {
            frame - settledCount + history
        }

        /// Makes room for windows of up to `frames` frames.
        mutating func reserve(windowFrames frames: Int) {
            resizeWindow(to: frames)
            onsets.reserveCapacity(history + frames)
            contour.reserveCapacity(history + frames)
        }

        private mutating func resizeWindow(to frames: Int) {
            let size = history + frames
            if best.count < size {
                let more = size - best.count
                best.append(contentsOf: repeatElement(0, count: more))
                jumpFree.append(contentsOf: repeatElement(0, count: more))
                runsKept.append(contentsOf: repeatElement(0, count: more))
                extendedForward.append(contentsOf: repeatElement(0, count: more))
                extending.append(contentsOf: repeatElement(false, count: more))
            }
        }

        /// Moves the last `history` settled frames to the front, where the next window reads them.
        private mutating func keepHistory(settling count: Int) {
            for i in 0..<history {
                best[i] = best[i + count]
                jumpFree[i] = jumpFree[i + count]
                runsKept[i] = runsKept[i + count]
                extendedForward[i] = extendedForward[i + count]
                extending[i] = extending[i + count]
            }
        }

        // MARK: Steps

        /// Per frame, the candidate of the band with the lowest score (the first band on ties).
        private func bestCandidate(_ frame: Int, scores: UnsafeBufferPointer<Double>) -> Double {
            let row = (frame - settledCount) * bands
            var bestScore = scores[row]
            var bestValue = candidates[row]
            for band in 1..<bands where bestScore > scores[row + band] {
                bestScore = scores[row + band]
                bestValue = candidates[row + band]
            }
            return bestValue
        }

        /// Step 1 input: the best contour with the margins at both ends unvoiced.
        private func base(_ frame: Int, frameCount: Int?) -> Double {
            if frame < voiceRangeMinimum { return 0 }
            if let frameCount, frame >= frameCount - voiceRangeMinimum { return 0 }
            return best[slot(frame)]
        }

        private func removingJump(at frame: Int, frameCount: Int?) -> Double {
            guard frame >= voiceRangeMinimum else { return 0 }
            let current = base(frame, frameCount: frameCount)
            let change = abs((current - base(frame - 1, frameCount: frameCount)) / (Dio.safeGuard + current))
            return change < allowedRange ? current : 0
        }

        private func keepingLongRuns(at frame: Int, frameCount: Int?, windowEnd: Int) -> Double {
            let value = jumpFree[slot(frame)]
            if frame < halfRange { return value }
            if let frameCount, frame >= frameCount - halfRange { return value }
            let lastKnown = min(frame + halfRange, windowEnd - 1)
            for neighbour in (frame - halfRange)...lastKnown where jumpFree[slot(neighbour)] == 0 {
                return 0
            }
            return value
        }

        /// Step 3 at one frame: a run that ended on the previous frame (or an extension still going) continues
        /// into this one if a candidate fits, and stops for good at the first frame where none does. In WORLD
        /// each extension stops at the end of the next run, where that run's own extension takes over.
        private mutating func extendForward(at frame: Int) {
            let index = slot(frame)
            guard frame >= 1 else {
                extendedForward[index] = runsKept[index]
                extending[index] = false
                return
            }
            let runEnded = runsKept[index - 1] != 0 && runsKept[index] == 0
            if runEnded || extending[index - 1] {
                let value = continuation(
                    current: extendedForward[index - 1], previous: extendedForward[index - 2], frame: frame)
                extendedForward[index] = value
                extending[index] = value != 0
            } else {
                extendedForward[index] = runsKept[index]
                extending[index] = false
            }
        }

        /// Step 4 over frames `start..<end`: every run starting inside them, latest first, extends backwards
        /// until a frame without a fitting candidate, the start of the previous run, or `start`.
        private mutating func extendBackward(from start: Int, to end: Int) {
            contour.removeAll(keepingCapacity: true)
            contour.append(contentsOf: extendedForward[slot(start)..<slot(end)])
            onsets.removeAll(keepingCapacity: true)
            let first = max(start, 1)
            if first < end - 1 {
                for frame in first..<(end - 1) where runsKept[slot(frame - 1)] == 0 && runsKept[slot(frame)] != 0 {
                    onsets.append(frame)
                }
            }
            for (k, onset) in onsets.enumerated().reversed() {
                let limit = k == 0 ? first : onsets[k - 1]
                var frame = onset
                while frame > limit {
                    let value = continuation(
                        current: contour[frame - start], previous: contour[frame + 1 - start], frame: frame - 1)
                    contour[frame - 1 - start] = value
                    if value == 0 { break }
                    frame -= 1
                }
            }
        }

        /// The candidate at `frame` nearest the extrapolation from `previous` through `current`,
        /// or 0 when even that one is further away than the allowed range.
        private func continuation(current: Double, previous: Double, frame: Int) -> Double {
            let reference = (current * 3.0 - previous) / 2.0
            let row = (frame - settledCount) * bands
            var nearest = candidates[row]
            var smallestError = abs(reference - nearest)
            for band in 1..<bands {
                let error = abs(reference - candidates[row + band])
                if error < smallestError {
                    smallestError = error
                    nearest = candidates[row + band]
                }
            }
            return abs(1.0 - nearest / reference) > allowedRange ? 0 : nearest
        }
    }
}
