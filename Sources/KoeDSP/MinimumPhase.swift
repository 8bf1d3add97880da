import Foundation

/// Minimum-phase spectrum from a log-amplitude spectrum, through the real cepstrum:
/// fold the cepstrum onto positive quefrencies, transform back, exponentiate.
public final class MinimumPhase {
    public let size: Int
    /// Input: natural-log amplitude for bins `0 ... size / 2`; the upper half is mirrored by `execute()`.
    public let logSpectrum: UnsafeMutableBufferPointer<Double>
    /// Output: the minimum-phase spectrum for bins `0 ... size / 2`.
    public var spectrum: UnsafeMutableBufferPointer<Complex> { toSpectrum.output }

    private let toCepstrum: ForwardRealFFT
    private let toSpectrum: ComplexFFT

    public init(size: Int) {
        self.size = size
        toCepstrum = ForwardRealFFT(size: size)
        toSpectrum = ComplexFFT(size: size, direction: .forward)
        logSpectrum = toCepstrum.waveform
    }

    public func execute() {
        let half = size / 2
        for i in (half + 1)..<size {
            logSpectrum[i] = logSpectrum[size - i]
        }
        toCepstrum.execute()
        foldCepstrum()
        toSpectrum.execute()
        exponentiate()
    }

    /// The forward real FFT of a symmetric sequence gives the cepstrum up to the sign of the imaginary part;
    /// doubling positive quefrencies and zeroing negative ones makes it causal.
    private func foldCepstrum() {
        let half = size / 2
        let cepstrum = toCepstrum.spectrum
        let folded = toSpectrum.input
        folded[0] = Complex(cepstrum[0].real, -cepstrum[0].imag)
        for i in 1..<max(half, 1) {
            folded[i] = Complex(cepstrum[i].real * 2, -cepstrum[i].imag * 2)
        }
        folded[half] = Complex(cepstrum[half].real, -cepstrum[half].imag)
        for i in (half + 1)..<size {
            folded[i] = .zero
        }
    }

    private func exponentiate() {
        let output = toSpectrum.output
        let scale = 1.0 / Double(size)
        for i in 0...(size / 2) {
            let magnitude = exp(output[i].real * scale)
            let phase = output[i].imag * scale
            output[i] = Complex(magnitude * cos(phase), magnitude * sin(phase))
        }
    }
}
