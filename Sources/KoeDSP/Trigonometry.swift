import Glibc

/// Cosines and sines along an arithmetic progression of angles, the shape every WORLD window and
/// lifter takes, at a fraction of the cost of one libm call per value.
///
/// Angle `start + k * step` is split as `(start + a * block * step) + j * step`, with `k = a * block + j`;
/// both parts come from `VectorMath.sinCos`, eight at a time, and the angle-sum identity joins them. Each value
/// is off the direct libm value by a unit or two in the last place (absolute), with no error accumulating along
/// the progression.
package enum Trigonometry {
    /// `cosines[k] = cos(start + k * step)` for every `k` in `cosines.indices`.
    package static func cosines(start: Double = 0, step: Double, into cosines: UnsafeMutableBufferPointer<Double>) {
        progression(start: start, step: step, count: cosines.count, cosines: cosines.baseAddress, sines: nil)
    }

    /// `sines[k] = sin(start + k * step)` for every `k` in `sines.indices`.
    package static func sines(start: Double = 0, step: Double, into sines: UnsafeMutableBufferPointer<Double>) {
        progression(start: start, step: step, count: sines.count, cosines: nil, sines: sines.baseAddress)
    }

    /// Both at once; `cosines` and `sines` must have the same length.
    static func cosinesAndSines(
        start: Double = 0, step: Double,
        into cosines: UnsafeMutableBufferPointer<Double>, _ sines: UnsafeMutableBufferPointer<Double>
    ) {
        precondition(cosines.count == sines.count, "cosines and sines must have the same length")
        progression(start: start, step: step, count: cosines.count, cosines: cosines.baseAddress, sines: sines.baseAddress)
    }

    /// The offset half of a progression of `count` angles `step` apart, made once and reused for any start
    /// (windows of one length at many positions).
    package struct Progression: Sendable {
        let step: Double
        let count: Int
        private let offsetCosines: [Double]
        private let offsetSines: [Double]

        package init(step: Double, count: Int) {
            precondition(count > 0, "a progression needs at least one angle")
            self.step = step
            self.count = count
            let block = blockLength(count)
            var offsetCosines = [Double](repeating: 0, count: block)
            var offsetSines = [Double](repeating: 0, count: block)
            Trigonometry.offsets(step: step, count: block, cosines: &offsetCosines, sines: &offsetSines)
            self.offsetCosines = offsetCosines
            self.offsetSines = offsetSines
        }

        /// `cosines[k] = cos(start + k * step)` for `k < count`; `cosines` holds `count` values.
        package func cosines(start: Double, into cosines: UnsafeMutableBufferPointer<Double>) {
            precondition(cosines.count == count, "the output must hold the progression's count")
            offsetCosines.withUnsafeBufferPointer { offsetCosines in
                offsetSines.withUnsafeBufferPointer { offsetSines in
                    Trigonometry.join(
                        start: start, step: step, count: count, offsetCosines: offsetCosines.baseAddress!,
                        offsetSines: offsetSines.baseAddress!, block: offsetCosines.count,
                        cosines: cosines.baseAddress, sines: nil)
                }
            }
        }
    }

    private static func progression(
        start: Double, step: Double, count: Int,
        cosines: UnsafeMutablePointer<Double>?, sines: UnsafeMutablePointer<Double>?
    ) {
        guard count > 0 else { return }
        let block = blockLength(count)
        withUnsafeTemporaryAllocation(of: Double.self, capacity: 2 * block) { table in
            let offsetCosines = table.baseAddress!
            let offsetSines = offsetCosines + block
            offsets(step: step, count: block, cosines: offsetCosines, sines: offsetSines)
            join(
                start: start, step: step, count: count, offsetCosines: offsetCosines, offsetSines: offsetSines,
                block: block, cosines: cosines, sines: sines)
        }
    }

    /// `cos(j * step)` and `sin(j * step)` for `j < count`, eight at a time.
    private static func offsets(
        step: Double, count: Int, cosines: UnsafeMutablePointer<Double>, sines: UnsafeMutablePointer<Double>
    ) {
        var first = 0
        while first < count {
            var angles = VectorMath.Lanes(repeating: 0)
            let lanes = min(angles.scalarCount, count - first)
            for lane in 0..<lanes {
                angles[lane] = Double(first + lane) * step
            }
            let (laneSines, laneCosines) = VectorMath.sinCos(angles)
            for lane in 0..<lanes {
                cosines[first + lane] = laneCosines[lane]
                sines[first + lane] = laneSines[lane]
            }
            first += lanes
        }
    }

    /// Anchors every `block` angles, eight at a time, joined with the offsets by the angle-sum identity.
    private static func join(
        start: Double, step: Double, count: Int,
        offsetCosines: UnsafePointer<Double>, offsetSines: UnsafePointer<Double>, block: Int,
        cosines: UnsafeMutablePointer<Double>?, sines: UnsafeMutablePointer<Double>?
    ) {
        var blockStart = 0
        var anchorSines = VectorMath.Lanes(repeating: 0)
        var anchorCosines = VectorMath.Lanes(repeating: 0)
        var anchor = anchorSines.scalarCount
        while blockStart < count {
            if anchor == anchorSines.scalarCount {
                var angles = VectorMath.Lanes(repeating: 0)
                for lane in 0..<angles.scalarCount {
                    angles[lane] = start + Double(blockStart + lane * block) * step
                }
                (anchorSines, anchorCosines) = VectorMath.sinCos(angles)
                anchor = 0
            }
            let anchorCosine = anchorCosines[anchor]
            let anchorSine = anchorSines[anchor]
            anchor += 1
            let length = min(block, count - blockStart)
            if let cosines {
                let output = cosines + blockStart
                for j in 0..<length {
                    output[j] = anchorCosine * offsetCosines[j] - anchorSine * offsetSines[j]
                }
            }
            if let sines {
                let output = sines + blockStart
                for j in 0..<length {
                    output[j] = anchorSine * offsetCosines[j] + anchorCosine * offsetSines[j]
                }
            }
            blockStart += length
        }
    }

    /// Values per block: about the square root of the count, which balances the two sets of libm calls.
    private static func blockLength(_ count: Int) -> Int {
        count <= 64 ? min(8, count) : count <= 256 ? 16 : 32
    }
}
