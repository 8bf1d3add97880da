import Glibc
import KoeDSP

/// One band of a parametric equalizer, written on the command line as `TYPE:FREQ[:GAIN_DB[:Q]]`,
/// e.g. `peak:1000:6:1.4`, `lowshelf:120:4`, `highpass:80`. FREQ may end in `k` (kHz).
/// Each band does what the sox effect of the same settings does: peak is `equalizer`, lowshelf `bass`,
/// highshelf `treble`, lowpass `lowpass`, highpass `highpass`.
public struct EqualizerBand: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, CaseIterable, Sendable {
        case peak, lowshelf, highshelf, lowpass, highpass
    }

    public var kind: Kind
    /// Centre (peak), midpoint (shelves) or corner (pass filters) frequency in Hz.
    public var frequency: Double
    /// Gain at the centre (peak) or on the shelf, in dB; pass filters take none.
    public var gainDB: Double
    /// Quality factor; nil gives the kind's default: Q 1 for a peak, sox's slope of 0.5 for shelves,
    /// Q 1/√2 (Butterworth) for pass filters.
    public var q: Double?
    /// How messages name the band: nil quotes its `TYPE:FREQ...` spec; a band the user did not write as a spec
    /// (a graphic EQ slider) is named as they gave it.
    package var name: String?

    public init(kind: Kind, frequency: Double, gainDB: Double = 0, q: Double? = nil, name: String? = nil) {
        self.kind = kind
        self.frequency = frequency
        self.gainDB = gainDB
        self.q = q
        self.name = name
    }

    /// Reads `TYPE:FREQ[:GAIN_DB[:Q]]`; every error is one line that quotes the spec.
    public init(parsing spec: String) throws(KoeError) {
        let fields = spec.trimmingSpaces().split(separator: ":", omittingEmptySubsequences: false)
        guard (2...4).contains(fields.count), !fields.contains(where: \.isEmpty) else {
            throw KoeError.invalidArgument("malformed EQ band '\(spec)': expected TYPE:FREQ[:GAIN_DB[:Q]]")
        }
        guard let kind = Kind(rawValue: fields[0].lowercased()) else {
            let kinds = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw KoeError.invalidArgument("unknown EQ type '\(fields[0])' in '\(spec)': expected one of \(kinds)")
        }
        self.init(
            kind: kind,
            frequency: try Self.number(fields[1], named: "frequency", in: spec, allowingKilo: true),
            gainDB: fields.count > 2 ? try Self.number(fields[2], named: "gain", in: spec) : 0,
            q: fields.count > 3 ? try Self.number(fields[3], named: "Q", in: spec) : nil
        )
        try validate(quoting: spec)
    }

    /// True when the band leaves every signal as it is: a peak or shelf of 0 dB.
    package var isFlat: Bool {
        gainDB == 0 && [.peak, .lowshelf, .highshelf].contains(kind)
    }

    /// The band as it would be written on the command line.
    public var description: String {
        var fields = [kind.rawValue, Self.format(frequency)]
        if gainDB != 0 || q != nil { fields.append(Self.format(gainDB)) }
        if let q { fields.append(Self.format(q)) }
        return fields.joined(separator: ":")
    }

    /// The band's filter at `sampleRate`; a band at or above the Nyquist frequency is refused. Building one is
    /// how a band is checked against a sample rate.
    package func filter(sampleRate: Int) throws(KoeError) -> Biquad {
        try validate(quoting: description)
        do {
            return try Biquad(kind: biquadKind, frequency: frequency, gainDB: gainDB, width: width, sampleRate: sampleRate)
        } catch .frequencyAtOrAboveNyquist {
            throw KoeError.invalidArgument(
                "\(quoted) is at or above the Nyquist frequency "
                    + "(\(Self.format(Double(sampleRate) / 2)) Hz at a \(sampleRate) Hz sample rate)")
        } catch {
            throw KoeError.invalidArgument("\(quoted): \(error)")
        }
    }

    private var quoted: String {
        name ?? "EQ band '\(self)'"
    }

    /// Gains a band may have: the output gain's (`Setting.gain`).
    package static let gainRange = Setting.gain.range!

    private func validate(quoting spec: String) throws(KoeError) {
        guard frequency > 0, frequency.isFinite else {
            throw KoeError.invalidArgument("EQ band '\(spec)': frequency must be greater than 0 Hz")
        }
        guard EqualizerBand.gainRange.contains(gainDB) else {
            throw KoeError.invalidArgument("EQ band '\(spec)': gain must be between \(Int(EqualizerBand.gainRange.lowerBound)) and \(Int(EqualizerBand.gainRange.upperBound)) dB")
        }
        if let q, !(q > 0 && q.isFinite) {
            throw KoeError.invalidArgument("EQ band '\(spec)': Q must be greater than 0")
        }
        if gainDB != 0, kind == .lowpass || kind == .highpass {
            throw KoeError.invalidArgument("EQ band '\(spec)': \(kind) takes no gain (write \(kind):FREQ or \(kind):FREQ:0:Q)")
        }
    }

    private var biquadKind: Biquad.Kind {
        switch kind {
        case .peak: .peak
        case .lowshelf: .lowShelf
        case .highshelf: .highShelf
        case .lowpass: .lowPass
        case .highpass: .highPass
        }
    }

    private var width: Biquad.Width {
        if let q { return .q(q) }
        switch kind {
        case .peak: return .q(1)
        case .lowshelf, .highshelf: return .slope(0.5)
        case .lowpass, .highpass: return .q(0.5.squareRoot())
        }
    }

    private static func number(
        _ field: Substring, named name: String, in spec: String, allowingKilo: Bool = false
    ) throws(KoeError) -> Double {
        let isKilo = allowingKilo && field.last.map { $0 == "k" || $0 == "K" } == true
        guard let value = Double(isKilo ? field.dropLast() : field), value.isFinite else {
            throw KoeError.invalidArgument("EQ band '\(spec)': \(name) '\(field)' is not a number")
        }
        return isKilo ? value * 1000 : value
    }

    fileprivate static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A ten-band octave graphic equalizer: peak filters at 31.25 Hz … 16 kHz.
package struct GraphicEqualizer: Equatable, Sendable {
    /// Band centres in Hz: ten octaves up from 31.25 Hz.
    package static let frequencies: [Double] = (0..<10).map { 31.25 * pow(2, Double($0)) }

    /// Q of every band: √2 is a bandwidth of one octave between the half-gain (in dB) points, so neighbouring
    /// bands cross at half their gain, as on a standard octave graphic EQ.
    package static let q = 2.0.squareRoot()

    /// Gain of each band in dB, lowest band first.
    package let gains: [Double]

    package init(gains: [Double]) throws(KoeError) {
        guard gains.count == Self.frequencies.count else {
            let expected = Self.frequencies.count
            throw KoeError.invalidArgument("graphic EQ needs \(expected) gains in dB (31.25 Hz … 16 kHz), got \(gains.count)")
        }
        guard gains.allSatisfy(EqualizerBand.gainRange.contains) else {
            throw KoeError.invalidArgument("graphic EQ gains must be between \(Int(EqualizerBand.gainRange.lowerBound)) and \(Int(EqualizerBand.gainRange.upperBound)) dB")
        }
        self.gains = gains
    }

    /// Reads `G1,...,G10`.
    package init(parsing list: String) throws(KoeError) {
        var gains: [Double] = []
        for field in list.split(separator: ",", omittingEmptySubsequences: false) {
            guard let gain = Double(field.trimmingSpaces()), gain.isFinite else {
                throw KoeError.invalidArgument("graphic EQ '\(list)': gain '\(field)' is not a number")
            }
            gains.append(gain)
        }
        try self.init(gains: gains)
    }

    /// The peak bands that change something; 0 dB bands drop out.
    package var bands: [EqualizerBand] {
        zip(Self.frequencies.indices, gains).compactMap { index, gain in
            guard gain != 0 else { return nil }
            let frequency = Self.frequencies[index]
            let name = "graphic EQ band \(index + 1) (\(EqualizerBand.format(frequency)) Hz, \(EqualizerBand.format(gain)) dB)"
            return EqualizerBand(kind: .peak, frequency: frequency, gainDB: gain, q: Self.q, name: name)
        }
    }
}

/// A cascade of biquads, one per band, applied in order. No delay: output sample n is ready with input sample n.
/// Bands changed while audio plays glide to their new coefficients over `glideSamples` (a band added glides in
/// from a flat filter, a band removed glides out to one), so a change never clicks or zips.
package final class Equalizer: InPlaceStage {
    /// The bands that act, in order; flat bands are left out.
    package private(set) var bands: [EqualizerBand]
    private let sampleRate: Int
    private let glideSamples: Int
    /// One filter per acting band, then the filters of removed bands still gliding out.
    private var filters: [Biquad]

    /// Every band is checked (a flat one too) and refused with a one-line message if it cannot be built at `sampleRate`.
    package init(bands: [EqualizerBand], sampleRate: Int, glideSamples: Int = 1) throws(KoeError) {
        self.sampleRate = sampleRate
        self.glideSamples = max(1, glideSamples)
        (self.bands, filters) = try Self.design(bands, sampleRate: sampleRate)
    }

    /// The equalizer, or nil when it would change nothing (no bands, or only 0 dB ones).
    package static func make(bands: [EqualizerBand], sampleRate: Int) throws(KoeError) -> Equalizer? {
        let equalizer = try Equalizer(bands: bands, sampleRate: sampleRate)
        return equalizer.bands.isEmpty ? nil : equalizer
    }

    /// Takes `bands` from the next sample on, gliding from the current ones or at once; refused as `init`
    /// refuses, and then nothing changes.
    package func set(bands: [EqualizerBand], gliding: Bool = true) throws(KoeError) {
        let (acting, targets) = try Self.design(bands, sampleRate: sampleRate)
        guard gliding else {
            (self.bands, filters) = (acting, targets)
            return
        }
        glide(to: targets, samples: glideSamples)
        self.bands = acting
    }

    /// Each filter glides to its target, or to a flat filter once its band is gone; a new band glides in from one.
    private func glide(to targets: [Biquad], samples: Int) {
        for slot in 0..<max(filters.count, targets.count) {
            let target = slot < targets.count ? targets[slot] : .identity
            if slot < filters.count {
                filters[slot].glide(to: target, samples: samples)
            } else {
                var added = Biquad.identity
                added.glide(to: target, samples: samples)
                filters.append(added)
            }
        }
    }

    /// Bands designed for `take`, on a thread other than the one that runs the equalizer.
    package struct Design: Sendable {
        /// The bands that act; after `take`, the bands the equalizer held before.
        package fileprivate(set) var bands: [EqualizerBand]
        fileprivate let filters: [Biquad]

        /// Refused as `init` refuses, and for more bands than `realTimeBands`.
        package init(bands: [EqualizerBand], sampleRate: Int) throws(KoeError) {
            (self.bands, filters) = try Equalizer.design(bands, sampleRate: sampleRate)
            guard filters.count <= Equalizer.realTimeBands else {
                throw .invalidArgument("a live voice takes at most \(Equalizer.realTimeBands) EQ bands at once (got \(filters.count))")
            }
        }
    }

    /// Bands `take` changes to without allocating, once `reserveRealTimeBands` has made room.
    package static let realTimeBands = 32

    /// Room for `take`: filters for `realTimeBands` bands (a band taken away glides out in its own slot).
    package func reserveRealTimeBands() {
        filters.reserveCapacity(Self.realTimeBands)
    }

    /// Takes `design`'s bands from the next sample on, gliding as `set(bands:)` does (over one sample when not
    /// `gliding`). Allocates and frees nothing once `reserveRealTimeBands` has made room: the band list it
    /// replaces goes back in `design.bands`, to be freed where `design` is.
    package func take(_ design: inout Design, gliding: Bool) {
        glide(to: design.filters, samples: gliding ? glideSamples : 1)
        swap(&bands, &design.bands)
    }

    /// Fresh filters for the bands that act, as `init` makes them: a glide under way is over, bands gliding out
    /// are gone, and no filter remembers the stream.
    package func reset() {
        // The bands were built at this rate once, so they build again.
        if let (acting, fresh) = try? Self.design(bands, sampleRate: sampleRate) {
            bands = acting
            // In place, so that the room `reserveRealTimeBands` made stays.
            filters.removeAll(keepingCapacity: true)
            filters += fresh
        }
    }

    package func apply(_ samples: UnsafeMutableBufferPointer<Double>) {
        for index in filters.indices {
            filters[index].process(samples)
        }
        while filters.count > bands.count, let last = filters.last, !last.isGliding, last.coefficients == Biquad.identity.coefficients {
            filters.removeLast()
        }
    }

    private static func design(_ bands: [EqualizerBand], sampleRate: Int) throws(KoeError) -> ([EqualizerBand], [Biquad]) {
        var filters: [Biquad] = []
        var acting: [EqualizerBand] = []
        for band in bands {
            let filter = try band.filter(sampleRate: sampleRate)
            if !band.isFlat {
                filters.append(filter)
                acting.append(band)
            }
        }
        return (acting, filters)
    }
}
