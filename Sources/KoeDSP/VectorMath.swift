import Glibc
#if canImport(CAVX512)
import CAVX512
import _Builtin_intrinsics.intel
#elseif canImport(CAVX2)
import CAVX2
import _Builtin_intrinsics.intel
#endif

/// Exponentials, real and complex, and logarithms, eight values at a time in SIMD registers (one AVX-512
/// register, two AVX ones), and sums over whole buffers, four at a time, where libm takes one call for each
/// exp, log, cos and sin. The kernels are fdlibm's (Sun's freely distributable libm): the same argument
/// reductions and polynomials, written for vectors. Results are within about one unit in the last place of
/// libm's; arguments outside the ranges the kernels handle (huge, infinite, NaN, zero, negative, subnormal) go
/// to libm itself. Also the zero-crossing tests Harvest's and DIO's event searches run eight samples at a time.
package enum VectorMath {
    /// The values the kernels take at a time. (Four, one AVX register, measured slower on AVX2 than eight in two.)
    typealias Lanes = SIMD8<Double>
    fileprivate typealias LaneBits = SIMD8<Int64>

    /// `values[i] = exp(scale * real) * (cos(scale * imag), sin(scale * imag))` for each complex value:
    /// a spectrum of log amplitude and phase turned into amplitude and phase.
    static func exponentiate(_ values: UnsafeMutableBufferPointer<Complex>, scale: Double) {
        inLaneRuns(values) { exponentiate($0, count: $1, scale: scale) }
    }

    /// Where a signal and its slope cross zero at the eight indices `i` from `first`, as the bits of one number, a
    /// kind a byte, bit `i` within it: falling (`x[i] > 0 >= x[i + 1]`), rising (`x[i] < 0 <= x[i + 1]`), then the
    /// same of the slope `x[i + 1] - x[i]` (peaks, dips). Reads `x[first]` to `x[first + 9]`.
    package static func crossingBits(_ first: UnsafePointer<Double>) -> Int {
        func load(_ offset: Int) -> Lanes { UnsafeRawPointer(first + offset).loadUnaligned(as: Lanes.self) }
        let zero = Lanes(repeating: 0)
        let (here, next, after) = (load(0), load(1), load(2))
        let (slope, nextSlope) = (next - here, after - next)
        return bits((here .> zero) .& (next .<= zero)) | bits((here .< zero) .& (next .>= zero)) << 8
            | bits((slope .> zero) .& (nextSlope .<= zero)) << 16 | bits((slope .< zero) .& (nextSlope .>= zero)) << 24
    }

    /// DIO's four kinds of event ending at the eight samples `i` from `first`, of a signal less `offset`, as the
    /// bits of one number laid out as `crossingBits`'s: a zero crossing from the sample before, a turn of the
    /// slope (`x[i] - x[i - 1]`) from the slope before. Reads `x[first - 2]` to `x[first + 7]`.
    package static func eventBits(endingAt first: UnsafePointer<Double>, less offset: Double) -> Int {
        let shift = Lanes(repeating: offset)
        func load(_ index: Int) -> Lanes {
            UnsafeRawPointer(first + index).loadUnaligned(as: Lanes.self) - shift
        }
        let zero = Lanes(repeating: 0)
        let (twoBefore, before, current) = (load(-2), load(-1), load(0))
        let (earlier, later) = (before - twoBefore, current - before)
        return bits((before .> zero) .& (current .<= zero)) | bits((before .< zero) .& (current .>= zero)) << 8
            | bits((earlier .> zero) .& (later .<= zero)) << 16 | bits((earlier .< zero) .& (later .>= zero)) << 24
    }

    /// Whether any of the eight values from `first` is at least `bound`.
    @inline(__always)
    package static func anyAtLeast(_ bound: Double, from first: UnsafePointer<Double>) -> Bool {
        bits(UnsafeRawPointer(first).loadUnaligned(as: Lanes.self) .>= Lanes(repeating: bound)) != 0
    }

    /// Lane `k` of `mask` as bit `k` of the result: AVX-512's mask test or AVX's sign-bit move where the code
    /// is compiled for them (the generic form, lanes masked and summed, takes AVX2 five times the instructions).
    @inline(__always)
    private static func bits(_ mask: SIMDMask<LaneBits>) -> Int {
        let lanes = unsafeBitCast(mask, to: LaneBits.self)
        #if canImport(CAVX512)
        return Int(_mm512_test_epi64_mask(lanes, lanes))
        #elseif canImport(CAVX2)
        let low = _mm256_movemask_pd(unsafeBitCast(lanes.lowHalf, to: __m256d.self))
        let high = _mm256_movemask_pd(unsafeBitCast(lanes.highHalf, to: __m256d.self))
        return Int(low) | Int(high) << 4
        #else
        return Int((lanes & LaneBits(1, 2, 4, 8, 16, 32, 64, 128)).wrappedSum())
        #endif
    }

    /// `values[i] = exp(scale * values[i])` for each value.
    package static func exponentials(_ values: UnsafeMutableBufferPointer<Double>, scale: Double) {
        inLaneRuns(values) { exponentials($0, count: $1, scale: scale) }
    }

    /// `values[i] = scale * log(values[i])` for each value.
    package static func logarithms(_ values: UnsafeMutableBufferPointer<Double>, scale: Double) {
        inLaneRuns(values) { logarithms($0, count: $1, scale: scale) }
    }

    /// `body(start, count)` on each whole vector of `values` (`count` the constant `Lanes.scalarCount`, so
    /// that its lane loops unroll), then on the shorter rest.
    @inline(__always)
    private static func inLaneRuns<Element>(
        _ values: UnsafeMutableBufferPointer<Element>, _ body: (UnsafeMutablePointer<Element>, Int) -> Void
    ) {
        guard let base = values.baseAddress else { return }
        var index = 0
        while index + Lanes.scalarCount <= values.count {
            body(base + index, Lanes.scalarCount)
            index += Lanes.scalarCount
        }
        if index < values.count {
            body(base + index, values.count - index)
        }
    }

    @inline(__always)
    private static func logarithms(_ values: UnsafeMutablePointer<Double>, count: Int, scale: Double) {
        var x = Lanes(repeating: 1)
        for lane in 0..<count {
            x[lane] = values[lane]
        }
        let inRange = (x .>= .leastNormalMagnitude) .& (x .<= .greatestFiniteMagnitude)
        let result = all(inRange) ? logKernel(x) : x.lanewise(Glibc.log)
        for lane in 0..<count {
            values[lane] = result[lane] * scale
        }
    }

    @inline(__always)
    private static func exponentials(_ values: UnsafeMutablePointer<Double>, count: Int, scale: Double) {
        var x = Lanes(repeating: 0)
        for lane in 0..<count {
            x[lane] = values[lane] * scale
        }
        let result = all(x.magnitude .<= 700) ? expKernel(x) : x.lanewise(Glibc.exp)
        for lane in 0..<count {
            values[lane] = result[lane]
        }
    }

    /// The sum of `values`, in four interleaved running sums so that no addition waits for the one before
    /// (a left-to-right sum is bound by the adder's latency); the result differs from it only in rounding.
    package static func sum(_ values: UnsafeBufferPointer<Double>) -> Double {
        sum(values.count) { values[$0] }
    }

    /// The sum of the squares of `values`, as `sum` adds.
    package static func sumOfSquares(_ values: UnsafeBufferPointer<Double>) -> Double {
        sum(values.count) { values[$0] * values[$0] }
    }

    @inline(__always)
    private static func sum(_ count: Int, _ term: (Int) -> Double) -> Double {
        var partial = SIMD4<Double>()
        var index = 0
        while index + 4 <= count {
            partial += SIMD4(term(index), term(index + 1), term(index + 2), term(index + 3))
            index += 4
        }
        var total = (partial[0] + partial[1]) + (partial[2] + partial[3])
        while index < count {
            total += term(index)
            index += 1
        }
        return total
    }

    /// Up to a vector of values; with `count` the constant `Lanes.scalarCount` the lane loops unroll.
    @inline(__always)
    private static func exponentiate(_ values: UnsafeMutablePointer<Complex>, count: Int, scale: Double) {
        var real = Lanes(repeating: 0)
        var imag = Lanes(repeating: 0)
        for lane in 0..<count {
            real[lane] = values[lane].real * scale
            imag[lane] = values[lane].imag * scale
        }
        let magnitude = all(real.magnitude .<= 700) ? expKernel(real) : real.lanewise(Glibc.exp)
        let (sine, cosine) = sinCos(imag)
        let re = magnitude * cosine
        let im = magnitude * sine
        for lane in 0..<count {
            values[lane] = Complex(re[lane], im[lane])
        }
    }

    /// Sine and cosine of each lane.
    @inline(__always)
    static func sinCos(_ x: Lanes) -> (sin: Lanes, cos: Lanes) {
        guard all(x.magnitude .<= 100_000) else {
            return (x.lanewise(Glibc.sin), x.lanewise(Glibc.cos))
        }
        return sinCosKernel(x)
    }

    // MARK: Kernels

    /// 1.5 × 2⁵², added to a double below 2⁵¹ in magnitude, rounds it to an integer held in the low
    /// mantissa bits.
    private static let roundingShifter = 6_755_399_441_055_744.0
    /// ln 2 split so that `k * ln2High` is exact for any exponent `k`.
    private static let ln2High = 6.93147180369123816490e-01
    private static let ln2Low = 1.90821492927058770002e-10

    /// exp(x) for |x| ≤ 700: x = k ln 2 + r with |r| ≤ ln 2 / 2, exp(r) by its Taylor series to r¹³
    /// (truncation below 2⁻⁵⁶ there), times 2ᵏ built from its bits.
    @inline(__always)
    private static func expKernel(_ x: Lanes) -> Lanes {
        let shifted = x * 1.44269504088896338700e+00 + roundingShifter
        let k = shifted - roundingShifter
        let r = (x - k * ln2High) - k * ln2Low
        var q = Lanes(repeating: 1.0 / 6_227_020_800)
        q = q * r + 1.0 / 479_001_600
        q = q * r + 1.0 / 39_916_800
        q = q * r + 1.0 / 3_628_800
        q = q * r + 1.0 / 362_880
        q = q * r + 1.0 / 40_320
        q = q * r + 1.0 / 5_040
        q = q * r + 1.0 / 720
        q = q * r + 1.0 / 120
        q = q * r + 1.0 / 24
        q = q * r + 1.0 / 6
        q = q * r + 0.5
        let expR = 1.0 + (r + r * r * q)
        let exponent = unsafeBitCast(shifted, to: LaneBits.self) &- unsafeBitCast(
            Lanes(repeating: roundingShifter), to: LaneBits.self)
        let power = unsafeBitCast((exponent &+ 1023) &<< 52, to: Lanes.self)
        return expR * power
    }

    #if canImport(CAVX512)
    /// `logKernel(vector:)` below in AVX-512 intrinsics: the same operations in the same order, so the same
    /// values, in half the time (the optimiser splits the generic form's vectors across registers of three widths;
    /// it does not with the exponential and sine kernels, whose intrinsic forms measured slower). Compiled only for
    /// a CPU with AVX-512 (`CAVX512`).
    @inline(__always)
    private static func logKernel(_ lanes: Lanes) -> Lanes {
        func integers(_ value: Int64) -> __m512i { _mm512_set1_epi64(value) }
        func doubles(_ value: Double) -> __m512d { _mm512_set1_pd(value) }
        // `__m512d` is `Lanes` (`SIMD8<Double>`) in Swift; `__m512i` is a vector of eight `Int64`s.
        let bits = _mm512_castpd_si512(lanes)
        let high = _mm512_srli_epi64(bits, 32)
        let mantissaHigh = _mm512_and_si512(high, integers(0x000F_FFFF))
        let carry = _mm512_and_si512(_mm512_add_epi64(mantissaHigh, integers(0x95F64)), integers(0x10_0000))
        let k = _mm512_add_epi64(
            _mm512_sub_epi64(_mm512_srli_epi64(high, 20), integers(1023)), _mm512_srli_epi64(carry, 20))
        let reducedHigh = _mm512_or_si512(mantissaHigh, _mm512_xor_si512(carry, integers(0x3FF0_0000)))
        let reduced = _mm512_castsi512_pd(
            _mm512_or_si512(_mm512_slli_epi64(reducedHigh, 32), _mm512_and_si512(bits, integers(0xFFFF_FFFF))))
        let f = _mm512_sub_pd(reduced, doubles(1.0))
        let shifter = doubles(roundingShifter)
        let dk = _mm512_sub_pd(_mm512_castsi512_pd(_mm512_add_epi64(k, _mm512_castpd_si512(shifter))), shifter)

        let s = _mm512_div_pd(f, _mm512_add_pd(doubles(2.0), f))
        let z = _mm512_mul_pd(s, s)
        let w = _mm512_mul_pd(z, z)
        var even = _mm512_add_pd(_mm512_mul_pd(w, doubles(1.531383769920937332e-01)), doubles(2.222219843214978396e-01))
        even = _mm512_add_pd(_mm512_mul_pd(even, w), doubles(3.999999999940941908e-01))
        var odd = _mm512_add_pd(_mm512_mul_pd(w, doubles(1.479819860511658591e-01)), doubles(1.818357216161805012e-01))
        odd = _mm512_add_pd(_mm512_mul_pd(odd, w), doubles(2.857142874366239149e-01))
        odd = _mm512_add_pd(_mm512_mul_pd(odd, w), doubles(6.666666666666735130e-01))
        let r = _mm512_add_pd(_mm512_mul_pd(z, odd), _mm512_mul_pd(w, even))
        let halfSquare = _mm512_mul_pd(_mm512_mul_pd(doubles(0.5), f), f)
        let kHigh = _mm512_mul_pd(dk, doubles(ln2High))
        let kLow = _mm512_mul_pd(dk, doubles(ln2Low))
        let withSquare = _mm512_sub_pd(kHigh, _mm512_sub_pd(
            _mm512_sub_pd(halfSquare, _mm512_add_pd(_mm512_mul_pd(s, _mm512_add_pd(halfSquare, r)), kLow)), f))
        let withoutSquare = _mm512_sub_pd(kHigh, _mm512_sub_pd(
            _mm512_sub_pd(_mm512_mul_pd(s, _mm512_sub_pd(f, r)), kLow), f))
        let test = _mm512_or_si512(
            _mm512_sub_epi64(mantissaHigh, integers(0x6147A)), _mm512_sub_epi64(integers(0x6B851), mantissaHigh))
        let outside = _mm512_srai_epi64(_mm512_sub_epi64(test, integers(1)), 63)
        let result = _mm512_or_si512(
            _mm512_and_si512(_mm512_castpd_si512(withoutSquare), outside),
            _mm512_andnot_si512(outside, _mm512_castpd_si512(withSquare)))
        return _mm512_castsi512_pd(result)
    }
    #elseif canImport(CAVX2)
    /// `logKernel(vector:)` below on each half of the lanes, one AVX register each: on all eight at once the
    /// optimiser splits the vectors four, two, one and one, and spills. (AVX2 lacks the 64-bit arithmetic shift
    /// that makes the mask; the optimiser compares with zero instead.)
    @inline(__always)
    private static func logKernel(_ lanes: Lanes) -> Lanes {
        Lanes(lowHalf: logKernel(vector: lanes.lowHalf), highHalf: logKernel(vector: lanes.highHalf))
    }
    #else
    @inline(__always)
    private static func logKernel(_ lanes: Lanes) -> Lanes {
        logKernel(vector: lanes)
    }
    #endif

    /// log(x) for positive normal finite x: x = 2ᵏ (1 + f) with 1 + f in [√2/2, √2), log(1 + f) from
    /// s = f / (2 + f) and fdlibm's polynomial in s², k ln 2 added in two parts. On eight lanes, or four.
    @inline(__always)
    private static func logKernel<Vector: SIMD>(vector x: Vector) -> Vector
    where Vector.Scalar == Double, Vector.MaskStorage.Scalar == Int64 {
        typealias Bits = Vector.MaskStorage
        let bits = unsafeBitCast(x, to: Bits.self)
        let high = bits &>> 32
        let mantissaHigh = high & 0x000F_FFFF
        // 0x95F64 carries into bit 20 exactly when the mantissa is at least √2: then halve it, add one to k.
        let carry = (mantissaHigh &+ 0x95F64) & 0x10_0000
        let k = ((high &>> 20) &- 1023) &+ (carry &>> 20)
        let reducedHigh = mantissaHigh | (carry ^ 0x3FF0_0000)
        let reduced = unsafeBitCast((reducedHigh &<< 32) | (bits & 0xFFFF_FFFF), to: Vector.self)
        let f = reduced - 1.0
        let dk = unsafeBitCast(k &+ unsafeBitCast(Vector(repeating: roundingShifter), to: Bits.self), to: Vector.self)
            - roundingShifter

        let s = f / (2.0 + f)
        let z = s * s
        let w = z * z
        var even = w * 1.531383769920937332e-01 + 2.222219843214978396e-01
        even = even * w + 3.999999999940941908e-01
        var odd = w * 1.479819860511658591e-01 + 1.818357216161805012e-01
        odd = odd * w + 2.857142874366239149e-01
        odd = odd * w + 6.666666666666735130e-01
        let r = z * odd + w * even
        let halfSquare = 0.5 * f * f
        // fdlibm's two forms, each the more accurate on its part of the mantissa range: the one with f²/2 where
        // the mantissa lies between 0x6147A and 0x6B851 (an all-ones mask there, from the sign of the test less 1).
        let withSquare = dk * ln2High - ((halfSquare - (s * (halfSquare + r) + dk * ln2Low)) - f)
        let withoutSquare = dk * ln2High - ((s * (f - r) - dk * ln2Low) - f)
        let outside = (((mantissaHigh &- 0x6147A) | (0x6B851 &- mantissaHigh)) &- 1) &>> 63
        return select(withoutSquare, where: outside, else: withSquare)
    }

    /// sin and cos for |x| ≤ 10⁵: x = n π/2 + r with |r| ≤ π/4 (π/2 in three parts, each product exact),
    /// fdlibm's kernel polynomials on r, and the quadrant n mod 4 picking and signing them.
    @inline(__always)
    private static func sinCosKernel(_ x: Lanes) -> (sin: Lanes, cos: Lanes) {
        let shifted = x * 6.36619772367581382433e-01 + roundingShifter
        let n = shifted - roundingShifter
        let quadrant = unsafeBitCast(shifted, to: LaneBits.self) & 3
        var r = x - n * 1.57079632673412561417e+00
        r = r - n * 6.07710050630396597660e-11
        r = r - n * 2.02226624871116645580e-21

        let z = r * r
        var sinTail = Lanes(repeating: 1.58969099521155010221e-10)
        sinTail = sinTail * z - 2.50507602534068634195e-08
        sinTail = sinTail * z + 2.75573137070700676789e-06
        sinTail = sinTail * z - 1.98412698298579493134e-04
        sinTail = sinTail * z + 8.33333333332248946124e-03
        let sine = r + (z * r) * (z * sinTail - 1.66666666666666324348e-01)

        var cosTail = Lanes(repeating: -1.13596475577881948265e-11)
        cosTail = cosTail * z + 2.08757232129817482790e-09
        cosTail = cosTail * z - 2.75573143513906633035e-07
        cosTail = cosTail * z + 2.48015872894767294178e-05
        cosTail = cosTail * z - 1.38888888888741095749e-03
        cosTail = cosTail * z + 4.16666666666666019037e-02
        cosTail = cosTail * z
        // 1 − z/2 split as (1 − q) − (z/2 − q), with q a short number near z/2 so that 1 − q is exact.
        let magnitude = r.magnitude
        var q = unsafeBitCast(
            (unsafeBitCast(magnitude, to: LaneBits.self) &- 0x0020_0000_0000_0000) & Int64(bitPattern: 0xFFFF_FFFF_0000_0000),
            to: Lanes.self)
        q.replace(with: 0, where: magnitude .< 0.3)
        q.replace(with: 0.28125, where: magnitude .> 0.78125)
        let cosine = (1.0 - q) - ((0.5 * z - q) - z * cosTail)

        // Quadrants 1 and 3 swap sine and cosine; 2 and 3 negate the sine, 1 and 2 the cosine. All by bits:
        // an all-ones mask where swapping, and the sign bit where negating.
        let sineBits = unsafeBitCast(sine, to: LaneBits.self)
        let cosineBits = unsafeBitCast(cosine, to: LaneBits.self)
        let swap = 0 &- (quadrant & 1)
        let sinSign = (quadrant & 2) &<< 62
        let cosSign = ((quadrant &+ 1) & 2) &<< 62
        let sinResult = unsafeBitCast(((cosineBits & swap) | (sineBits & ~swap)) ^ sinSign, to: Lanes.self)
        let cosResult = unsafeBitCast(((sineBits & swap) | (cosineBits & ~swap)) ^ cosSign, to: Lanes.self)
        return (sinResult, cosResult)
    }
}

extension VectorMath {
    /// Lanes of `value` where `mask` is all ones, of `other` where it is zero: a blend in bit operations, which
    /// the optimiser keeps in vector registers (SIMD's masked `replacing` becomes a loop over lanes).
    @inline(__always)
    fileprivate static func select<Vector: SIMD>(
        _ value: Vector, where mask: Vector.MaskStorage, else other: Vector
    ) -> Vector where Vector.Scalar == Double, Vector.MaskStorage.Scalar == Int64 {
        let bits = (unsafeBitCast(value, to: Vector.MaskStorage.self) & mask)
            | (unsafeBitCast(other, to: Vector.MaskStorage.self) & ~mask)
        return unsafeBitCast(bits, to: Vector.self)
    }
}

extension VectorMath.Lanes {
    /// Each lane without its sign (NaN stays NaN).
    fileprivate var magnitude: Self {
        unsafeBitCast(unsafeBitCast(self, to: VectorMath.LaneBits.self) & Int64.max, to: Self.self)
    }

    /// `body` applied to each lane, for the rare vectors a kernel does not cover.
    fileprivate func lanewise(_ body: (Double) -> Double) -> Self {
        var result = self
        for lane in indices {
            result[lane] = body(self[lane])
        }
        return result
    }
}

