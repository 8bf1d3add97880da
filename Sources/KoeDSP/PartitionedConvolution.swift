/// One stream convolved with several fixed kernels a block at a time, by uniformly partitioned overlap-save.
///
/// Each kernel is cut into parts of `blockLength` taps. A block's output is the inverse transform of the sum,
/// over the parts, of each part's spectrum times the spectrum of the input as many blocks ago as the part is
/// deep; transforms are twice the block long, and the latest input spectra are kept in a delay line. One
/// forward FFT a block serves every kernel, and each kernel needs one inverse FFT: when blocks are short
/// against the kernels, far less work than one transform over a whole kernel a block. The result is the linear
/// convolution of the input (zero before its first sample) with each kernel, to rounding.
package final class PartitionedConvolution {
    let blockLength: Int
    private let forward: ForwardRealFFT
    private let inverse: InverseRealFFT
    private let binCount: Int
    /// Bins stored a spectrum: `binCount` rounded up to whole vectors, the rest zero.
    private let binStride: Int
    /// All kernels' parts' spectra one after another, `binStride` bins each, scaled to undo the unnormalised
    /// inverse FFT: real and imaginary parts apart, which the products' loop runs through in vector registers.
    private let kernelReal: UnsafeMutableBufferPointer<Double>
    private let kernelImag: UnsafeMutableBufferPointer<Double>
    /// Per kernel, the index of its first part's first bin, and its parts.
    private let kernelStarts: [Int]
    private let partCounts: [Int]
    /// The latest input spectra, one a block, a ring of `slotCount` slots of `binStride` bins; the newest in
    /// `newest`.
    private let inputReal: UnsafeMutableBufferPointer<Double>
    private let inputImag: UnsafeMutableBufferPointer<Double>
    private let slotCount: Int
    private var newest = 0
    /// The sum of a kernel's products.
    private let sumReal: UnsafeMutableBufferPointer<Double>
    private let sumImag: UnsafeMutableBufferPointer<Double>

    /// `kernels[k][j]` weighs the input sample `j` before the output's. Each kernel needs at least one tap.
    package init(kernels: [[Double]], blockLength: Int) {
        precondition(blockLength > 0 && kernels.allSatisfy { !$0.isEmpty }, "blocks and kernels need a sample")
        self.blockLength = blockLength
        let size = 2 * blockLength
        forward = ForwardRealFFT(size: size)
        inverse = InverseRealFFT(size: size)
        binCount = blockLength + 1
        binStride = (binCount + Lanes.scalarCount - 1) / Lanes.scalarCount * Lanes.scalarCount
        partCounts = kernels.map { ($0.count + blockLength - 1) / blockLength }
        slotCount = partCounts.max() ?? 1
        inputReal = .allocate(capacity: slotCount * binStride)
        inputImag = .allocate(capacity: slotCount * binStride)
        inputReal.initialize(repeating: 0)
        inputImag.initialize(repeating: 0)
        sumReal = .allocate(capacity: binStride)
        sumImag = .allocate(capacity: binStride)
        var starts: [Int] = []
        var bins = 0
        for parts in partCounts {
            starts.append(bins)
            bins += parts * binStride
        }
        kernelStarts = starts
        kernelReal = .allocate(capacity: bins)
        kernelImag = .allocate(capacity: bins)
        kernelReal.initialize(repeating: 0)
        kernelImag.initialize(repeating: 0)
        let scale = 1.0 / Double(size)
        for (kernel, start) in zip(kernels, starts) {
            for part in 0..<((kernel.count + blockLength - 1) / blockLength) {
                for i in 0..<size {
                    let tap = part * blockLength + i
                    forward.waveform[i] = i < blockLength && tap < kernel.count ? kernel[tap] * scale : 0
                }
                forward.execute()
                for bin in 0..<binCount {
                    kernelReal[start + part * binStride + bin] = forward.spectrum[bin].real
                    kernelImag[start + part * binStride + bin] = forward.spectrum[bin].imag
                }
            }
        }
        forward.waveform.update(repeating: 0)
    }

    deinit {
        for buffer in [kernelReal, kernelImag, inputReal, inputImag, sumReal, sumImag] {
            buffer.deallocate()
        }
    }

    /// Takes the next `blockLength` input samples.
    package func push(_ block: UnsafeBufferPointer<Double>) {
        precondition(block.count == blockLength, "a push takes one block")
        let waveform = forward.waveform
        for i in 0..<blockLength {
            waveform[i] = waveform[blockLength + i]
            waveform[blockLength + i] = block[i]
        }
        forward.execute()
        newest = (newest + 1) % slotCount
        let slot = newest * binStride
        for bin in 0..<binCount {
            inputReal[slot + bin] = forward.spectrum[bin].real
            inputImag[slot + bin] = forward.spectrum[bin].imag
        }
    }

    /// The latest block's output under kernel `kernel`: sample i is the convolution at the block's sample i.
    /// Valid until the next call.
    package func output(ofKernel kernel: Int) -> UnsafeMutableBufferPointer<Double> {
        sumProducts(ofKernel: kernel)
        for bin in 0..<binCount {
            inverse.spectrum[bin] = Complex(sumReal[bin], sumImag[bin])
        }
        inverse.execute()
        return UnsafeMutableBufferPointer(rebasing: inverse.waveform[blockLength...])
    }

    private typealias Lanes = SIMD8<Double>

    /// Into `sumReal` and `sumImag`, bin by bin, the sum over the kernel's parts of each part's spectrum times
    /// the input spectrum as many blocks old: eight bins at a time, each sum kept in registers over the parts.
    private func sumProducts(ofKernel kernel: Int) {
        func load(_ pointer: UnsafeMutablePointer<Double>, _ index: Int) -> Lanes {
            UnsafeRawPointer(pointer + index).loadUnaligned(as: Lanes.self)
        }
        let xReal = inputReal.baseAddress!, xImag = inputImag.baseAddress!
        let hReal = kernelReal.baseAddress! + kernelStarts[kernel]
        let hImag = kernelImag.baseAddress! + kernelStarts[kernel]
        for chunk in stride(from: 0, to: binStride, by: Lanes.scalarCount) {
            var real = Lanes(), imag = Lanes()
            var slot = newest
            for part in 0..<partCounts[kernel] {
                let x = slot * binStride + chunk, h = part * binStride + chunk
                let xr = load(xReal, x), xi = load(xImag, x), hr = load(hReal, h), hi = load(hImag, h)
                real += xr * hr - xi * hi
                imag += xr * hi + xi * hr
                slot = slot == 0 ? slotCount - 1 : slot - 1
            }
            UnsafeMutableRawPointer(sumReal.baseAddress! + chunk).storeBytes(of: real, as: Lanes.self)
            UnsafeMutableRawPointer(sumImag.baseAddress! + chunk).storeBytes(of: imag, as: Lanes.self)
        }
    }
}
