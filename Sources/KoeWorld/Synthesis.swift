import Glibc
import KoeDSP

/// WORLD's waveform synthesis from F0, spectral envelope and aperiodicity.
///
/// Pulses are placed where the accumulated phase of the sample-rate F0 contour wraps. Each pulse gets a
/// response from the envelope and aperiodicity interpolated at its time: a minimum-phase periodic part
/// (shifted by the pulse's sub-sample position, DC removed) plus minimum-phase filtered noise that lasts
/// until the next pulse. The responses are overlap-added. Noise comes from `Randn` reseeded on every call,
/// so the same parameters always give the same waveform.
public struct Synthesis: Sendable {
    public let sampleRate: Int
    /// Milliseconds between the frames of the parameters.
    public let framePeriod: Double

    /// Throws if the rate is not supported or the frame period is out of range.
    public init(sampleRate: Int, framePeriod: Double) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try SignalRequirements.validateFramePeriod(framePeriod)
        self.sampleRate = sampleRate
        self.framePeriod = framePeriod
    }

    /// The most samples one synthesis makes (over 12 hours at 48 kHz), so a wild frame period fails instead of
    /// exhausting memory.
    public static let longestOutput = Int(Int32.max)

    /// WORLD's output length: frames × frame period × sample rate, truncated to whole samples. The rate and
    /// frame period must be validated ones.
    static func outputLength(frameCount: Int, sampleRate: Int, framePeriod: Double) -> Int {
        Int(Double(frameCount) * framePeriod * Double(sampleRate) / 1000)
    }

    /// Samples produced for `frameCount` frames at this rate and frame period: WORLD's output length.
    public func outputLength(frameCount: Int) -> Int {
        Synthesis.outputLength(frameCount: frameCount, sampleRate: sampleRate, framePeriod: framePeriod)
    }

    /// The waveform for one F0 value a frame (0 where unvoiced) and matching `frames x (fftSize / 2 + 1)`
    /// power spectrogram and aperiodicity; the FFT size is implied by the number of bins, and must be one
    /// CheapTrick accepts. The frames go through `StreamingSynthesizer` one at a time, so whole-signal and
    /// streaming synthesis share one code path and agree sample for sample. Throws if the three do not fit
    /// together or hold a value that is not a finite number.
    public func synthesize(f0: [Double], spectrogram: Matrix, aperiodicity: Matrix) throws(WorldError) -> [Double] {
        guard spectrogram.rows == f0.count else {
            throw .invalidParameters("the spectrogram has \(spectrogram.rows) frames but the F0 has \(f0.count)")
        }
        guard aperiodicity.rows == spectrogram.rows, aperiodicity.columns == spectrogram.columns else {
            throw .invalidParameters(
                "the aperiodicity is \(aperiodicity.rows) x \(aperiodicity.columns) but the spectrogram "
                    + "\(spectrogram.rows) x \(spectrogram.columns); they must have one shape")
        }
        let fftSize = try StreamingSynthesizer.fftSize(bins: spectrogram.columns, sampleRate: sampleRate)
        let length = outputLength(frameCount: f0.count)
        guard length <= Self.longestOutput else {
            throw .invalidParameters(
                "\(f0.count) frames of \(framePeriod) ms make \(length) samples, more than \(Self.longestOutput)")
        }
        try SignalRequirements.requireFinite(f0) { "the F0 of frame \($0)" }
        for (matrix, name) in [(spectrogram, "spectrogram"), (aperiodicity, "aperiodicity")] {
            try SignalRequirements.requireFinite(matrix.storage) {
                "the \(name)'s frame \($0 / matrix.columns), bin \($0 % matrix.columns)"
            }
        }

        let synthesizer = StreamingSynthesizer(unchecked: sampleRate, framePeriod: framePeriod, fftSize: fftSize)
        var output: [Double] = []
        output.reserveCapacity(length)
        for frame in f0.indices {
            spectrogram.withRow(frame) { envelope in
                aperiodicity.withRow(frame) { aperiodicity in
                    synthesizer.push(f0: f0[frame], spectrum: envelope, aperiodicity: aperiodicity)
                }
            }
            _ = synthesizer.drain(into: &output)
        }
        _ = synthesizer.finish(into: &output)
        return output
    }
}

/// One excitation instant.
struct ExcitationPulse {
    /// Output sample the pulse is rounded down to.
    var index: Int
    /// Time of that sample, in seconds.
    var time: Double
    /// How far past `index` the pulse really lies, in seconds (under one sample).
    var timeShift: Double
    var isVoiced: Bool
    /// Samples per turn of the phase at the pulse, rounded.
    var period: Int
}

/// The power envelope and aperiodicity rows of one frame.
struct FrameRows {
    let spectrum: UnsafeBufferPointer<Double>
    let aperiodicity: UnsafeBufferPointer<Double>
}

/// Builds the response of one pulse; FFT plans and workspaces are made once and reused for every pulse.
/// Parameters are interpolated when a pulse is found and the response rendered once its noise length is known.
/// `Randn` is drawn pulse after pulse, so the noise depends only on the pulse sequence.
///
/// WORLD's response is centred: its first half, before the pulse, holds the periodic part's DC correction and
/// the noise's wrapped-around tail. A causal renderer starts the response at the pulse instead: the whole DC
/// correction follows the pulse, and the noise's tail comes after its head, where its filter put it.
final class PulseRenderer {
    /// Whether the response starts at the pulse rather than half an FFT before it.
    let isCausal: Bool
    private let fftSize: Int
    private let sampleRate: Int
    private let forward: ForwardRealFFT
    private let inverse: InverseRealFFT
    private let minimumPhase: MinimumPhase
    private let dcRemover: UnsafeMutableBufferPointer<Double>
    private let noise: NoiseStream

    private let envelope: UnsafeMutableBufferPointer<Double>
    private let aperiodicRatio: UnsafeMutableBufferPointer<Double>
    private let periodic: UnsafeMutableBufferPointer<Double>
    /// Whether the last pulse had no periodic part (`periodic` then holds nothing useful).
    private var periodicIsSilent = true
    private let delayCosines: UnsafeMutableBufferPointer<Double>
    /// Samples of `forward.waveform` the last noise filled; the rest are zero.
    private var noiseWritten = 0
    private let responseBuffer: UnsafeMutableBufferPointer<Double>
    /// 1 / fftSize when that is exact (a power-of-two size): multiplying is dividing, without a division's cost.
    private let inverseSize: Double?

    /// The most recent pulse's response; its time zero is element `timeZero`.
    var response: UnsafeBufferPointer<Double> { UnsafeBufferPointer(responseBuffer) }
    /// The element of `response` at the pulse: `fftSize / 2` as WORLD renders, 0 when causal.
    var timeZero: Int { isCausal ? 0 : fftSize / 2 }

    /// Aperiodicity is kept inside WORLD's safe range before it is squared into a power ratio.
    private static let aperiodicityRange = 0.001...0.999_999_999_999
    /// Added to the periodic power so bins the aperiodicity empties still have a logarithm.
    private static let safeGuardMinimum = 1e-12
    /// A frame counts as voiced for the periodic part only below this aperiodic power ratio at DC.
    private static let periodicDCRatioLimit = 0.999

    init(fftSize: Int, sampleRate: Int, isCausal: Bool = false) {
        self.isCausal = isCausal
        self.fftSize = fftSize
        self.sampleRate = sampleRate
        forward = ForwardRealFFT(size: fftSize)
        inverse = InverseRealFFT(size: fftSize)
        minimumPhase = MinimumPhase(size: fftSize)
        noise = NoiseStream(maximumTake: fftSize)
        let bins = fftSize / 2 + 1
        dcRemover = .allocate(capacity: fftSize)
        envelope = .allocate(capacity: bins)
        aperiodicRatio = .allocate(capacity: bins)
        periodic = .allocate(capacity: fftSize)
        periodic.initialize(repeating: 0)
        delayCosines = .allocate(capacity: bins)
        responseBuffer = .allocate(capacity: fftSize)
        inverseSize = fftSize & (fftSize - 1) == 0 ? 1.0 / Double(fftSize) : nil
        if isCausal {
            PulseRenderer.makeCausalDCRemover(into: dcRemover)
        } else {
            PulseRenderer.makeDCRemover(into: dcRemover)
        }
    }

    deinit {
        for buffer in [dcRemover, envelope, aperiodicRatio, periodic, delayCosines, responseBuffer] {
            buffer.deallocate()
        }
    }

    /// A raised-cosine pulse normalised to unit sum: subtracting it, scaled, cancels a response's DC.
    private static func makeDCRemover(into remover: UnsafeMutableBufferPointer<Double>) {
        let fftSize = remover.count
        let half = fftSize / 2
        var sum = 0.0
        for i in 0..<half {
            remover[i] = 0.5 - 0.5 * cos(2.0 * Double.pi * (Double(i) + 1.0) / (1.0 + Double(fftSize)))
            sum += remover[i] * 2.0
        }
        for i in 0..<half {
            remover[i] /= sum
            remover[fftSize - i - 1] = remover[i]
        }
    }

    /// The same raised cosine over the response's first half alone, after the pulse, starting and ending at 0 so
    /// that the correction adds no step; the second half is 0.
    private static func makeCausalDCRemover(into remover: UnsafeMutableBufferPointer<Double>) {
        let half = remover.count / 2
        var sum = 0.0
        for i in 0..<half {
            remover[i] = 0.5 - 0.5 * cos(2.0 * Double.pi * (Double(i) + 1.0) / (1.0 + Double(half)))
            sum += remover[i]
        }
        for i in 0..<half { remover[i] /= sum }
        for i in half..<remover.count { remover[i] = 0 }
    }

    /// Takes the envelope and aperiodicity at a pulse `weight` of the way from `earlier` to `later`;
    /// without `later` (a pulse on a frame, or past the last one) `earlier` is taken as it is.
    func interpolate(from earlier: FrameRows, to later: FrameRows?, weight: Double) {
        interpolateEnvelope(from: earlier.spectrum, to: later?.spectrum, weight: weight)
        interpolateAperiodicRatio(from: earlier.aperiodicity, to: later?.aperiodicity, weight: weight)
    }

    /// The response of `pulse` from the parameters last interpolated, with `noiseLength` samples of noise.
    func render(_ pulse: ExcitationPulse, noiseLength: Int) {
        renderPeriodic(pulse)
        renderAperiodic(pulse, noiseLength: noiseLength)
        mix(noiseLength: noiseLength)
    }

    // MARK: Parameters at the pulse time

    private func interpolateEnvelope(
        from earlier: UnsafeBufferPointer<Double>, to later: UnsafeBufferPointer<Double>?, weight: Double
    ) {
        let envelope = envelope
        if let later {
            for i in envelope.indices {
                envelope[i] = (1.0 - weight) * abs(earlier[i]) + weight * abs(later[i])
            }
        } else {
            for i in envelope.indices { envelope[i] = abs(earlier[i]) }
        }
    }

    /// Interpolates the amplitude aperiodicity, then squares it into a ratio of powers.
    private func interpolateAperiodicRatio(
        from earlier: UnsafeBufferPointer<Double>, to later: UnsafeBufferPointer<Double>?, weight: Double
    ) {
        let range = PulseRenderer.aperiodicityRange
        let aperiodicRatio = aperiodicRatio
        if let later {
            for i in aperiodicRatio.indices {
                let ratio = (1.0 - weight) * earlier[i].clamped(to: range) + weight * later[i].clamped(to: range)
                aperiodicRatio[i] = ratio * ratio
            }
        } else {
            for i in aperiodicRatio.indices {
                let ratio = earlier[i].clamped(to: range)
                aperiodicRatio[i] = ratio * ratio
            }
        }
    }

    // MARK: Periodic part

    private func renderPeriodic(_ pulse: ExcitationPulse) {
        periodicIsSilent = !pulse.isVoiced || aperiodicRatio[0] > PulseRenderer.periodicDCRatioLimit
        guard !periodicIsSilent else { return }
        let power = minimumPhase.powerSpectrum
        let (envelope, aperiodicRatio) = (envelope, aperiodicRatio)
        for i in 0...(fftSize / 2) {
            power[i] = envelope[i] * (1.0 - aperiodicRatio[i]) + PulseRenderer.safeGuardMinimum
        }
        minimumPhase.execute()
        let (source, spectrum) = (minimumPhase.spectrum, inverse.spectrum)
        for i in 0...(fftSize / 2) {
            spectrum[i] = source[i]
        }
        delayInverseSpectrum(by: pulse.timeShift)
        inverse.execute()
        if isCausal {
            removeDCFromCausalPeriodic()
        } else {
            PulseRenderer.centre(inverse.waveform, into: periodic)
            removeDCFromPeriodic()
        }
    }

    /// A linear phase that delays the response by `shift` seconds (less than one sample).
    /// The sine is taken as the non-negative root of 1 − cos², as WORLD does; the phase stays in [0, π].
    private func delayInverseSpectrum(by shift: Double) {
        let step = 2.0 * Double.pi * shift * Double(sampleRate) / Double(fftSize)
        let (spectrum, cosines) = (inverse.spectrum, delayCosines)
        Trigonometry.cosines(step: step, into: cosines)
        for i in 0...(fftSize / 2) {
            let value = spectrum[i]
            let cosine = cosines[i]
            let sine = (1.0 - cosine * cosine).squareRoot()
            spectrum[i] = Complex(
                value.real * cosine + value.imag * sine,
                value.imag * cosine - value.real * sine)
        }
    }

    /// Cancels the response's DC with the raised-cosine remover. The first half (before the pulse) of a
    /// minimum-phase response is wrap-around only, so WORLD replaces it rather than correcting it.
    private func removeDCFromPeriodic() {
        let (periodic, dcRemover) = (periodic, dcRemover)
        let half = fftSize / 2
        var dc = 0.0
        for i in half..<fftSize { dc += periodic[i] }
        for i in 0..<half { periodic[i] = -dc * dcRemover[i] }
        for i in half..<fftSize { periodic[i] -= dc * dcRemover[i] }
    }

    /// The periodic part from the pulse on: the response's first half, its DC cancelled by the causal remover.
    /// The wrapped-around second half is dropped, as WORLD drops it: `periodic`'s stays zero.
    private func removeDCFromCausalPeriodic() {
        let (periodic, waveform, dcRemover) = (periodic, inverse.waveform, dcRemover)
        let half = fftSize / 2
        var dc = 0.0
        for i in 0..<half { dc += waveform[i] }
        for i in 0..<half { periodic[i] = waveform[i] - dc * dcRemover[i] }
    }

    // MARK: Aperiodic part

    private func renderAperiodic(_ pulse: ExcitationPulse, noiseLength: Int) {
        fillNoiseSpectrum(length: noiseLength)
        let power = minimumPhase.powerSpectrum
        let (envelope, aperiodicRatio) = (envelope, aperiodicRatio)
        for i in 0...(fftSize / 2) {
            let binPower = pulse.isVoiced ? envelope[i] * aperiodicRatio[i] : envelope[i]
            // Only an exactly silent bin is lifted, so its logarithm stays finite.
            power[i] = max(binPower, .leastNormalMagnitude)
        }
        minimumPhase.execute()
        let (filters, noises, spectrum) = (minimumPhase.spectrum, forward.spectrum, inverse.spectrum)
        for i in 0...(fftSize / 2) {
            spectrum[i] = filters[i] * noises[i]
        }
        // The noise response stays in the inverse FFT's output, which `mix` reads: centred there, not copied.
        inverse.execute()
    }

    /// `length` Gaussian samples made zero-mean, zero-padded, transformed. Pulses further apart than the
    /// FFT size (F0 near `sampleRate / fftSize`, at a voicing edge) draw and average all `length` samples,
    /// as WORLD does, but only the first `fftSize` fit the transform; WORLD writes the rest past its buffer.
    private func fillNoiseSpectrum(length: Int) {
        let waveform = forward.waveform
        let kept = min(length, fftSize)
        let drawn = noise.take(kept)
        var sum = 0.0
        for i in 0..<kept {
            waveform[i] = drawn[i]
            sum += drawn[i]
        }
        var unkept = length - kept
        while unkept > 0 {
            let count = min(unkept, fftSize)
            for value in noise.take(count) { sum += value }
            unkept -= count
        }
        if length > 0 {
            let mean = sum / Double(length)
            for i in 0..<kept { waveform[i] -= mean }
        }
        for i in kept..<max(kept, noiseWritten) { waveform[i] = 0 }
        noiseWritten = kept
        forward.execute()
    }

    // MARK: Mixing

    /// Periodic energy is spread over one pulse, noise over `noiseLength` samples: scaling the periodic part
    /// by √noiseLength balances their power; dividing by the FFT size undoes FFTW's unnormalised inverse.
    private func mix(noiseLength: Int) {
        if let inverseSize {
            mix(noiseLength: noiseLength) { $0 * inverseSize }
        } else {
            let size = Double(fftSize)
            mix(noiseLength: noiseLength) { $0 / size }
        }
    }

    /// The response is the aperiodic part, the inverse FFT's output with its halves swapped unless causal, plus the
    /// periodic part scaled: the response's first `split` samples read the output's last ones, the rest its first.
    @inline(__always)
    private func mix(noiseLength: Int, normalised: (Double) -> Double) {
        let split = isCausal ? fftSize : fftSize / 2
        let gain = periodicIsSilent ? nil : Double(noiseLength).squareRoot()
        mixPart(from: fftSize - split, count: split, into: 0, gain: gain, normalised)
        mixPart(from: 0, count: fftSize - split, into: split, gain: gain, normalised)
    }

    @inline(__always)
    private func mixPart(from source: Int, count: Int, into destination: Int, gain: Double?, _ normalised: (Double) -> Double) {
        let response = responseBuffer.baseAddress! + destination
        let aperiodic = UnsafePointer(inverse.waveform.baseAddress! + source)
        guard let gain else {
            for i in 0..<count { response[i] = normalised(aperiodic[i]) }
            return
        }
        let periodic = UnsafePointer(self.periodic.baseAddress! + destination)
        for i in 0..<count {
            response[i] = normalised(periodic[i] * gain + aperiodic[i])
        }
    }

    /// Swaps the halves of a circular response so time zero lands in the middle.
    private static func centre(_ waveform: UnsafeMutableBufferPointer<Double>, into destination: UnsafeMutableBufferPointer<Double>) {
        let half = waveform.count / 2
        for i in 0..<half {
            destination[i] = waveform[i + half]
            destination[i + half] = waveform[i]
        }
    }
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
