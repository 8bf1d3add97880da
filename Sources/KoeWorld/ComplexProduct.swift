import KoeDSP

extension Complex {
    /// The complex product, in the order of operations WORLD's ports rely on for identical numbers. Defined in
    /// the module whose loops use it, so the optimiser inlines it there whatever KoeDSP exposes.
    @inline(__always)
    static func * (a: Complex, b: Complex) -> Complex {
        Complex(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)
    }
}
