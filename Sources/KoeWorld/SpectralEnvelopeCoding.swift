import Glibc
import KoeDSP

/// WORLD's spectral envelope codec (`CodeSpectralEnvelope` / `DecodeSpectralEnvelope`, pyworld's
/// `code_spectral_envelope` / `decode_spectral_envelope`): a few mel-cepstrum-like coefficients a frame.
///
/// Coding resamples each frame's log envelope onto `fftSize / 2` points evenly spaced in mel from 40 Hz to
/// min(Nyquist, 20 kHz) and keeps the first `dimensions` coefficients of WORLD's cosine transform of them. Decoding
/// transforms those back to the mel points, interpolates them onto the linear bins and exponentiates. The transform
/// is WORLD's own (a real FFT of the mel points, even ones first and odd ones reversed, each bin turned by
/// e^(iπk/fftSize)), kept so the coefficients equal WORLD's; coding is lossy, and a decoded envelope only
/// approximates the one coded.
public struct SpectralEnvelopeCoding: Sendable {
    public let sampleRate: Int
    /// The FFT size of the envelopes: each has `fftSize / 2 + 1` bins.
    public let fftSize: Int
    /// Coefficients a coded frame holds.
    public let dimensions: Int
    private let coders: WorkspacePool<EnvelopeCoder>
    private let decoders: WorkspacePool<EnvelopeDecoder>

    /// Throws if the rate is not supported, the FFT size is not one CheapTrick accepts at that rate, or
    /// `dimensions` is not 1 to `fftSize / 2` (the mel points a frame is resampled onto).
    public init(sampleRate: Int, fftSize: Int, dimensions: Int) throws(WorldError) {
        try SignalRequirements.validate(sampleRate: sampleRate)
        try CheapTrick.validate(fftSize: fftSize, sampleRate: sampleRate)
        guard (1...(fftSize / 2)).contains(dimensions) else {
            throw .invalidOption(
                "a coded envelope of FFT size \(fftSize) has 1 to \(fftSize / 2) dimensions (got \(dimensions))")
        }
        self.sampleRate = sampleRate
        self.fftSize = fftSize
        self.dimensions = dimensions
        coders = WorkspacePool { EnvelopeCoder(sampleRate: sampleRate, fftSize: fftSize, dimensions: dimensions) }
        decoders = WorkspacePool { EnvelopeDecoder(sampleRate: sampleRate, fftSize: fftSize, dimensions: dimensions) }
    }

    /// The most coefficients `code` makes at `fftSize`: the bins of the real FFT of the `fftSize / 2` mel points.
    /// WORLD reads memory it never wrote for more; decoding takes up to `fftSize / 2`.
    public static func mostCodedDimensions(fftSize: Int) -> Int {
        fftSize / 4 + 1
    }

    /// `dimensions` coefficients for each frame of a power `spectrogram` of `fftSize / 2 + 1` bins. Throws if the
    /// spectrogram has another number of bins, a value that is not positive and finite, or `dimensions` is more
    /// than `mostCodedDimensions(fftSize:)`.
    public func code(_ spectrogram: Matrix) throws(WorldError) -> Matrix {
        let most = Self.mostCodedDimensions(fftSize: fftSize)
        guard dimensions <= most else {
            throw .invalidOption(
                "WORLD's coder makes at most \(most) dimensions from envelopes of FFT size \(fftSize) (got \(dimensions))")
        }
        try SignalRequirements.validateSpectrum(
            spectrogram, fftSize: fftSize, name: "the spectrogram", kind: "a power spectrum")
        var coded = try Matrix(rows: spectrogram.rows, columns: dimensions)
        let columns = dimensions
        coders.withWorkspace { coder in
            coded.storage.withUnsafeMutableBufferPointer { output in
                for frame in 0..<spectrogram.rows {
                    spectrogram.withRow(frame) { envelope in
                        coder.code(envelope, into: UnsafeMutableBufferPointer(rebasing: output[(frame * columns)..<((frame + 1) * columns)]))
                    }
                }
            }
        }
        return coded
    }

    /// The power spectrogram, `fftSize / 2 + 1` bins a frame, that `coded` (`dimensions` coefficients a frame)
    /// stands for. Throws if `coded` has another number of columns, holds a value that is not finite, or decodes to
    /// a power too large for a `Double`.
    public func decode(_ coded: Matrix) throws(WorldError) -> Matrix {
        guard coded.columns == dimensions else {
            throw .invalidParameters("the coded envelope has \(coded.columns) dimensions a frame, not \(dimensions)")
        }
        try SignalRequirements.requireFinite(coded.storage) {
            "the coded envelope's frame \($0 / coded.columns), dimension \($0 % coded.columns)"
        }
        let bins = fftSize / 2 + 1
        var spectrogram = try Matrix(rows: coded.rows, columns: bins)
        decoders.withWorkspace { decoder in
            spectrogram.storage.withUnsafeMutableBufferPointer { output in
                for frame in 0..<coded.rows {
                    coded.withRow(frame) { coefficients in
                        decoder.decode(coefficients, into: UnsafeMutableBufferPointer(rebasing: output[(frame * bins)..<((frame + 1) * bins)]))
                    }
                }
            }
        }
        if let position = SignalRequirements.firstNonFinite(spectrogram.storage) {
            throw .invalidParameters(
                "the coded envelope's frame \(position / bins) decodes to a power too large for a double")
        }
        return spectrogram
    }
}

/// WORLD's mel scale (`FrequencyToMel`): 1127.01048 ln(1 + f / 700).
private func mel(_ frequency: Double) -> Double {
    1127.01048 * log(frequency / 700.0 + 1.0)
}

/// The inverse of `mel` (`MelToFrequency`).
private func frequency(mel: Double) -> Double {
    700.0 * (exp(mel / 1127.01048) - 1.0)
}

/// The lowest and highest frequency of the codec's mel axis at `sampleRate`, in mel: 40 Hz and min(Nyquist, 20 kHz).
private func melRange(sampleRate: Int) -> (floor: Double, ceiling: Double) {
    (mel(40.0), mel(min(Double(sampleRate) / 2.0, 20_000.0)))
}

/// The `index`th of `count` points evenly spaced in mel from `range.floor` (inclusive) to `range.ceiling` (exclusive),
/// computed in WORLD's order of operations.
private func melPoint(_ index: Int, of count: Int, range: (floor: Double, ceiling: Double)) -> Double {
    (range.ceiling - range.floor) * Double(index) / Double(count) + range.floor
}

/// The frequency of `bin`, in WORLD's order of operations (bin × fs / fftSize).
private func binFrequency(_ bin: Int, sampleRate: Int, fftSize: Int) -> Double {
    Double(bin) * Double(sampleRate) / Double(fftSize)
}

/// One thread's FFT and scratch for coding, reused by every frame and call.
private final class EnvelopeCoder {
    /// Points of the mel axis: `fftSize / 2`.
    private let melCount: Int
    /// The mel value of each linear bin, `melCount + 1` of them.
    private let binMels: UnsafeMutableBufferPointer<Double>
    /// Where the log envelope is resampled, in mel.
    private let melAxis: UnsafeMutableBufferPointer<Double>
    /// WORLD's turn of each transform bin: 2 e^(iπk/fftSize) / √fftSize, the first over √2 in its real part.
    private let weights: UnsafeMutableBufferPointer<Complex>
    private let logEnvelope: UnsafeMutableBufferPointer<Double>
    private let melEnvelope: UnsafeMutableBufferPointer<Double>
    private let transform: ForwardRealFFT

    init(sampleRate: Int, fftSize: Int, dimensions: Int) {
        melCount = fftSize / 2
        binMels = .allocate(capacity: melCount + 1)
        melAxis = .allocate(capacity: melCount)
        weights = .allocate(capacity: dimensions)
        logEnvelope = .allocate(capacity: melCount + 1)
        melEnvelope = .allocate(capacity: melCount)
        transform = ForwardRealFFT(size: melCount)
        let range = melRange(sampleRate: sampleRate)
        for bin in 0...melCount {
            binMels[bin] = mel(binFrequency(bin, sampleRate: sampleRate, fftSize: fftSize))
        }
        for point in 0..<melCount {
            melAxis[point] = melPoint(point, of: melCount, range: range)
        }
        let size = Double(fftSize)
        for k in 0..<dimensions {
            let angle = Double(k) * Double.pi / size
            weights[k] = Complex(2.0 * cos(angle) / size.squareRoot(), 2.0 * sin(angle) / size.squareRoot())
        }
        weights[0].real /= 2.0.squareRoot()
    }

    deinit {
        binMels.deallocate()
        melAxis.deallocate()
        weights.deallocate()
        logEnvelope.deallocate()
        melEnvelope.deallocate()
    }

    /// Codes one frame of `melCount + 1` positive bins into `coded`'s `dimensions` coefficients.
    func code(_ envelope: UnsafeBufferPointer<Double>, into coded: UnsafeMutableBufferPointer<Double>) {
        for bin in 0...melCount {
            logEnvelope[bin] = log(envelope[bin])
        }
        Matlab.interp1(x: UnsafeBufferPointer(binMels), y: UnsafeBufferPointer(logEnvelope),
                       at: UnsafeBufferPointer(melAxis), into: melEnvelope)
        // The cosine transform as one real FFT (Makhoul's order): even points forward, then odd points backward.
        let waveform = transform.waveform
        for point in stride(from: 0, to: melCount, by: 2) {
            waveform[point / 2] = melEnvelope[point]
        }
        for point in stride(from: 1, to: melCount, by: 2) {
            waveform[melCount - 1 - point / 2] = melEnvelope[point]
        }
        transform.execute()
        let spectrum = transform.spectrum
        let normalization = Double(melCount).squareRoot()
        for k in coded.indices {
            coded[k] = (spectrum[k].real * weights[k].real - spectrum[k].imag * weights[k].imag) / normalization
        }
    }
}

/// One thread's FFT and scratch for decoding, reused by every frame and call.
private final class EnvelopeDecoder {
    /// Points of the mel axis: `fftSize / 2`.
    private let melCount: Int
    /// The frequencies of the mel points, in Hz, with 0 and Nyquist added at the ends: `melCount + 2`.
    private let melFrequencies: UnsafeMutableBufferPointer<Double>
    /// The frequency of each linear bin: `melCount + 1`.
    private let binFrequencies: UnsafeMutableBufferPointer<Double>
    /// WORLD's turn of each coefficient: e^(iπk/fftSize) √fftSize, the first over √2 in its real part.
    private let weights: UnsafeMutableBufferPointer<Complex>
    /// The decoded log envelope at `melFrequencies`.
    private let melEnvelope: UnsafeMutableBufferPointer<Double>
    /// WORLD decodes with its complex "backward" FFT, which (Ooura's transform, conjugated) has the real part of
    /// FFTW's forward one; only the real part is read. Its input beyond `dimensions` stays zero: FFTW leaves the
    /// input of an out-of-place complex transform as it was.
    private let transform: ComplexFFT

    init(sampleRate: Int, fftSize: Int, dimensions: Int) {
        melCount = fftSize / 2
        melFrequencies = .allocate(capacity: melCount + 2)
        binFrequencies = .allocate(capacity: melCount + 1)
        weights = .allocate(capacity: dimensions)
        melEnvelope = .allocate(capacity: melCount + 2)
        transform = ComplexFFT(size: melCount, direction: .forward)
        let range = melRange(sampleRate: sampleRate)
        melFrequencies[0] = 0
        for point in 0..<melCount {
            melFrequencies[point + 1] = frequency(mel: melPoint(point, of: melCount, range: range))
        }
        melFrequencies[melCount + 1] = Double(sampleRate) / 2.0
        for bin in 0...melCount {
            binFrequencies[bin] = binFrequency(bin, sampleRate: sampleRate, fftSize: fftSize)
        }
        let size = Double(fftSize)
        for k in 0..<dimensions {
            let angle = Double(k) * Double.pi / size
            weights[k] = Complex(cos(angle) * size.squareRoot(), sin(angle) * size.squareRoot())
        }
        weights[0].real /= 2.0.squareRoot()
    }

    deinit {
        melFrequencies.deallocate()
        binFrequencies.deallocate()
        weights.deallocate()
        melEnvelope.deallocate()
    }

    /// Decodes one frame's `dimensions` coefficients into `envelope`'s `melCount + 1` bins.
    func decode(_ coded: UnsafeBufferPointer<Double>, into envelope: UnsafeMutableBufferPointer<Double>) {
        let input = transform.input
        let normalization = Double(melCount).squareRoot()
        for k in coded.indices {
            input[k] = Complex(coded[k] * weights[k].real * normalization, -coded[k] * weights[k].imag * normalization)
        }
        transform.execute()
        // Undo the coder's order: points forward at even positions, backward at odd ones, one place in.
        let output = transform.output
        for point in stride(from: 0, to: melCount, by: 2) {
            melEnvelope[point + 1] = output[point / 2].real
        }
        for point in stride(from: 1, to: melCount, by: 2) {
            melEnvelope[point + 1] = output[melCount - 1 - point / 2].real
        }
        melEnvelope[0] = melEnvelope[1]
        melEnvelope[melCount + 1] = melEnvelope[melCount]
        Matlab.interp1(x: UnsafeBufferPointer(melFrequencies), y: UnsafeBufferPointer(melEnvelope),
                       at: UnsafeBufferPointer(binFrequencies), into: envelope)
        let scale = Double(melCount)
        for bin in envelope.indices {
            envelope[bin] = exp(envelope[bin] / scale)
        }
    }
}
