import Glibc
import KoeDSP

extension Harvest {
    /// Single bins of forward DFTs (FFTW's sign and scale) of zero-padded power-of-two sizes, from one table
    /// of `exp(-2πi m / size)` for the largest size seen. Bins are summed three at a time in one pass over the
    /// samples: each bin's sums still run sample by sample (so the values are those of one bin at a time), but
    /// the three bins' additions no longer wait on one another.
    final class SingleBinDFT {
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
                // The bin modulo the power-of-two size, negative bins wrapping round: its low bits.
                return (bin & (size - 1)) * step
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
                indexA = (indexA &+ strides.0) & mask
                indexB = (indexB &+ strides.1) & mask
                indexC = (indexC &+ strides.2) & mask
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
                index = (index &+ stride) & mask
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
}
