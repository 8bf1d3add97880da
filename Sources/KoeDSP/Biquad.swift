import Glibc

/// Why a biquad could not be designed.
package enum BiquadError: Error, Equatable, CustomStringConvertible {
    case nonPositiveFrequency(Double)
    case frequencyAtOrAboveNyquist(kind: Biquad.Kind, frequency: Double, sampleRate: Int)
    case invalidWidth(kind: Biquad.Kind, width: Biquad.Width)
    /// A width so narrow (a Q near 0) that the cookbook's terms overflow: no filter holds it.
    case tooNarrow(kind: Biquad.Kind, width: Biquad.Width)
    case nonFiniteGain(Double)

    package var description: String {
        switch self {
        case .nonPositiveFrequency(let frequency):
            return "filter frequency \(frequency) Hz must be greater than 0 Hz"
        case .frequencyAtOrAboveNyquist(let kind, let frequency, let sampleRate):
            return "\(kind) filter at \(frequency) Hz is at or above the Nyquist frequency "
                + "(\(Double(sampleRate) / 2) Hz at \(sampleRate) Hz)"
        case .invalidWidth(let kind, let width):
            return "\(kind) filter cannot have width \(width): Q must be greater than 0, "
                + "slope (shelves only) must be in (0, 1]"
        case .tooNarrow(let kind, let width):
            return "\(kind) filter cannot have width \(width): so narrow a band overflows the filter's coefficients"
        case .nonFiniteGain(let gain):
            return "filter gain \(gain) dB is not a finite number"
        }
    }
}

/// One second-order section designed from Robert Bristow-Johnson's Audio EQ Cookbook, normalised by a0 and run in
/// direct form I, the way sox runs its `equalizer`, `bass`, `treble`, `lowpass` and `highpass` effects.
/// Holds its own state and filters buffers in place; it allocates nothing per sample.
package struct Biquad: Sendable {
    package enum Kind: Sendable, CaseIterable {
        case peak, lowShelf, highShelf, lowPass, highPass
    }

    /// How wide a band or how steep a shelf is, in sox's units.
    package enum Width: Equatable, Sendable {
        /// Quality factor (> 0). A pass filter with Q = 1/√2 is Butterworth.
        case q(Double)
        /// Shelf slope in (0, 1]: 1 is the steepest transition without overshoot; sox's shelves default to 0.5.
        case slope(Double)
    }

    /// Feed-forward (b) and feedback (a) coefficients, divided by a0.
    package struct Coefficients: Equatable, Sendable {
        let b0, b1, b2, a1, a2: Double

        static let zero = Coefficients(b0: 0, b1: 0, b2: 0, a1: 0, a2: 0)

        var areFinite: Bool {
            b0.isFinite && b1.isFinite && b2.isFinite && a1.isFinite && a2.isFinite
        }

        func adding(_ other: Coefficients) -> Coefficients {
            Coefficients(b0: b0 + other.b0, b1: b1 + other.b1, b2: b2 + other.b2, a1: a1 + other.a1, a2: a2 + other.a2)
        }
    }

    package private(set) var coefficients: Coefficients
    private var input1 = 0.0, input2 = 0.0
    private var output1 = 0.0, output2 = 0.0
    /// While a glide runs: what each sample adds to the coefficients, and for how many samples more.
    private var glideStep = Coefficients.zero
    private var glideSamplesLeft = 0
    private var glideTarget = Coefficients.zero

    /// The filter that passes its input unchanged; where a band glides in from, or out to.
    package static let identity = Biquad(coefficients: Coefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0))

    private init(coefficients: Coefficients) {
        self.coefficients = coefficients
    }

    /// Designs a filter with its corner or centre at `frequency` Hz. `gainDB` matters to peaks and shelves only.
    package init(kind: Kind, frequency: Double, gainDB: Double = 0, width: Width, sampleRate: Int) throws(BiquadError) {
        guard frequency > 0, frequency.isFinite else { throw .nonPositiveFrequency(frequency) }
        guard frequency < Double(sampleRate) / 2 else {
            throw .frequencyAtOrAboveNyquist(kind: kind, frequency: frequency, sampleRate: sampleRate)
        }
        guard gainDB.isFinite else { throw .nonFiniteGain(gainDB) }
        guard Self.accepts(width, for: kind) else { throw .invalidWidth(kind: kind, width: width) }
        let omega = 2 * Double.pi * frequency / Double(sampleRate)
        let amplitude = pow(10, gainDB / 40)
        let alpha = Self.alpha(width, omega: omega, amplitude: amplitude)
        coefficients = Self.design(kind, omega: omega, amplitude: amplitude, alpha: alpha)
        guard coefficients.areFinite else { throw .tooNarrow(kind: kind, width: width) }
    }

    /// Moves the coefficients to `target`'s in a straight line over `samples` samples, keeping the filter's
    /// state, so a band changed while audio plays makes no click or zipper noise. The poles stay stable on the
    /// way: the stable (a1, a2) form a triangle, and a straight line between two of its points stays inside.
    package mutating func glide(to target: Biquad, samples: Int) {
        let steps = Double(max(1, samples))
        let from = coefficients, to = target.coefficients
        glideStep = Coefficients(
            b0: (to.b0 - from.b0) / steps, b1: (to.b1 - from.b1) / steps, b2: (to.b2 - from.b2) / steps,
            a1: (to.a1 - from.a1) / steps, a2: (to.a2 - from.a2) / steps)
        glideSamplesLeft = max(1, samples)
        glideTarget = to
    }

    /// True while the coefficients are still on their way to a glide's target.
    package var isGliding: Bool { glideSamplesLeft > 0 }

    /// Filters `samples` in place, continuing from the state the previous call left.
    package mutating func process(_ samples: UnsafeMutableBufferPointer<Double>) {
        var start = 0
        while glideSamplesLeft > 0, start < samples.count {
            glideSamplesLeft -= 1
            coefficients = glideSamplesLeft == 0 ? glideTarget : coefficients.adding(glideStep)
            process(UnsafeMutableBufferPointer(rebasing: samples[start..<start + 1]), with: coefficients)
            start += 1
        }
        process(UnsafeMutableBufferPointer(rebasing: samples[start...]), with: coefficients)
    }

    private mutating func process(_ samples: UnsafeMutableBufferPointer<Double>, with c: Coefficients) {
        var x1 = input1, x2 = input2, y1 = output1, y2 = output2
        for index in samples.indices {
            let x0 = samples[index]
            let y0 = x0 * c.b0 + x1 * c.b1 + x2 * c.b2 - y1 * c.a1 - y2 * c.a2
            x2 = x1
            x1 = x0
            y2 = y1
            y1 = y0
            samples[index] = y0
        }
        input1 = x1
        input2 = x2
        output1 = y1
        output2 = y2
    }

    mutating func process(_ samples: inout [Double]) {
        samples.withUnsafeMutableBufferPointer { process($0) }
    }

    /// Forgets the past: the next sample is filtered as if it were the first.
    mutating func reset() {
        input1 = 0
        input2 = 0
        output1 = 0
        output2 = 0
    }

    private static func accepts(_ width: Width, for kind: Kind) -> Bool {
        switch width {
        case .q(let q):
            return q > 0 && q.isFinite
        case .slope(let slope):
            return (kind == .lowShelf || kind == .highShelf) && slope > 0 && slope <= 1
        }
    }

    /// The cookbook's alpha, computed once from whichever width was given.
    private static func alpha(_ width: Width, omega: Double, amplitude: Double) -> Double {
        switch width {
        case .q(let q):
            return sin(omega) / (2 * q)
        case .slope(let slope):
            return sin(omega) / 2 * ((amplitude + 1 / amplitude) * (1 / slope - 1) + 2).squareRoot()
        }
    }

    private static func design(_ kind: Kind, omega: Double, amplitude a: Double, alpha: Double) -> Coefficients {
        let cosine = cos(omega)
        let shelfAlpha = 2 * a.squareRoot() * alpha
        let (b0, b1, b2, a0, a1, a2): (Double, Double, Double, Double, Double, Double)
        switch kind {
        case .peak:
            (b0, b1, b2) = (1 + alpha * a, -2 * cosine, 1 - alpha * a)
            (a0, a1, a2) = (1 + alpha / a, -2 * cosine, 1 - alpha / a)
        case .lowShelf:
            b0 = a * ((a + 1) - (a - 1) * cosine + shelfAlpha)
            b1 = 2 * a * ((a - 1) - (a + 1) * cosine)
            b2 = a * ((a + 1) - (a - 1) * cosine - shelfAlpha)
            a0 = (a + 1) + (a - 1) * cosine + shelfAlpha
            a1 = -2 * ((a - 1) + (a + 1) * cosine)
            a2 = (a + 1) + (a - 1) * cosine - shelfAlpha
        case .highShelf:
            b0 = a * ((a + 1) + (a - 1) * cosine + shelfAlpha)
            b1 = -2 * a * ((a - 1) + (a + 1) * cosine)
            b2 = a * ((a + 1) + (a - 1) * cosine - shelfAlpha)
            a0 = (a + 1) - (a - 1) * cosine + shelfAlpha
            a1 = 2 * ((a - 1) - (a + 1) * cosine)
            a2 = (a + 1) - (a - 1) * cosine - shelfAlpha
        case .lowPass:
            (b0, b1, b2) = ((1 - cosine) / 2, 1 - cosine, (1 - cosine) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * cosine, 1 - alpha)
        case .highPass:
            (b0, b1, b2) = ((1 + cosine) / 2, -(1 + cosine), (1 + cosine) / 2)
            (a0, a1, a2) = (1 + alpha, -2 * cosine, 1 - alpha)
        }
        return Coefficients(b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0)
    }
}
