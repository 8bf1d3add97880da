import KoeDSP

/// Keys `largest` needs as scratch for `count` values.
func largestScratchCount(_ count: Int) -> Int {
    2 * (count + Keys.scalarCount)
}

/// The `rank`-th largest of `values` (none NaN), and how many values are at least it. Selection by counting,
/// not by comparing and swapping: a guess from every eighth value picks the candidates, and halving a range
/// of their keys, each half's keys counted eight at a time, narrows it to a few. `scratch` has room for
/// `largestScratchCount(values.count)` keys.
func largest(
    _ rank: Int, of values: UnsafeBufferPointer<Double>, scratch: UnsafeMutableBufferPointer<Int64>
) -> (value: Double, atOrAbove: Int) {
    precondition(rank >= 1 && rank <= values.count, "a rank among the values")
    precondition(scratch.count >= largestScratchCount(values.count), "room for the keys")
    let base = values.baseAddress!
    let keys = scratch.baseAddress!
    var kept = 0
    var (bottom, top) = (Int64.max, Int64.min)
    if let guess = guessLargest(rank, of: values, scratch: keys) {
        // The candidates: values whose key is at least the guess's, from the runs of eight that hold one.
        bottom = guess
        let guessValue = value(ofKey: guess)
        func consider(_ index: Int) {
            let candidate = key(base[index])
            top = max(top, candidate)
            append(candidate, to: keys, count: &kept, if: candidate >= guess)
        }
        var index = 0
        while index + Keys.scalarCount <= values.count {
            if VectorMath.anyAtLeast(guessValue, from: base + index) {
                for lane in 0..<Keys.scalarCount {
                    consider(index + lane)
                }
            }
            index += Keys.scalarCount
        }
        for index in index..<values.count {
            consider(index)
        }
    }
    if kept < rank {
        // No guess, or one too high (peaks between the sampled values): every value is a candidate.
        (bottom, top) = (Int64.max, Int64.min)
        for index in 0..<values.count {
            let candidate = key(base[index])
            keys[index] = candidate
            bottom = min(bottom, candidate)
            top = max(top, candidate)
        }
        kept = values.count
    }
    let blocks = padToKeys(keys, count: kept)
    let keyBlocks = UnsafeRawPointer(keys).assumingMemoryBound(to: Keys.self)
    let range = narrow(rank: rank, keys: keyBlocks, blocks: blocks, from: bottom, through: top, total: kept, spread: 8)
    let found: Int64
    if range.low == range.top {
        found = range.low
    } else {
        // The few keys in the range, largest first.
        let members = keys + blocks * Keys.scalarCount
        var memberCount = 0
        for index in 0..<kept {
            let candidate = keys[index]
            append(candidate, to: members, count: &memberCount, if: candidate >= range.low && candidate <= range.top)
        }
        for index in 1..<max(1, memberCount) {
            let member = members[index]
            var slot = index
            while slot > 0 && members[slot - 1] < member {
                members[slot] = members[slot - 1]
                slot -= 1
            }
            members[slot] = member
        }
        found = members[rank - range.aboveTop - 1]
    }
    return (value(ofKey: found), countAtLeast(found, in: keyBlocks, blocks: blocks))
}

/// Eight keys at a time.
private typealias Keys = SIMD8<Int64>

/// A key that orders as the value does (the bit pattern, its magnitude bits reversed for negative values); -0
/// and 0, equal values, share one.
@inline(__always)
private func key(_ value: Double) -> Int64 {
    let bits = Int64(bitPattern: (value + 0).bitPattern)
    return bits ^ ((bits >> 63) & .max)
}

@inline(__always)
private func value(ofKey key: Int64) -> Double {
    Double(bitPattern: UInt64(bitPattern: key ^ ((key >> 63) & .max)))
}

/// A key with about as large a share of every eighth value at or above it as `rank` is of all values; nil when
/// there are too few of those.
private func guessLargest(_ rank: Int, of values: UnsafeBufferPointer<Double>, scratch keys: UnsafeMutablePointer<Int64>) -> Int64? {
    let stride = 8
    let sampleCount = (values.count + stride - 1) / stride
    let sampleRank = rank * 3 / (2 * stride) + 1
    guard sampleRank <= sampleCount else { return nil }
    var (bottom, top) = (Int64.max, Int64.min)
    for sample in 0..<sampleCount {
        let sampleKey = key(values[sample * stride])
        keys[sample] = sampleKey
        bottom = min(bottom, sampleKey)
        top = max(top, sampleKey)
    }
    let blocks = padToKeys(keys, count: sampleCount)
    let keyBlocks = UnsafeRawPointer(keys).assumingMemoryBound(to: Keys.self)
    return narrow(rank: sampleRank, keys: keyBlocks, blocks: blocks, from: bottom, through: top, total: sampleCount, spread: 8).low
}

/// Writes `key` at `keys[count]` and keeps it there (counts it) only if `isKept`: a choice without a branch to
/// mispredict, at the cost of one slot past the kept keys.
@inline(__always)
private func append(_ key: Int64, to keys: UnsafeMutablePointer<Int64>, count: inout Int, if isKept: Bool) {
    keys[count] = key
    count += isKept ? 1 : 0
}

/// Fills `keys` from `count` up to a whole number of `Keys` with a key below every value's; returns that number.
private func padToKeys(_ keys: UnsafeMutablePointer<Int64>, count: Int) -> Int {
    let blocks = (count + Keys.scalarCount - 1) / Keys.scalarCount
    for index in count..<(blocks * Keys.scalarCount) {
        keys[index] = Int64.min
    }
    return blocks
}

/// Keys at least `bound` among `blocks` blocks of eight.
@inline(__always)
private func countAtLeast(_ bound: Int64, in keys: UnsafePointer<Keys>, blocks: Int) -> Int {
    var counts = Keys()
    let bounds = Keys(repeating: bound)
    for block in 0..<blocks {
        // A true lane is all ones: -1.
        counts &-= unsafeBitCast(keys[block] .>= bounds, to: Keys.self)
    }
    return Int(counts.wrappedSum())
}

/// Halves `[low, top]`, which holds all `total` keys, keeping the `rank`-th largest key inside, until at most
/// `spread` keys lie in it or it is one key wide. Returns it, with the number of keys above it.
private func narrow(
    rank: Int, keys: UnsafePointer<Keys>, blocks: Int, from low: Int64, through top: Int64, total: Int, spread: Int
) -> (low: Int64, top: Int64, aboveTop: Int) {
    var (low, top, atLow, aboveTop) = (low, top, total, 0)
    while atLow - aboveTop > spread && low < top {
        // The upper middle, in unsigned arithmetic: the range may be wider than `Int64.max`.
        let middle = top &- Int64(bitPattern: (UInt64(bitPattern: top &- low) / 2))
        let atMiddle = countAtLeast(middle, in: keys, blocks: blocks)
        if atMiddle >= rank {
            (low, atLow) = (middle, atMiddle)
        } else {
            (top, aboveTop) = (middle &- 1, atMiddle)
        }
    }
    return (low, top, aboveTop)
}
