extension Harvest {
    /// Each voiced section, held constant beyond its ends, goes forwards and backwards through a
    /// second-order Butterworth low-pass; unvoiced frames stay 0.
    static func smoothed(_ f0: [Double]) -> [Double] {
        let padding = 300
        let length = f0.count + 2 * padding
        var padded = [Double](repeating: 0, count: length)
        for i in f0.indices {
            padded[i + padding] = f0[i]
        }
        var result = [Double](repeating: 0, count: f0.count)
        var held = [Double](repeating: 0, count: length)
        var backwards = [Double](repeating: 0, count: length)
        var filtered = [Double](repeating: 0, count: length)
        for section in voicedSections(padded) {
            for i in 0..<length {
                held[i] = padded[min(max(i, section.start), section.end)]
            }
            zeroPhaseLowPass(held, scratch: &backwards, into: &filtered)
            for i in section.start...section.end {
                result[i - padding] = filtered[i]
            }
        }
        return result
    }

    private static func zeroPhaseLowPass(_ x: [Double], scratch reversed: inout [Double], into y: inout [Double]) {
        let b0 = 0.0078202080334971724
        let b1 = 0.015640416066994345
        let a0 = 1.7347257688092754
        let a1 = -0.76600660094326412
        let count = x.count
        var w0 = 0.0
        var w1 = 0.0
        for i in 0..<count {
            let w = x[i] + a0 * w0 + a1 * w1
            reversed[count - i - 1] = b0 * w + b1 * w0 + b0 * w1
            w1 = w0
            w0 = w
        }
        w0 = 0
        w1 = 0
        for i in 0..<count {
            let w = reversed[i] + a0 * w0 + a1 * w1
            y[count - i - 1] = b0 * w + b1 * w0 + b0 * w1
            w1 = w0
            w0 = w
        }
    }
}
