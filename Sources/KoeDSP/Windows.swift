import Glibc

/// Window functions as the WORLD analyses use them.
package enum Window {
    /// Nuttall's four-term window of `length` samples (symmetric; endpoints near zero).
    package static func nuttall(length: Int) -> [Double] {
        guard length > 1 else { return Array(repeating: 1, count: max(length, 0)) }
        return (0..<length).map { index in
            let phase = 2.0 * Double.pi * Double(index) / Double(length - 1)
            return 0.355768 - 0.487396 * cos(phase) + 0.144232 * cos(2 * phase) - 0.012604 * cos(3 * phase)
        }
    }
}
