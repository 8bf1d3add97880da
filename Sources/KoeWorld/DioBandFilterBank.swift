import Glibc
import KoeDSP

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

extension Dio {
    /// DIO's band signals, the input taken in fixed blocks of `blockLength` samples. A band's taps are the 50 Hz
    /// low-cut convolved with its Nuttall window, advanced by half the window as WORLD compensates it, so the
    /// result is WORLD's linear convolution of the zero-extended signal. Whole signals are filtered by
    /// overlap-save: one forward FFT a block, then per band a product with the spectrum of its taps and one
    /// inverse FFT, the FFTs as long as the taps and a block. Live blocks are far shorter than the taps, and are
    /// filtered by `PartitionedConvolution`, the low-cut first and each band's Nuttall window after it, which
    /// differs only in rounding. Block boundaries depend only on sample indices, never on how the input was
    /// chunked.
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
            /// `input` convolves the input with the low-cut (kernel 0) and with each band's Nuttall window
            /// (kernels 1...bands: the provisional signals); `lowCutOutput` convolves the low-cut's output with the
            /// same windows: the bands' signals. The short filters in turn read far fewer parts' spectra a block
            /// than each band's whole taps would (at 48 kHz, 23 against 84).
            case partitioned(input: PartitionedConvolution, lowCutOutput: PartitionedConvolution)
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

        /// `live`: every block also yields each band's provisional samples (see `push`), and blocks are
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
                input: PartitionedConvolution(kernels: [ladder.lowCutTaps()] + windows, blockLength: blockLength),
                lowCutOutput: PartitionedConvolution(kernels: windows, blockLength: blockLength))
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

        /// Makes room for pushes of up to `samples` samples: the input a block reads, the latest push, and as
        /// much again, as the input is dropped once half of it can go.
        mutating func reserve(forPushesOf samples: Int) {
            history.reserveCapacity(2 * (span + blockLength + samples))
        }

        /// Appends input and filters every block it completes. `deliver(band, first, samples)` receives each
        /// band's filtered samples in order, from index 0, `first` being the index of the first; `afterBlock(last)`
        /// runs once a block is done, with the index of its last input sample.
        mutating func push(
            _ samples: [Double], deliver: Delivery, afterBlock: (Int) -> Void
        ) {
            push(samples, deliver: deliver, provisional: { _, _, _ in }, afterBlock: afterBlock)
        }

        /// `push`, and, when the bank was made `live`, after each band's `deliver`
        /// `provisional(band, first, samples)`: the band's signal without the low-cut (its Nuttall window alone,
        /// which needs only half the window of input ahead) from its last delivered sample, `first` (0 before
        /// the first), as far as the block's input allows.
        mutating func push(
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
        mutating func finish(through last: Int, deliver: Delivery) {
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
            case .partitioned(let input, let lowCutOutput):
                history.withUnsafeBufferPointer { history in
                    let start = last - blockLength + 1 - historyStart
                    input.push(UnsafeBufferPointer(rebasing: history[start..<(start + blockLength)]))
                }
                lowCutOutput.push(UnsafeBufferPointer(input.output(ofKernel: 0)))
                let bands = reaches.count
                for band in 0..<bands {
                    let firstOutput = last - reaches[band] - blockLength + 1
                    Self.hand(band, lowCutOutput.output(ofKernel: band), startingAt: firstOutput,
                              from: firstOutput, through: min(last - reaches[band], lastWanted), to: deliver)
                    let lastProvisional = last - provisionalReaches[band]
                    provisionalSignals[band].withUnsafeMutableBufferPointer { signal in
                        let kept = signal.count - blockLength
                        let start = signal.baseAddress!
                        start.update(from: start + blockLength, count: kept)
                        (start + kept).update(from: input.output(ofKernel: 1 + band).baseAddress!, count: blockLength)
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
