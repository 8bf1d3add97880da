import Glibc
import KoeDSP

/// e^(2 pi i n / period) for any integer n, from two small tables: accurate to rounding and cheap per call.
struct Rotation {
    let period: Int
    private let coarse: [Complex]
    private let fine: [Complex]
    private let fineCount: Int

    init(period: Int) {
        self.period = period
        let fineCount = max(1, Int(Double(period).squareRoot()))
        self.fineCount = fineCount
        fine = (0..<fineCount).map { Rotation.exact($0, period: period) }
        coarse = (0...(period / fineCount)).map { Rotation.exact($0 * fineCount, period: period) }
    }

    private static func exact(_ n: Int, period: Int) -> Complex {
        let angle = 2.0 * Double.pi * Double(n) / Double(period)
        return Complex(cos(angle), sin(angle))
    }

    func unit(at n: Int) -> Complex {
        let wrapped = ((n % period) + period) % period
        let high = coarse[wrapped / fineCount]
        let low = fine[wrapped % fineCount]
        return high * low
    }

    /// The real DFT of `values` (value k at index k + offset) at bins N/2 and N/2 - 1 of an N-point transform,
    /// N being `period`: the two bins WORLD's in-place mirroring overwrites.
    func topBins(of values: [Double], offset: Int) -> (nyquist: Complex, below: Complex) {
        var nyquist = 0.0
        var below = Complex.zero
        for (k, value) in values.enumerated() {
            let index = k + offset
            let sign = index & 1 == 0 ? 1.0 : -1.0
            // e^(-2 pi i (N/2 - 1) n / N) = (-1)^n e^(2 pi i n / N)
            let turn = unit(at: index)
            nyquist += sign * value
            below.real += sign * value * turn.real
            below.imag += sign * value * turn.imag
        }
        return (Complex(nyquist, 0), below)
    }
}
