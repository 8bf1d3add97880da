#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif
#if canImport(CAVX512)
import CAVX512
#endif

/// A seeded Gaussian generator: xorshift128 draws, twelve uniform draws summed (Irwin–Hall),
/// the same sequence as WORLD's `randn`, so noise excitation can be reproduced run to run.
struct Randn: Sendable {
    @usableFromInline var x: UInt32 = 123_456_789
    @usableFromInline var y: UInt32 = 362_436_069
    @usableFromInline var z: UInt32 = 521_288_629
    @usableFromInline var w: UInt32 = 88_675_123

    init() {}

    /// Restart the sequence from its fixed seed.
    mutating func reseed() {
        self = Randn()
    }

    /// Approximately standard normal: mean 0, variance 1, bounded to ±6.
    @inlinable
    mutating func next() -> Double {
        var sum: UInt32 = 0
        for _ in 0..<12 {
            sum &+= nextUniformBits() >> 4
        }
        return Double(sum) / 268_435_456.0 - 6.0
    }

    /// Fills `values` with the next `values.count` draws of `next()`. Runs of 256, 512 or 1,024 draws are made
    /// by several generators at once (`laneCount`), each started a lane's length after the one before by a
    /// precomputed jump, in SIMD registers: the longest run that fits, so that long fills jump less often.
    mutating func fill(_ values: UnsafeMutableBufferPointer<Double>) {
        guard let base = values.baseAddress else { return }
        var state = self
        var index = 0
        while values.count - index >= Randn.laneRun {
            var doublings = Randn.laneRunDoublings
            while values.count - index < Randn.laneRun << doublings {
                doublings -= 1
            }
            let jump = XorshiftJumps.shared.laneJumps[doublings]
            state.fillLaneRun(base + index, laneLength: Randn.laneLength << doublings, jump: jump)
            index += Randn.laneRun << doublings
        }
        while index < values.count {
            base[index] = state.next()
            index += 1
        }
        self = state
    }

    /// Generators side by side in a run: sixteen in one AVX-512 register where the code is compiled for one,
    /// else eight in two SSE groups.
    #if canImport(CAVX512)
    private static let laneCount = WideLaneGroup.width
    #else
    private static let laneCount = 2 * LaneGroup.width
    #endif
    /// The shortest run; longer ones double it up to `laneRunDoublings` times.
    private static let laneRun = 256
    static let laneRunDoublings = 2
    /// Draws each generator of the shortest run makes.
    static let laneLength = laneRun / laneCount

    #if canImport(CAVX512)
    /// The next `laneCount * laneLength` draws into `output`: lane `k` of the sixteen makes draws `k *
    /// laneLength ..< (k + 1) * laneLength`, started by `jump` (of `laneLength` draws) from the lane before, and
    /// the last lane's end state is where the sequence continues.
    private mutating func fillLaneRun(_ output: UnsafeMutablePointer<Double>, laneLength: Int, jump: XorshiftTable) {
        var laneState = XorshiftState(x: x, y: y, z: z, w: w)
        var starts = (x: SIMD16<UInt32>(), y: SIMD16<UInt32>(), z: SIMD16<UInt32>(), w: SIMD16<UInt32>())
        for lane in 0..<WideLaneGroup.width {
            (starts.x[lane], starts.y[lane]) = (laneState.x, laneState.y)
            (starts.z[lane], starts.w[lane]) = (laneState.z, laneState.w)
            if lane < WideLaneGroup.width - 1 {
                laneState = jump.apply(to: laneState)
            }
        }
        var lanes = WideLaneGroup(x: starts.x, y: starts.y, z: starts.z, w: starts.w)
        for draw in 0..<laneLength {
            WideLaneGroup.store(lanes.nextSums(), to: output + draw, stride: laneLength)
        }
        (x, y, z, w) = lanes.state(WideLaneGroup.width - 1)
    }
    #else
    /// The next `laneCount * laneLength` draws into `output`: lane `k` of the eight makes draws `k * laneLength
    /// ..< (k + 1) * laneLength`, started by `jump` (of `laneLength` draws) from the lane before, and the last
    /// lane's end state is where the sequence continues.
    private mutating func fillLaneRun(_ output: UnsafeMutablePointer<Double>, laneLength: Int, jump: XorshiftTable) {
        var laneState = XorshiftState(x: x, y: y, z: z, w: w)
        var low = LaneGroup()
        var high = LaneGroup()
        for lane in 0..<LaneGroup.width {
            low.start(lane, at: laneState)
            laneState = jump.apply(to: laneState)
        }
        for lane in 0..<LaneGroup.width {
            high.start(lane, at: laneState)
            if lane < LaneGroup.width - 1 {
                laneState = jump.apply(to: laneState)
            }
        }
        let highOutput = output + LaneGroup.width * laneLength
        for draw in 0..<laneLength {
            LaneGroup.store(low.nextSums(), to: output + draw, stride: laneLength)
            LaneGroup.store(high.nextSums(), to: highOutput + draw, stride: laneLength)
        }
        (x, y, z, w) = high.state(LaneGroup.width - 1)
    }
    #endif

    @inlinable @inline(__always)
    mutating func nextUniformBits() -> UInt32 {
        let t = x ^ (x << 11)
        x = y
        y = z
        z = w
        w = (w ^ (w >> 19)) ^ (t ^ (t >> 8))
        return w
    }

    /// Moves the sequence on as if `count` values had been drawn with `next()`, in time logarithmic in
    /// `count`: lets workers that each take a share of a long sequence start where they would have been.
    mutating func skip(_ count: Int) {
        assert(count >= 0, "cannot skip a negative number of draws")
        var state = XorshiftState(x: x, y: y, z: z, w: w)
        var remaining = UInt64(count) * 12
        var power = 0
        while remaining != 0 {
            if remaining & 1 == 1 {
                state = XorshiftJumps.shared.jump(power).apply(to: state)
            }
            remaining >>= 1
            power += 1
        }
        (x, y, z, w) = (state.x, state.y, state.z, state.w)
    }
}

/// Four xorshift128 generators side by side, one per lane of an SSE register for each state word.
/// Written with SSE2 intrinsics on x86-64: the standard library's SIMD shifts are element loops, which the
/// optimiser turns back into vector code only for short bodies, not for twelve chained steps.
private struct LaneGroup {
    static let width = 4

    private var x = SIMD4<UInt32>()
    private var y = SIMD4<UInt32>()
    private var z = SIMD4<UInt32>()
    private var w = SIMD4<UInt32>()

    mutating func start(_ lane: Int, at state: XorshiftState) {
        (x[lane], y[lane], z[lane], w[lane]) = (state.x, state.y, state.z, state.w)
    }

    func state(_ lane: Int) -> (UInt32, UInt32, UInt32, UInt32) {
        (x[lane], y[lane], z[lane], w[lane])
    }

    /// Each lane's next twelve uniform draws, shifted right by 4 and summed (`Randn.next` before scaling).
    @inline(__always)
    mutating func nextSums() -> SIMD4<UInt32> {
        var sum = SIMD4<UInt32>()
        #if arch(x86_64)
        // Four steps bring the state words back into their own variables: no values move between registers.
        for _ in 0..<3 {
            x = LaneGroup.step(x, w)
            sum &+= LaneGroup.shiftRight(x, 4)
            y = LaneGroup.step(y, x)
            sum &+= LaneGroup.shiftRight(y, 4)
            z = LaneGroup.step(z, y)
            sum &+= LaneGroup.shiftRight(z, 4)
            w = LaneGroup.step(w, z)
            sum &+= LaneGroup.shiftRight(w, 4)
        }
        #else
        // One step a turn: a body short enough for the optimiser to vectorise the element-wise shifts.
        for _ in 0..<12 {
            (x, y, z, w) = (y, z, w, LaneGroup.step(x, w))
            sum &+= LaneGroup.shiftRight(w, 4)
        }
        #endif
        return sum
    }

    /// The new newest word from the oldest (x) and the newest (w).
    @inline(__always)
    private static func step(_ oldest: SIMD4<UInt32>, _ newest: SIMD4<UInt32>) -> SIMD4<UInt32> {
        let t = oldest ^ shiftLeft(oldest, 11)
        return (newest ^ shiftRight(newest, 19)) ^ (t ^ shiftRight(t, 8))
    }

    /// `Randn.next`'s `Double(sum) / 2^28 - 6` of each lane, to `output[lane * stride]`. Taking the 6 off
    /// as an integer first leaves a signed 32-bit value, which SSE2 converts; every step is exact.
    @inline(__always)
    static func store(_ sums: SIMD4<UInt32>, to output: UnsafeMutablePointer<Double>, stride: Int) {
        #if arch(x86_64)
        let centred = _mm_sub_epi32(unsafeBitCast(sums, to: __m128i.self), _mm_set1_epi32(6 << 28))
        let scale = _mm_set1_pd(1.0 / 268_435_456.0)
        let low = _mm_mul_pd(_mm_cvtepi32_pd(centred), scale)
        let high = _mm_mul_pd(_mm_cvtepi32_pd(_mm_unpackhi_epi64(centred, centred)), scale)
        _mm_storel_pd(output, low)
        _mm_storeh_pd(output + stride, low)
        _mm_storel_pd(output + 2 * stride, high)
        _mm_storeh_pd(output + 3 * stride, high)
        #else
        for lane in 0..<width {
            output[lane * stride] = Double(sums[lane]) / 268_435_456.0 - 6.0
        }
        #endif
    }

    #if arch(x86_64)
    @inline(__always)
    private static func shiftLeft(_ value: SIMD4<UInt32>, _ count: Int32) -> SIMD4<UInt32> {
        unsafeBitCast(_mm_slli_epi32(unsafeBitCast(value, to: __m128i.self), count), to: SIMD4<UInt32>.self)
    }

    @inline(__always)
    private static func shiftRight(_ value: SIMD4<UInt32>, _ count: Int32) -> SIMD4<UInt32> {
        unsafeBitCast(_mm_srli_epi32(unsafeBitCast(value, to: __m128i.self), count), to: SIMD4<UInt32>.self)
    }
    #else
    @inline(__always)
    private static func shiftLeft(_ value: SIMD4<UInt32>, _ count: Int32) -> SIMD4<UInt32> { value &<< UInt32(count) }

    @inline(__always)
    private static func shiftRight(_ value: SIMD4<UInt32>, _ count: Int32) -> SIMD4<UInt32> { value &>> UInt32(count) }
    #endif
}

#if canImport(CAVX512)
/// Sixteen xorshift128 generators side by side, one per lane of an AVX-512 register for each state word:
/// `LaneGroup`'s steps, four times as many lanes an instruction.
private struct WideLaneGroup {
    static let width = 16

    private var x: __m512i
    private var y: __m512i
    private var z: __m512i
    private var w: __m512i

    /// Lane `k` of each word starts generator `k`; the words are gathered first and moved in whole, since
    /// setting one lane of a register at a time goes through memory sixty-four times.
    init(x: SIMD16<UInt32>, y: SIMD16<UInt32>, z: SIMD16<UInt32>, w: SIMD16<UInt32>) {
        self.x = unsafeBitCast(x, to: __m512i.self)
        self.y = unsafeBitCast(y, to: __m512i.self)
        self.z = unsafeBitCast(z, to: __m512i.self)
        self.w = unsafeBitCast(w, to: __m512i.self)
    }

    func state(_ lane: Int) -> (UInt32, UInt32, UInt32, UInt32) {
        func get(_ word: __m512i) -> UInt32 { unsafeBitCast(word, to: SIMD16<UInt32>.self)[lane] }
        return (get(x), get(y), get(z), get(w))
    }

    /// Each lane's next twelve uniform draws, shifted right by 4 and summed; four steps bring the state words
    /// back into their own variables.
    @inline(__always)
    mutating func nextSums() -> __m512i {
        var sum = _mm512_setzero_si512()
        for _ in 0..<3 {
            x = WideLaneGroup.step(x, w)
            sum = _mm512_add_epi32(sum, _mm512_srli_epi32(x, 4))
            y = WideLaneGroup.step(y, x)
            sum = _mm512_add_epi32(sum, _mm512_srli_epi32(y, 4))
            z = WideLaneGroup.step(z, y)
            sum = _mm512_add_epi32(sum, _mm512_srli_epi32(z, 4))
            w = WideLaneGroup.step(w, z)
            sum = _mm512_add_epi32(sum, _mm512_srli_epi32(w, 4))
        }
        return sum
    }

    @inline(__always)
    private static func step(_ oldest: __m512i, _ newest: __m512i) -> __m512i {
        let t = _mm512_xor_si512(oldest, _mm512_slli_epi32(oldest, 11))
        return _mm512_xor_si512(
            _mm512_xor_si512(newest, _mm512_srli_epi32(newest, 19)), _mm512_xor_si512(t, _mm512_srli_epi32(t, 8)))
    }

    /// `Randn.next`'s `Double(sum) / 2^28 - 6` of each lane, to `output[lane * stride]`, as `LaneGroup.store`.
    @inline(__always)
    static func store(_ sums: __m512i, to output: UnsafeMutablePointer<Double>, stride: Int) {
        let centred = unsafeBitCast(_mm512_sub_epi32(sums, _mm512_set1_epi32(6 << 28)), to: SIMD16<Int32>.self)
        let scale = _mm512_set1_pd(1.0 / 268_435_456.0)
        // `__m512d` is `SIMD8<Double>` in Swift: its lanes read directly.
        let low = _mm512_mul_pd(_mm512_cvtepi32_pd(unsafeBitCast(centred.lowHalf, to: __m256i.self)), scale)
        let high = _mm512_mul_pd(_mm512_cvtepi32_pd(unsafeBitCast(centred.highHalf, to: __m256i.self)), scale)
        for lane in 0..<8 {
            output[lane * stride] = low[lane]
            output[(lane + 8) * stride] = high[lane]
        }
    }
}
#endif

/// The 128-bit state of xorshift128 as a vector over GF(2): `low` holds x and y, `high` holds z and w.
struct XorshiftState: Equatable, Sendable {
    var low: UInt64
    var high: UInt64

    static let zero = XorshiftState(low: 0, high: 0)

    init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    init(x: UInt32, y: UInt32, z: UInt32, w: UInt32) {
        low = UInt64(x) | UInt64(y) << 32
        high = UInt64(z) | UInt64(w) << 32
    }

    var x: UInt32 { UInt32(truncatingIfNeeded: low) }
    var y: UInt32 { UInt32(truncatingIfNeeded: low >> 32) }
    var z: UInt32 { UInt32(truncatingIfNeeded: high) }
    var w: UInt32 { UInt32(truncatingIfNeeded: high >> 32) }

    static func unit(_ bit: Int) -> XorshiftState {
        bit < 64 ? XorshiftState(low: 1 << UInt64(bit), high: 0) : XorshiftState(low: 0, high: 1 << UInt64(bit - 64))
    }

    static func ^ (a: XorshiftState, b: XorshiftState) -> XorshiftState {
        XorshiftState(low: a.low ^ b.low, high: a.high ^ b.high)
    }

    /// One xorshift128 step.
    func stepped() -> XorshiftState {
        let t = x ^ (x << 11)
        return XorshiftState(x: y, y: z, z: w, w: (w ^ (w >> 19)) ^ (t ^ (t >> 8)))
    }
}

/// A linear map of xorshift states: the image of each of the 128 unit states.
struct XorshiftMatrix: Sendable {
    let columns: [XorshiftState]

    func apply(to state: XorshiftState) -> XorshiftState {
        var result = XorshiftState.zero
        func addColumns(ofSetBitsIn word: UInt64, from offset: Int) {
            var bits = word
            while bits != 0 {
                result = result ^ columns[offset + bits.trailingZeroBitCount]
                bits &= bits - 1
            }
        }
        addColumns(ofSetBitsIn: state.low, from: 0)
        addColumns(ofSetBitsIn: state.high, from: 64)
        return result
    }

    /// `self` applied twice.
    func squared() -> XorshiftMatrix {
        after(self)
    }

    /// `self` applied after `first`, through `self`'s byte tables (much faster than bit by bit).
    func after(_ first: XorshiftMatrix) -> XorshiftMatrix {
        let table = XorshiftTable(self)
        return XorshiftMatrix(columns: first.columns.map(table.apply(to:)))
    }
}

/// A linear map of xorshift states as sixteen tables, one per byte of the state, of the images of all
/// 256 values of that byte: applying it takes sixteen lookups.
struct XorshiftTable: Sendable {
    private let images: [XorshiftState]

    init(_ matrix: XorshiftMatrix) {
        var images = [XorshiftState](repeating: .zero, count: 16 * 256)
        images.withUnsafeMutableBufferPointer { images in
            matrix.columns.withUnsafeBufferPointer { columns in
                for byte in 0..<16 {
                    let table = images.baseAddress! + byte * 256
                    for value in 1..<256 {
                        table[value] = table[value & (value - 1)] ^ columns[byte * 8 + value.trailingZeroBitCount]
                    }
                }
            }
        }
        self.images = images
    }

    func apply(to state: XorshiftState) -> XorshiftState {
        var result = XorshiftState.zero
        for byte in 0..<8 {
            result = result ^ images[byte * 256 + Int((state.low >> UInt64(8 * byte)) & 0xFF)]
            result = result ^ images[(byte + 8) * 256 + Int((state.high >> UInt64(8 * byte)) & 0xFF)]
        }
        return result
    }
}

/// The xorshift transition raised to each power of two, made once per process.
final class XorshiftJumps: Sendable {
    static let shared = XorshiftJumps()

    /// `powers[k]` advances the state by 2^k steps; 64 of them reach any `UInt64` step count.
    private let powers: [XorshiftMatrix]

    /// `laneJumps[d]` advances a state by `Randn.laneLength << d` draws, for `Randn.fill`'s lanes.
    let laneJumps: [XorshiftTable]

    private init() {
        var matrix = XorshiftMatrix(columns: (0..<128).map { XorshiftState.unit($0).stepped() })
        var powers = [matrix]
        for _ in 1..<64 {
            matrix = matrix.squared()
            powers.append(matrix)
        }
        self.powers = powers
        laneJumps = (0...Randn.laneRunDoublings).map { doublings in
            let laneSteps = 12 * Randn.laneLength << doublings
            let laneMatrix = (0..<64).filter { laneSteps >> $0 & 1 == 1 }.map { powers[$0] }
                .reduce(nil) { (product: XorshiftMatrix?, power) in product.map { power.after($0) } ?? power }!
            return XorshiftTable(laneMatrix)
        }
    }

    func jump(_ power: Int) -> XorshiftMatrix {
        powers[power]
    }
}
