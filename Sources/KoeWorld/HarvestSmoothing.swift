extension Harvest {
    /// Each voiced section, held constant beyond its ends, goes forwards and backwards through a
    /// second-order Butterworth low-pass; unvoiced frames stay 0.
    ///
    /// WORLD filters the whole padded contour once per section, which grows with sections times length. Outside a
    /// section the input is constant, and a step whose state equals the two before it repeats for as long as the
    /// input does, so those stretches are cut short once the state has settled, and the backward pass stops at
    /// the section's start: the values are the same, the cost follows the sections' lengths.
    static func smoothed(_ f0: [Double]) -> [Double] {
        let padding = 300
        let length = f0.count + 2 * padding
        var padded = [Double](repeating: 0, count: length)
        for i in f0.indices {
            padded[i + padding] = f0[i]
        }
        var result = [Double](repeating: 0, count: f0.count)
        var forward = [Double](repeating: 0, count: length)
        for section in voicedSections(padded) {
            padded.withUnsafeBufferPointer { padded in
                forward.withUnsafeMutableBufferPointer { forward in
                    result.withUnsafeMutableBufferPointer { result in
                        let output = UnsafeMutableBufferPointer(rebasing: result[(section.start - padding)...])
                        zeroPhaseLowPass(padded, section: section, scratch: forward, into: output)
                    }
                }
            }
        }
        return result
    }

    /// The second-order low-pass WORLD uses, as a direct form II state.
    private struct LowPass {
        static let b0 = 0.0078202080334971724
        static let b1 = 0.015640416066994345
        static let a0 = 1.7347257688092754
        static let a1 = -0.76600660094326412

        var w0 = 0.0
        var w1 = 0.0

        /// One step; `settled` when the new state equals the two before it, so that the same input repeats it.
        @inline(__always)
        mutating func step(_ x: Double) -> (output: Double, settled: Bool) {
            let w = x + Self.a0 * w0 + Self.a1 * w1
            let output = Self.b0 * w + Self.b1 * w0 + Self.b0 * w1
            let settled = w == w0 && w0 == w1
            w1 = w0
            w0 = w
            return (output, settled)
        }

        /// `steps` steps of the constant input `x`, stopping early once settled.
        mutating func run(_ x: Double, steps: Int) {
            for _ in 0..<steps {
                if step(x).settled { return }
            }
        }
    }

    /// WORLD's forward-backward filtering of `padded` held at `section`'s ends, written for the section's frames
    /// into `output` (from its start).
    private static func zeroPhaseLowPass(
        _ padded: UnsafeBufferPointer<Double>, section: Section, scratch forward: UnsafeMutableBufferPointer<Double>,
        into output: UnsafeMutableBufferPointer<Double>
    ) {
        let count = padded.count
        var filter = LowPass()
        filter.run(padded[section.start], steps: section.start)
        for i in section.start...section.end {
            forward[i] = filter.step(padded[i]).output
        }
        // From `constantFrom` on the forward output repeats `constant`.
        var constantFrom = count
        var constant = 0.0
        for i in (section.end + 1)..<count {
            let (value, settled) = filter.step(padded[section.end])
            forward[i] = value
            if settled {
                (constantFrom, constant) = (i, value)
                break
            }
        }
        var backward = LowPass()
        backward.run(constant, steps: count - constantFrom)
        for i in stride(from: constantFrom - 1, through: section.start, by: -1) {
            let value = backward.step(forward[i]).output
            if i <= section.end {
                output[i - section.start] = value
            }
        }
    }
}
