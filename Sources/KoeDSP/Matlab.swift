import Glibc

/// Numerical helpers that behave exactly as the MATLAB functions WORLD was written against,
/// edge cases included, so ports agree with the reference number for number.
///
/// `@usableFromInline` only so `round` is inlined into KoeWorld's loops (an `@inlinable` member of a plain
/// package type stays a call in another module).
@usableFromInline
package enum Matlab {
    /// MATLAB's `round`: halves away from zero.
    @inlinable
    package static func round(_ x: Double) -> Int {
        x > 0 ? Int(x + 0.5) : Int(x - 0.5)
    }

    /// Linear interpolation of (`x`, `y`) at `xi`; `x` must be increasing. Points outside `x`
    /// extrapolate from the nearest segment, as WORLD's `interp1` does.
    static func interp1(x: [Double], y: [Double], at xi: [Double]) -> [Double] {
        var result = [Double](repeating: 0, count: xi.count)
        x.withUnsafeBufferPointer { xs in
            y.withUnsafeBufferPointer { ys in
                xi.withUnsafeBufferPointer { queries in
                    result.withUnsafeMutableBufferPointer { output in
                        interp1(x: xs, y: ys, at: queries, into: output)
                    }
                }
            }
        }
        return result
    }

    /// `interp1` into a caller-owned buffer, for loops that must not allocate.
    package static func interp1(
        x: UnsafeBufferPointer<Double>, y: UnsafeBufferPointer<Double>,
        at xi: UnsafeBufferPointer<Double>, into yi: UnsafeMutableBufferPointer<Double>
    ) {
        precondition(x.count >= 2 && y.count == x.count && yi.count == xi.count)
        // Queries at or below the first point extrapolate from the first segment.
        var index = 0
        while index < xi.count, x[0] >= xi[index] {
            index += 1
        }
        lerp(x: x, y: y, segment: 1, at: xi, into: yi, queries: 0..<index)
        var segment = 1
        while index < xi.count {
            while segment < x.count - 1, x[segment] <= xi[index] {
                segment += 1
            }
            // The queries from here below the segment's end (all that remain, in the last segment) fall in it.
            let end = segment < x.count - 1 ? x[segment] : .infinity
            var groupEnd = index + 1
            while groupEnd < xi.count, xi[groupEnd] < end {
                groupEnd += 1
            }
            lerp(x: x, y: y, segment: segment, at: xi, into: yi, queries: index..<groupEnd)
            index = groupEnd
        }
    }

    /// WORLD's interpolation `y[k-1] + (xi - x[k-1]) / (x[k] - x[k-1]) * (y[k] - y[k-1])` on segment `k` for
    /// the queries in `queries`, four at a time: the same operations, lane by lane.
    @inline(__always)
    private static func lerp(
        x: UnsafeBufferPointer<Double>, y: UnsafeBufferPointer<Double>, segment: Int,
        at xi: UnsafeBufferPointer<Double>, into yi: UnsafeMutableBufferPointer<Double>, queries: Range<Int>
    ) {
        let start = x[segment - 1]
        let width = x[segment] - x[segment - 1]
        let base = y[segment - 1]
        let rise = y[segment] - y[segment - 1]
        var index = queries.lowerBound
        while index + 4 <= queries.upperBound {
            let values = UnsafeRawPointer(xi.baseAddress! + index).loadUnaligned(as: SIMD4<Double>.self)
            let results = base + (values - start) / width * rise
            UnsafeMutableRawPointer(yi.baseAddress! + index).storeBytes(of: results, as: SIMD4<Double>.self)
            index += 4
        }
        while index < queries.upperBound {
            yi[index] = base + (xi[index] - start) / width * rise
            index += 1
        }
    }

    /// Linear interpolation of `y`, sampled on the uniform axis `origin + k * step`, at `xi`.
    /// Like WORLD's `interp1Q`, no bounds are checked beyond the last sample (whose slope is zero):
    /// callers guarantee `xi` lies inside the axis.
    package static func interp1Q(
        origin: Double, step: Double, y: UnsafeBufferPointer<Double>,
        at xi: UnsafeBufferPointer<Double>, into yi: UnsafeMutableBufferPointer<Double>
    ) {
        let last = y.count - 1
        for i in 0..<xi.count {
            let position = (xi[i] - origin) / step
            let base = Int(position)
            let fraction = position - Double(base)
            let slope = base < last ? y[base + 1] - y[base] : 0
            yi[i] = y[base] + slope * fraction
        }
    }

    /// Array form of `interp1Q`.
    static func interp1Q(origin: Double, step: Double, y: [Double], at xi: [Double]) -> [Double] {
        var result = [Double](repeating: 0, count: xi.count)
        y.withUnsafeBufferPointer { ys in
            xi.withUnsafeBufferPointer { queries in
                result.withUnsafeMutableBufferPointer { output in
                    interp1Q(origin: origin, step: step, y: ys, at: queries, into: output)
                }
            }
        }
        return result
    }

    /// Samples of odd-symmetric padding `decimate` adds at each end so its zero-phase filter starts settled.
    package static let decimationPadding = 9

    /// Downsample by `factor` after zero-phase low-pass filtering (forward and backward through WORLD's
    /// third-order IIR, with odd-symmetric padding), returning the first `count` samples WORLD's `decimate`
    /// writes and zeros after them. Output sample `k` is input sample `start - 1 + k * factor`, MATLAB's
    /// alignment; like WORLD, the sweep runs `padding` samples past the end, and callers that size their
    /// buffer one sample longer than MATLAB's output (DIO) read that extra filtered sample.
    /// Factors WORLD has no filter for (1, or above 12) use a null filter there; this keeps that behaviour.
    package static func decimate(_ x: [Double], factor: Int, count: Int) -> [Double] {
        let padding = decimationPadding
        let length = x.count
        precondition(length > padding + 1, "signal too short to decimate")
        var padded = [Double](repeating: 0, count: length + 2 * padding)
        for i in 0..<padding {
            padded[i] = 2 * x[0] - x[padding - i]
            padded[padding + length + i] = 2 * x[length - 1] - x[length - 2 - i]
        }
        for i in 0..<length {
            padded[padding + i] = x[i]
        }
        let filter = DecimationFilter(factor: factor)
        filter.apply(&padded)
        padded.reverse()
        filter.apply(&padded)
        padded.reverse()

        var result = [Double](repeating: 0, count: count)
        let outputCount = (length - 1) / factor + 1
        var source = factor - factor * outputCount + length
        var index = 0
        while source < length + padding, index < count {
            result[index] = padded[source + padding - 1]
            source += factor
            index += 1
        }
        return result
    }

    /// Smallest power of two strictly greater than `length` (WORLD's `GetSuitableFFTSize`).
    package static func suitableFFTSize(_ length: Int) -> Int {
        1 << (Int(log(Double(length)) / log(2.0)) + 1)
    }
}

/// The low-pass IIR WORLD uses before decimation, designed for each integer factor up to 12.
private struct DecimationFilter {
    let feedback: (Double, Double, Double)
    let feedforward: (Double, Double)

    init(factor: Int) {
        switch factor {
        case 12:
            feedback = (2.4981398605924205, -2.1368928194784025, 0.62187513816221485)
            feedforward = (0.0021097275904709001, 0.0063291827714127002)
        case 11:
            feedback = (2.450743295230728, -2.06794904601978, 0.59574774438332101)
            feedforward = (0.0026822508007163792, 0.0080467524021491377)
        case 10:
            feedback = (2.3936475118069387, -1.9873904075111861, 0.5658879979027055)
            feedforward = (0.0034818622251927556, 0.010445586675578267)
        case 9:
            feedback = (2.3236003491759578, -1.8921545617463598, 0.53148928133729068)
            feedforward = (0.0046331164041389372, 0.013899349212416812)
        case 8:
            feedback = (2.2357462340187593, -1.7780899984041358, 0.49152555365968692)
            feedforward = (0.0063522763407111993, 0.019056829022133598)
        case 7:
            feedback = (2.1225239019534703, -1.6395144861046302, 0.44469707800587366)
            feedforward = (0.0090366882681608418, 0.027110064804482525)
        case 6:
            feedback = (1.9715352749512141, -1.4686795689225347, 0.3893908434965701)
            feedforward = (0.013469181309343825, 0.040407543928031475)
        case 5:
            feedback = (1.7610939654280557, -1.2554914843859768, 0.3237186507788215)
            feedforward = (0.021334858522387423, 0.06400457556716227)
        case 4:
            feedback = (1.4499664446880227, -0.98943497080950582, 0.24578252340690215)
            feedforward = (0.036710750339322612, 0.11013225101796784)
        case 3:
            feedback = (0.95039378983237421, -0.67429146741526791, 0.15412211621346475)
            feedforward = (0.071221945171178636, 0.21366583551353591)
        case 2:
            feedback = (0.041156734567757189, -0.42599112459189636, 0.041037215479961225)
            feedforward = (0.16797464681802227, 0.50392394045406674)
        default:
            feedback = (0, 0, 0)
            feedforward = (0, 0)
        }
    }

    /// Runs the filter in place, in WORLD's direct form and order of operations.
    func apply(_ x: inout [Double]) {
        let a = feedback
        let b = feedforward
        var w = (0.0, 0.0, 0.0)
        for i in x.indices {
            let next = x[i] + a.0 * w.0 + a.1 * w.1 + a.2 * w.2
            x[i] = b.0 * next + b.1 * w.0 + b.1 * w.1 + b.0 * w.2
            w = (next, w.0, w.1)
        }
    }
}
