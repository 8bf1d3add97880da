/// Minimum-phase spectrum from a power spectrum, through the real cepstrum of its log amplitude:
/// fold the cepstrum onto positive quefrencies, transform back, exponentiate.
package final class MinimumPhase {
    let size: Int
    /// Input: the power for bins `0 ... size / 2`, every value positive. `execute()` turns it into the log
    /// amplitude (half the power's logarithm) in place and mirrors the upper half.
    package let powerSpectrum: UnsafeMutableBufferPointer<Double>
    /// Output: the minimum-phase spectrum for bins `0 ... size / 2`.
    package var spectrum: UnsafeMutableBufferPointer<Complex> { toSpectrum.spectrum }

    private let toCepstrum: ForwardRealFFT
    private let toSpectrum: ForwardRealFFT

    package init(size: Int) {
        self.size = size
        toCepstrum = ForwardRealFFT(size: size)
        toSpectrum = ForwardRealFFT(size: size)
        powerSpectrum = toCepstrum.waveform
    }

    package func execute() {
        let half = size / 2
        let logSpectrum = powerSpectrum
        VectorMath.logarithms(UnsafeMutableBufferPointer(rebasing: logSpectrum[0...half]), scale: 0.5)
        for i in (half + 1)..<size {
            logSpectrum[i] = logSpectrum[size - i]
        }
        toCepstrum.execute()
        foldCepstrum()
        toSpectrum.execute()
        exponentiate()
    }

    /// The log spectrum is real and even, so its cepstrum is real (the imaginary parts FFTW returns are
    /// rounding); doubling positive quefrencies and zeroing negative ones makes it causal. Negative
    /// quefrencies stay zero from the start, since the forward transform keeps its input.
    private func foldCepstrum() {
        let half = size / 2
        let cepstrum = toCepstrum.spectrum
        let folded = toSpectrum.waveform
        folded[0] = cepstrum[0].real
        for i in 1..<max(half, 1) {
            folded[i] = cepstrum[i].real * 2
        }
        folded[half] = cepstrum[half].real
    }

    private func exponentiate() {
        let bins = UnsafeMutableBufferPointer(rebasing: toSpectrum.spectrum[0...(size / 2)])
        VectorMath.exponentiate(bins, scale: 1.0 / Double(size))
    }
}
