import Foundation

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

    public init(sampleRate: Int, framePeriod: Double) {
        precondition(sampleRate > 0, "sample rate must be positive")
        precondition(framePeriod > 0 && framePeriod.isFinite, "frame period must be a positive number of ms")
        self.sampleRate = sampleRate
        self.framePeriod = framePeriod
    }

    /// WORLD's output length: frames × frame period × sample rate, truncated to whole samples.
    public static func outputLength(frameCount: Int, sampleRate: Int, framePeriod: Double) -> Int {
        Int(Double(frameCount) * framePeriod * Double(sampleRate) / 1000)
    }

    /// Samples produced for `frameCount` frames at this rate and frame period.
    public func outputLength(frameCount: Int) -> Int {
        Synthesis.outputLength(frameCount: frameCount, sampleRate: sampleRate, framePeriod: framePeriod)
    }

    /// The waveform for one F0 value a frame (0 where unvoiced) and matching `frames x (fftSize / 2 + 1)`
    /// power spectrogram and aperiodicity; the FFT size is implied by the number of bins.
    public func synthesize(f0: [Double], spectrogram: Matrix, aperiodicity: Matrix) -> [Double] {
        precondition(spectrogram.rows == f0.count, "spectrogram needs one row per F0 frame")
        precondition(
            aperiodicity.rows == spectrogram.rows && aperiodicity.columns == spectrogram.columns,
            "aperiodicity must have the spectrogram's shape")
        precondition(spectrogram.columns >= 2, "spectrogram needs at least two bins")

        let length = outputLength(frameCount: f0.count)
        var output = [Double](repeating: 0, count: length)
        guard length > 0 else { return output }

        let fftSize = (spectrogram.columns - 1) * 2
        // WORLD's lowest F0 the FFT size can render (integer division, as in WORLD); lower F0 counts as unvoiced.
        let pulses = pulses(f0: f0, length: length, lowestF0: Double(sampleRate / fftSize) + 1)
        var renderer = PulseRenderer(
            fftSize: fftSize, sampleRate: sampleRate, framePeriod: framePeriod / 1000,
            spectrogram: spectrogram, aperiodicity: aperiodicity)
        output.withUnsafeMutableBufferPointer { output in
            for pulse in pulses {
                renderer.render(pulse)
                renderer.add(at: pulse.index, to: output)
            }
        }
        return output
    }

    // MARK: Time base

    /// F0 and voicing per output sample, then one pulse at each wrap of the accumulated phase.
    private func pulses(f0: [Double], length: Int, lowestF0: Double) -> [Pulse] {
        let coarse = coarseContour(f0: f0, lowestF0: lowestF0)
        let time = (0..<length).map { Double($0) / Double(sampleRate) }
        let sampleF0 = Matlab.interp1(x: coarse.time, y: coarse.f0, at: time)
        let sampleVoicing = Matlab.interp1(x: coarse.time, y: coarse.voicing, at: time)
        var pulses = locatePulses(f0: sampleF0, voicing: sampleVoicing, time: time)
        assignNoiseLengths(&pulses)
        return pulses
    }

    /// Frame times, F0 (below `lowestF0` counts as unvoiced) and 0/1 voicing, with one extra frame past the
    /// end, extrapolated linearly, so every output sample lies inside the axis.
    private func coarseContour(f0: [Double], lowestF0: Double) -> (time: [Double], f0: [Double], voicing: [Double]) {
        let seconds = framePeriod / 1000
        let count = f0.count
        var time = [Double](repeating: 0, count: count + 1)
        var coarseF0 = [Double](repeating: 0, count: count + 1)
        var voicing = [Double](repeating: 0, count: count + 1)
        for i in 0..<count {
            time[i] = Double(i) * seconds
            coarseF0[i] = f0[i] < lowestF0 ? 0 : f0[i]
            voicing[i] = coarseF0[i] == 0 ? 0 : 1
        }
        time[count] = Double(count) * seconds
        coarseF0[count] = extrapolate(coarseF0, count: count)
        voicing[count] = extrapolate(voicing, count: count)
        return (time, coarseF0, voicing)
    }

    /// The value one frame past the last, continuing the last slope; a single frame has no slope and is held.
    private func extrapolate(_ values: [Double], count: Int) -> Double {
        count >= 2 ? values[count - 1] * 2 - values[count - 2] : values[count - 1]
    }

    /// A pulse sits on sample `i` when the wrapped phase jumps by more than π between `i` and `i + 1`;
    /// the linear zero crossing of the phase between them gives its sub-sample position.
    /// Unvoiced samples run at WORLD's default F0 so noise is still laid down pulse by pulse.
    private func locatePulses(f0: [Double], voicing: [Double], time: [Double]) -> [Pulse] {
        let fullTurn = 2.0 * Double.pi
        let rate = Double(sampleRate)
        func increment(_ i: Int) -> Double {
            2.0 * Double.pi * (voicing[i] > 0.5 ? f0[i] : Synthesis.unvoicedF0) / rate
        }

        var pulses: [Pulse] = []
        var totalPhase = increment(0)
        var previousPhase = totalPhase.truncatingRemainder(dividingBy: fullTurn)
        for i in 1..<f0.count {
            totalPhase += increment(i)
            let phase = totalPhase.truncatingRemainder(dividingBy: fullTurn)
            if abs(phase - previousPhase) > Double.pi {
                let before = previousPhase - fullTurn
                let crossing = -before / (phase - before)
                pulses.append(Pulse(
                    index: i - 1, time: time[i - 1], timeShift: crossing / rate,
                    isVoiced: voicing[i - 1] > 0.5, noiseLength: 0))
            }
            previousPhase = phase
        }
        return pulses
    }

    /// Each pulse's noise lasts until the next pulse; the last pulse has none.
    private func assignNoiseLengths(_ pulses: inout [Pulse]) {
        for i in pulses.indices {
            pulses[i].noiseLength = pulses[min(pulses.count - 1, i + 1)].index - pulses[i].index
        }
    }

    /// F0 that paces pulses through unvoiced stretches (WORLD's default F0).
    private static let unvoicedF0 = 500.0
}

/// One excitation instant.
private struct Pulse {
    /// Output sample the pulse is rounded down to.
    var index: Int
    /// Time of that sample, in seconds.
    var time: Double
    /// How far past `index` the pulse really lies, in seconds (under one sample).
    var timeShift: Double
    var isVoiced: Bool
    /// Samples of noise this pulse contributes.
    var noiseLength: Int
}

/// Builds the response of one pulse; FFT plans and workspaces are made once and reused for every pulse.
private struct PulseRenderer {
    private let fftSize: Int
    private let sampleRate: Int
    private let framePeriod: Double
    private let spectrogram: Matrix
    private let aperiodicity: Matrix
    private let forward: ForwardRealFFT
    private let inverse: InverseRealFFT
    private let minimumPhase: MinimumPhase
    private let dcRemover: [Double]
    private var randn = Randn()

    private var envelope: [Double]
    private var aperiodicRatio: [Double]
    private var periodic: [Double]
    private var aperiodic: [Double]
    /// The most recent pulse's response; its time zero is element `fftSize / 2`.
    private(set) var response: [Double]

    /// Aperiodicity is kept inside WORLD's safe range before it is squared into a power ratio.
    private static let aperiodicityRange = 0.001...0.999_999_999_999
    /// Added to the periodic power so bins the aperiodicity empties still have a logarithm.
    private static let safeGuardMinimum = 1e-12
    /// A frame counts as voiced for the periodic part only below this aperiodic power ratio at DC.
    private static let periodicDCRatioLimit = 0.999

    init(fftSize: Int, sampleRate: Int, framePeriod: Double, spectrogram: Matrix, aperiodicity: Matrix) {
        self.fftSize = fftSize
        self.sampleRate = sampleRate
        self.framePeriod = framePeriod
        self.spectrogram = spectrogram
        self.aperiodicity = aperiodicity
        forward = ForwardRealFFT(size: fftSize)
        inverse = InverseRealFFT(size: fftSize)
        minimumPhase = MinimumPhase(size: fftSize)
        dcRemover = PulseRenderer.makeDCRemover(fftSize: fftSize)
        let bins = fftSize / 2 + 1
        envelope = [Double](repeating: 0, count: bins)
        aperiodicRatio = [Double](repeating: 0, count: bins)
        periodic = [Double](repeating: 0, count: fftSize)
        aperiodic = [Double](repeating: 0, count: fftSize)
        response = [Double](repeating: 0, count: fftSize)
    }

    /// A raised-cosine pulse normalised to unit sum: subtracting it, scaled, cancels a response's DC.
    private static func makeDCRemover(fftSize: Int) -> [Double] {
        let half = fftSize / 2
        var remover = [Double](repeating: 0, count: fftSize)
        var sum = 0.0
        for i in 0..<half {
            remover[i] = 0.5 - 0.5 * cos(2.0 * Double.pi * (Double(i) + 1.0) / (1.0 + Double(fftSize)))
            sum += remover[i] * 2.0
        }
        for i in 0..<half {
            remover[i] /= sum
            remover[fftSize - i - 1] = remover[i]
        }
        return remover
    }

    mutating func render(_ pulse: Pulse) {
        interpolateEnvelope(at: pulse.time)
        interpolateAperiodicRatio(at: pulse.time)
        renderPeriodic(pulse)
        renderAperiodic(pulse)
        mix(noiseLength: pulse.noiseLength)
    }

    /// Adds `response` to `output` with its time zero one sample after `index`, where WORLD places it.
    func add(at index: Int, to output: UnsafeMutableBufferPointer<Double>) {
        let offset = index - fftSize / 2 + 1
        let lower = max(0, -offset)
        let upper = min(fftSize, output.count - offset)
        guard lower < upper else { return }
        for j in lower..<upper {
            output[j + offset] += response[j]
        }
    }

    // MARK: Parameters at the pulse time

    /// The two frames around `time` and the weight of the later one; past the last frame, the last frame.
    private func neighbouringFrames(at time: Double) -> (earlier: Int, later: Int, weight: Double) {
        let position = time / framePeriod
        let last = spectrogram.rows - 1
        let earlier = min(last, Int(position.rounded(.down)))
        let later = min(last, Int(position.rounded(.up)))
        return (earlier, later, position - Double(earlier))
    }

    private mutating func interpolateEnvelope(at time: Double) {
        let (earlier, later, weight) = neighbouringFrames(at: time)
        let bins = envelope.count
        let first = earlier * bins
        let second = later * bins
        spectrogram.storage.withUnsafeBufferPointer { values in
            if earlier == later {
                for i in 0..<bins { envelope[i] = abs(values[first + i]) }
            } else {
                for i in 0..<bins {
                    envelope[i] = (1.0 - weight) * abs(values[first + i]) + weight * abs(values[second + i])
                }
            }
        }
    }

    /// Interpolates the amplitude aperiodicity, then squares it into a ratio of powers.
    private mutating func interpolateAperiodicRatio(at time: Double) {
        let (earlier, later, weight) = neighbouringFrames(at: time)
        let bins = aperiodicRatio.count
        let first = earlier * bins
        let second = later * bins
        let range = PulseRenderer.aperiodicityRange
        aperiodicity.storage.withUnsafeBufferPointer { values in
            for i in 0..<bins {
                let a = values[first + i].clamped(to: range)
                let ratio = earlier == later ? a : (1.0 - weight) * a + weight * values[second + i].clamped(to: range)
                aperiodicRatio[i] = ratio * ratio
            }
        }
    }

    // MARK: Periodic part

    private mutating func renderPeriodic(_ pulse: Pulse) {
        guard pulse.isVoiced, aperiodicRatio[0] <= PulseRenderer.periodicDCRatioLimit else {
            for i in 0..<fftSize { periodic[i] = 0 }
            return
        }
        for i in 0...(fftSize / 2) {
            minimumPhase.logSpectrum[i] =
                log(envelope[i] * (1.0 - aperiodicRatio[i]) + PulseRenderer.safeGuardMinimum) / 2.0
        }
        minimumPhase.execute()
        for i in 0...(fftSize / 2) {
            inverse.spectrum[i] = minimumPhase.spectrum[i]
        }
        delayInverseSpectrum(by: pulse.timeShift)
        inverse.execute()
        PulseRenderer.centre(inverse.waveform, into: &periodic)
        removeDCFromPeriodic()
    }

    /// A linear phase that delays the response by `shift` seconds (less than one sample).
    /// The sine is taken as the non-negative root of 1 − cos², as WORLD does; the phase stays in [0, π].
    private func delayInverseSpectrum(by shift: Double) {
        let step = 2.0 * Double.pi * shift * Double(sampleRate) / Double(fftSize)
        for i in 0...(fftSize / 2) {
            let value = inverse.spectrum[i]
            let cosine = cos(step * Double(i))
            let sine = (1.0 - cosine * cosine).squareRoot()
            inverse.spectrum[i] = Complex(
                value.real * cosine + value.imag * sine,
                value.imag * cosine - value.real * sine)
        }
    }

    /// Cancels the response's DC with the raised-cosine remover. The first half (before the pulse) of a
    /// minimum-phase response is wrap-around only, so WORLD replaces it rather than correcting it.
    private mutating func removeDCFromPeriodic() {
        let half = fftSize / 2
        var dc = 0.0
        for i in half..<fftSize { dc += periodic[i] }
        for i in 0..<half { periodic[i] = -dc * dcRemover[i] }
        for i in half..<fftSize { periodic[i] -= dc * dcRemover[i] }
    }

    // MARK: Aperiodic part

    private mutating func renderAperiodic(_ pulse: Pulse) {
        fillNoiseSpectrum(length: pulse.noiseLength)
        for i in 0...(fftSize / 2) {
            let power = pulse.isVoiced ? envelope[i] * aperiodicRatio[i] : envelope[i]
            // Only an exactly silent bin is lifted, so its logarithm stays finite.
            minimumPhase.logSpectrum[i] = log(max(power, .leastNormalMagnitude)) / 2.0
        }
        minimumPhase.execute()
        for i in 0...(fftSize / 2) {
            let filter = minimumPhase.spectrum[i]
            let noise = forward.spectrum[i]
            inverse.spectrum[i] = Complex(
                filter.real * noise.real - filter.imag * noise.imag,
                filter.real * noise.imag + filter.imag * noise.real)
        }
        inverse.execute()
        PulseRenderer.centre(inverse.waveform, into: &aperiodic)
    }

    /// `length` zero-mean Gaussian samples, zero-padded, transformed.
    private mutating func fillNoiseSpectrum(length: Int) {
        let waveform = forward.waveform
        var sum = 0.0
        for i in 0..<length {
            waveform[i] = randn.next()
            sum += waveform[i]
        }
        if length > 0 {
            let mean = sum / Double(length)
            for i in 0..<length { waveform[i] -= mean }
        }
        for i in length..<fftSize { waveform[i] = 0 }
        forward.execute()
    }

    // MARK: Mixing

    /// Periodic energy is spread over one pulse, noise over `noiseLength` samples: scaling the periodic part
    /// by √noiseLength balances their power; dividing by the FFT size undoes FFTW's unnormalised inverse.
    private mutating func mix(noiseLength: Int) {
        let periodicGain = Double(noiseLength).squareRoot()
        let size = Double(fftSize)
        for i in 0..<fftSize {
            response[i] = (periodic[i] * periodicGain + aperiodic[i]) / size
        }
    }

    /// Swaps the halves of a circular response so time zero lands in the middle.
    private static func centre(_ waveform: UnsafeMutableBufferPointer<Double>, into destination: inout [Double]) {
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
