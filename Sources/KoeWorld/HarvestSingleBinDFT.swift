import Glibc
import KoeDSP

extension Harvest {
    /// Single bins of forward DFTs (FFTW's sign and scale) of zero-padded power-of-two sizes, from one table
    /// of `exp(-2πi m / size)` for the largest size seen. Bins are summed six at a time in one pass over the
    /// samples: each bin's sums still run sample by sample (so the values are those of one bin at a time), but
    /// the bins' additions no longer wait on one another, and six keep both an AVX2 CPU's adders busy.
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
                var first = 0
                while first < bins.count {
                    if first == bins.count - 1 {
                        store(oneBin(stride: tableStride(first), of: pairs, table: table), at: first)
                        break
                    }
                    // A short group repeats its last bin: still faster than narrower passes.
                    let sums = sixBins(
                        strides: (
                            tableStride(first), tableStride(first + 1), tableStride(first + 2),
                            tableStride(first + 3), tableStride(first + 4), tableStride(first + 5)
                        ),
                        of: pairs, table: table)
                    store(sums.0, at: first)
                    store(sums.1, at: first + 1)
                    store(sums.2, at: first + 2)
                    store(sums.3, at: first + 3)
                    store(sums.4, at: first + 4)
                    store(sums.5, at: first + 5)
                    first += 6
                }
            }
        }

        /// Sums `(pair.main, pair.derivative, pair.main, pair.derivative) * (cos, cos, sin, sin)` over the
        /// samples, for six bins given by their strides through the table. The table is walked by byte offsets,
        /// wrapped with a mask, so that a bin's step costs two integer operations: with six bins, the index
        /// arithmetic and not the multiplications would otherwise set the pace.
        @inline(__always)
        private func sixBins(
            strides: (Int, Int, Int, Int, Int, Int), of pairs: UnsafeBufferPointer<SIMD2<Double>>,
            table: UnsafeBufferPointer<SIMD4<Double>>
        ) -> (SIMD4<Double>, SIMD4<Double>, SIMD4<Double>, SIMD4<Double>, SIMD4<Double>, SIMD4<Double>) {
            let entry = MemoryLayout<SIMD4<Double>>.stride
            let mask = (size - 1) * entry
            let steps = (
                strides.0 * entry, strides.1 * entry, strides.2 * entry,
                strides.3 * entry, strides.4 * entry, strides.5 * entry
            )
            let base = UnsafeRawPointer(table.baseAddress!)
            var sums = (
                SIMD4<Double>(repeating: 0), SIMD4<Double>(repeating: 0), SIMD4<Double>(repeating: 0),
                SIMD4<Double>(repeating: 0), SIMD4<Double>(repeating: 0), SIMD4<Double>(repeating: 0)
            )
            var offsets = (0, 0, 0, 0, 0, 0)
            for n in 0..<pairs.count {
                let pair = pairs[n]
                let twice = SIMD4(lowHalf: pair, highHalf: pair)
                sums.0 += twice * base.loadUnaligned(fromByteOffset: offsets.0, as: SIMD4<Double>.self)
                sums.1 += twice * base.loadUnaligned(fromByteOffset: offsets.1, as: SIMD4<Double>.self)
                sums.2 += twice * base.loadUnaligned(fromByteOffset: offsets.2, as: SIMD4<Double>.self)
                sums.3 += twice * base.loadUnaligned(fromByteOffset: offsets.3, as: SIMD4<Double>.self)
                sums.4 += twice * base.loadUnaligned(fromByteOffset: offsets.4, as: SIMD4<Double>.self)
                sums.5 += twice * base.loadUnaligned(fromByteOffset: offsets.5, as: SIMD4<Double>.self)
                offsets.0 = (offsets.0 &+ steps.0) & mask
                offsets.1 = (offsets.1 &+ steps.1) & mask
                offsets.2 = (offsets.2 &+ steps.2) & mask
                offsets.3 = (offsets.3 &+ steps.3) & mask
                offsets.4 = (offsets.4 &+ steps.4) & mask
                offsets.5 = (offsets.5 &+ steps.5) & mask
            }
            return sums
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
