import CFFTW

/// One complex bin, laid out exactly as FFTW's `fftw_complex` (real, imaginary).
///
/// `@usableFromInline` so KoeWorld's inner loops, which build a `Complex` per bin, get `init` inlined: the compiler
/// inlines an `@inlinable` member into another module only when its type is public or `@usableFromInline`.
@usableFromInline
package struct Complex: Equatable, Sendable {
    @usableFromInline package var real: Double
    @usableFromInline package var imag: Double

    @inlinable
    package init(_ real: Double, _ imag: Double) {
        self.real = real
        self.imag = imag
    }

    package static let zero = Complex(0, 0)
}

/// FFTW's planner is not thread-safe, and destroying a plan touches the planner's shared tables too:
/// every plan is made and destroyed under this lock. Executing a plan on its own buffers is safe from any thread.
private let plannerLock = Lock()

private func destroyPlan(_ plan: fftw_plan) {
    plannerLock.lock()
    defer { plannerLock.unlock() }
    fftw_destroy_plan(plan)
}

/// Whether FFTW took its wisdom: the plans `make FFTW=tuned` measured for its own FFTW on the building machine
/// where there are such, else `fftwWisdom`, made for Debian's FFTW (FFTW refuses wisdom made by another build).
/// Read first under `plannerLock`, as importing wisdom changes the planner's tables.
private let wisdomImported: Bool = {
    if let measuredHere = koe_fftw_build_wisdom() {
        return fftw_import_wisdom_from_string(measuredHere) != 0
    }
    return fftw_import_wisdom_from_string(fftwWisdom) != 0
}()

/// A plan from the wisdom where it has one for the transform, else FFTW's estimate. Either way every process
/// makes the same plan and so gets the same numbers, which measuring at run time, picking by timings, would not.
private func makePlan(_ body: (_ flags: UInt32) -> fftw_plan?) -> (plan: fftw_plan, isFromWisdom: Bool) {
    plannerLock.lock()
    defer { plannerLock.unlock() }
    if wisdomImported, let plan = body(UInt32(FFTW_WISDOM_ONLY | FFTW_PATIENT)) {
        return (plan, true)
    }
    guard let plan = body(UInt32(FFTW_ESTIMATE)) else {
        fatalError("FFTW could not create a plan")
    }
    return (plan, false)
}

private func allocateReal(_ count: Int) -> UnsafeMutableBufferPointer<Double> {
    let raw = fftw_malloc(MemoryLayout<Double>.stride * count)!
    let pointer = raw.bindMemory(to: Double.self, capacity: count)
    pointer.initialize(repeating: 0, count: count)
    return UnsafeMutableBufferPointer(start: pointer, count: count)
}

private func allocateComplex(_ count: Int) -> UnsafeMutableBufferPointer<Complex> {
    let raw = fftw_malloc(MemoryLayout<Complex>.stride * count)!
    let pointer = raw.bindMemory(to: Complex.self, capacity: count)
    pointer.initialize(repeating: .zero, count: count)
    return UnsafeMutableBufferPointer(start: pointer, count: count)
}

private func fftwPointer(_ buffer: UnsafeMutableBufferPointer<Complex>) -> UnsafeMutablePointer<fftw_complex> {
    UnsafeMutableRawPointer(buffer.baseAddress!).assumingMemoryBound(to: fftw_complex.self)
}

/// A real transform between `size` samples (`waveform`) and `size / 2 + 1` bins (`spectrum`), unnormalised (FFTW's
/// convention): its plan and both buffers, freed together. `ForwardRealFFT` and `InverseRealFFT` say which way.
package class RealFFT {
    package let size: Int
    package let waveform: UnsafeMutableBufferPointer<Double>
    package let spectrum: UnsafeMutableBufferPointer<Complex>
    private let plan: fftw_plan
    /// Whether the plan came from `fftwWisdom` (see `makePlan`).
    let isFromWisdom: Bool

    /// `planning` makes FFTW's plan of the transform from the two buffers and the planner's flags.
    fileprivate init(
        size: Int,
        planning: (_ waveform: UnsafeMutablePointer<Double>, _ spectrum: UnsafeMutablePointer<fftw_complex>,
                   _ flags: UInt32) -> fftw_plan?
    ) {
        assert(size > 0, "FFT size must be positive")
        self.size = size
        waveform = allocateReal(size)
        spectrum = allocateComplex(size / 2 + 1)
        let samples = waveform.baseAddress!
        let bins = fftwPointer(spectrum)
        (plan, isFromWisdom) = makePlan { planning(samples, bins, $0) }
    }

    package final func execute() {
        fftw_execute(plan)
    }

    deinit {
        destroyPlan(plan)
        fftw_free(waveform.baseAddress)
        fftw_free(spectrum.baseAddress)
    }
}

/// Real-to-complex: fill `waveform`, call `execute()`, read `spectrum`. `execute()` leaves `waveform` as it was, so
/// samples that stay zero from frame to frame need writing only once.
package final class ForwardRealFFT: RealFFT {
    package init(size: Int) {
        super.init(size: size) { fftw_plan_dft_r2c_1d(Int32(size), $0, $1, $2) }
    }
}

/// Complex-to-real: fill `spectrum`, call `execute()`, read `waveform`. FFTW overwrites `spectrum` while it runs.
package final class InverseRealFFT: RealFFT {
    package init(size: Int) {
        super.init(size: size) { fftw_plan_dft_c2r_1d(Int32(size), $1, $0, $2) }
    }
}

/// Complex-to-complex transform of `size` bins, unnormalised.
package final class ComplexFFT {
    package enum Direction {
        case forward, backward
    }

    let size: Int
    package let input: UnsafeMutableBufferPointer<Complex>
    package let output: UnsafeMutableBufferPointer<Complex>
    private let plan: fftw_plan

    package init(size: Int, direction: Direction) {
        assert(size > 0, "FFT size must be positive")
        self.size = size
        input = allocateComplex(size)
        output = allocateComplex(size)
        let source = fftwPointer(input)
        let destination = fftwPointer(output)
        let sign = direction == .forward ? FFTW_FORWARD : FFTW_BACKWARD
        plan = makePlan { fftw_plan_dft_1d(Int32(size), source, destination, sign, $0) }.plan
    }

    package func execute() {
        fftw_execute(plan)
    }

    deinit {
        destroyPlan(plan)
        fftw_free(input.baseAddress)
        fftw_free(output.baseAddress)
    }
}
