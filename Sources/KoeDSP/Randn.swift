/// A seeded Gaussian generator: xorshift128 draws, twelve uniform draws summed (Irwin–Hall),
/// the same sequence as WORLD's `randn`, so noise excitation can be reproduced run to run.
public struct Randn: Sendable {
    @usableFromInline var x: UInt32 = 123_456_789
    @usableFromInline var y: UInt32 = 362_436_069
    @usableFromInline var z: UInt32 = 521_288_629
    @usableFromInline var w: UInt32 = 88_675_123

    public init() {}

    /// Restart the sequence from its fixed seed.
    public mutating func reseed() {
        self = Randn()
    }

    /// Approximately standard normal: mean 0, variance 1, bounded to ±6.
    @inlinable
    public mutating func next() -> Double {
        var sum: UInt32 = 0
        for _ in 0..<12 {
            sum &+= nextUniformBits() >> 4
        }
        return Double(sum) / 268_435_456.0 - 6.0
    }

    /// Fills `values` with the next `values.count` draws of `next()`. Runs of 256 draws are made by eight
    /// generators at once, started 32 draws apart by a precomputed jump, in SIMD registers.
    public mutating func fill(_ values: UnsafeMutableBufferPointer<Double>) {
        guard let base = values.baseAddress else { return }
        var state = self
        var index = 0
        while values.count - index >= Randn.laneRun {
            state.fillLaneRun(base + index)
            index += Randn.laneRun
        }
        while index < values.count {
            base[index] = state.next()
            index += 1
        }
        self = state
    }

    private static let laneCount = 8
    private static let laneLength = 32
    private static let laneRun = laneCount * laneLength

    /// The next `laneRun` draws into `output`: lane `k` makes draws `k * laneLength ..< (k + 1) * laneLength`,
    /// and the last lane's end state is where the sequence continues.
    private mutating func fillLaneRun(_ output: UnsafeMutablePointer<Double>) {
        var xs = SIMD8<UInt32>(), ys = SIMD8<UInt32>(), zs = SIMD8<UInt32>(), ws = SIMD8<UInt32>()
        var laneState = XorshiftState(x: x, y: y, z: z, w: w)
        for lane in 0..<Randn.laneCount {
            (xs[lane], ys[lane], zs[lane], ws[lane]) = (laneState.x, laneState.y, laneState.z, laneState.w)
            if lane < Randn.laneCount - 1 {
                laneState = XorshiftJumps.shared.laneJump.apply(to: laneState)
            }
        }
        for draw in 0..<Randn.laneLength {
            var sum = SIMD8<UInt32>(repeating: 0)
            for _ in 0..<12 {
                let t = xs ^ (xs &<< 11)
                xs = ys
                ys = zs
                zs = ws
                ws = (ws ^ (ws &>> 19)) ^ (t ^ (t &>> 8))
                sum &+= ws &>> 4
            }
            for lane in 0..<Randn.laneCount {
                output[lane * Randn.laneLength + draw] = Double(sum[lane]) / 268_435_456.0 - 6.0
            }
        }
        (x, y, z, w) = (xs[7], ys[7], zs[7], ws[7])
    }

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
    public mutating func skip(_ count: Int) {
        precondition(count >= 0, "cannot skip a negative number of draws")
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

    func bit(_ index: Int) -> Bool {
        let word = index < 64 ? low : high
        return (word >> UInt64(index % 64)) & 1 == 1
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
        for bit in 0..<128 where state.bit(bit) {
            result = result ^ columns[bit]
        }
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

    /// Advances a state by 32 draws (384 steps), for `Randn.fill`'s lanes.
    let laneJump: XorshiftTable

    private init() {
        var matrix = XorshiftMatrix(columns: (0..<128).map { XorshiftState.unit($0).stepped() })
        var powers = [matrix]
        for _ in 1..<64 {
            matrix = matrix.squared()
            powers.append(matrix)
        }
        self.powers = powers
        laneJump = XorshiftTable(powers[8].after(powers[7]))
    }

    func jump(_ power: Int) -> XorshiftMatrix {
        powers[power]
    }
}
