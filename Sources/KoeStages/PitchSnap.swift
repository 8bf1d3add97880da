import Glibc

/// Pitch correction: pulls each voiced frame's F0 towards the nearest note of a scale.
///
/// The correction, in cents, is what the frame needs to land on its note; it follows that need with the time
/// constant `speed` (0: at once) and is applied `strength` times. At the start of a voiced run it starts from 0,
/// so a slow speed lets a note's attack through and then draws it onto the note, as a pitch corrector's
/// retune speed does.
public struct PitchSnap {
    /// The correction applied to the last voiced frame, in cents.
    private var correction = 0.0
    private var wasVoiced = false

    init() {}

    /// `f0` (Hz, voiced: finite and above 0) moved towards its note by `options` (A4 within its range), one frame
    /// of `framePeriod` ms after the last.
    mutating func snapped(_ f0: Double, options: Options, framePeriod: Double) -> Double {
        let cents = 1200 * log2(f0 / options.a4)
        let needed = 100 * options.scale.nearest(toSemitones: cents / 100) - cents
        if !wasVoiced { correction = 0 }
        let follow = options.speed > 0 ? 1 - exp(-framePeriod / options.speed) : 1
        correction += follow * (needed - correction)
        wasVoiced = true
        return f0 * exp2(options.strength * correction / 1200)
    }

    /// An unvoiced frame: the next voiced one starts a new note.
    mutating func unvoiced() {
        wasVoiced = false
    }
}

extension PitchSnap {
    public struct Options: Sendable, Equatable {
        /// The notes F0 is pulled to (default chromatic: every semitone).
        public var scale = MusicalScale.chromatic
        /// How far F0 moves to its note: 0 not at all, 1 all the way (default 1, a hard snap).
        public var strength = 1.0
        /// Time constant, in ms, with which the correction follows the note it needs (default 0: at once).
        public var speed = 0.0
        /// Frequency of A4 in Hz, the tuning the notes are counted from (default 440).
        public var a4 = 440.0

        public init(scale: MusicalScale = .chromatic, strength: Double = 1, speed: Double = 0, a4: Double = 440) {
            self.scale = scale
            self.strength = strength
            self.speed = speed
            self.a4 = a4
        }

        /// The first setting out of its range (`Setting.snapStrength`, `snapSpeed`, `a4`), said in words; nil when
        /// the options can be used.
        package var problem: String? {
            Setting.snapStrength.problem(strength, as: "snap strength") ?? Setting.snapSpeed.problem(speed, as: "snap speed")
                ?? Setting.a4.problem(a4, as: "A4")
        }

        /// These options with each number clamped to its setting's range, as a live control takes them; nil when
        /// one is not a number.
        package var clamped: Options? {
            guard let strength = Setting.snapStrength.clamped(strength), let speed = Setting.snapSpeed.clamped(speed),
                let a4 = Setting.a4.clamped(a4)
            else { return nil }
            return Options(scale: scale, strength: strength, speed: speed, a4: a4)
        }
    }
}

/// The notes of a key and mode, such as C major or D dorian; chromatic holds every semitone.
/// Written `KEY:SCALE` (`C:major`, `F#:minor`, `Bb:dorian`) or `chromatic`.
public struct MusicalScale: Sendable, Equatable, CustomStringConvertible {
    package enum Mode: String, CaseIterable, Sendable {
        case chromatic, major, minor, dorian, phrygian, lydian, mixolydian, locrian
        case harmonicMinor = "harmonic-minor", melodicMinor = "melodic-minor"
        case majorPentatonic = "major-pentatonic", minorPentatonic = "minor-pentatonic", blues
        case wholeTone = "whole-tone"

        /// The notes of the mode above its tonic: bit n set for the note n semitones up. Bits, not an array, so
        /// that a scale is made without allocating (a plugin's scale port changes it under its host's `run()`).
        var intervals: UInt16 {
            switch self {
            case .chromatic: 0b1111_1111_1111
            case .major: 0b1010_1011_0101
            case .minor: 0b0101_1010_1101
            case .dorian: 0b0110_1010_1101
            case .phrygian: 0b0101_1010_1011
            case .lydian: 0b1010_1101_0101
            case .mixolydian: 0b0110_1011_0101
            case .locrian: 0b0101_0110_1011
            case .harmonicMinor: 0b1001_1010_1101
            case .melodicMinor: 0b1010_1010_1101
            case .majorPentatonic: 0b0010_1001_0101
            case .minorPentatonic: 0b0100_1010_1001
            case .blues: 0b0100_1110_1001
            case .wholeTone: 0b0101_0101_0101
            }
        }
    }

    /// Pitch class of the tonic: 0 is C, 9 is A.
    let key: Int
    let mode: Mode
    /// Bit n set when the scale holds pitch class n (0 is C).
    private let pitchClasses: UInt16

    /// Every semitone: snap pulls F0 to the nearest note of any key.
    public static let chromatic = MusicalScale(key: 0, mode: .chromatic)

    /// The modes' names but chromatic's, as `KEY:SCALE` writes them.
    static var modeNames: String {
        Mode.allCases.filter { $0 != .chromatic }.map(\.rawValue).joined(separator: ", ")
    }

    /// `key` is a pitch class, taken modulo 12.
    package init(key: Int, mode: Mode) {
        self.key = (key % 12 + 12) % 12
        self.mode = mode
        // The mode's notes turned up to the key: a rotation within 12 bits.
        let twelve = UInt32(mode.intervals) << self.key
        pitchClasses = UInt16((twelve | twelve >> 12) & 0xFFF)
    }

    /// Reads `chromatic` or `KEY:SCALE`: KEY a letter A to G with an optional `#` or `b`, SCALE one of
    /// `Mode`'s names (`ionian` and `aeolian` are major and minor).
    public init(parsing spec: String) throws(KoeError) {
        let text = spec.trimmingSpaces()
        if text.lowercased() == Mode.chromatic.rawValue {
            self = .chromatic
            return
        }
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2 else {
            throw KoeError.invalidArgument("malformed scale '\(spec)': expected KEY:SCALE (C:major, A:minor, F#:dorian) or chromatic")
        }
        guard let key = Self.pitchClass(of: String(fields[0])) else {
            throw KoeError.invalidArgument("unknown key '\(fields[0])' in '\(spec)': expected a note A to G, optionally with # or b (C, F#, Bb)")
        }
        let name = fields[1].lowercased()
        guard let mode = Mode(rawValue: Self.aliases[name] ?? name) else {
            let names = Mode.allCases.map(\.rawValue).joined(separator: ", ")
            throw KoeError.invalidArgument("unknown scale '\(fields[1])' in '\(spec)': expected one of \(names)")
        }
        self.init(key: key, mode: mode)
    }

    private static let aliases = ["ionian": "major", "aeolian": "minor"]
    private static let letters: [Character: Int] = ["c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11]
    /// The keys' names by pitch class, as `description` writes them.
    package static let keyNames = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]

    private static func pitchClass(of name: String) -> Int? {
        guard let letter = name.first, let natural = letters[Character(letter.lowercased())] else { return nil }
        switch name.dropFirst() {
        case "": return natural
        case "#": return (natural + 1) % 12
        case "b": return (natural + 11) % 12
        default: return nil
        }
    }

    /// As it is written: `chromatic`, `C:major`, `F#:minor`.
    public var description: String {
        mode == .chromatic ? mode.rawValue : "\(Self.keyNames[key]):\(mode.rawValue)"
    }

    /// The note of the scale nearest to `semitones` (counted from A4, fractions allowed), in semitones from A4.
    /// A tie goes to the lower note. Throws for a value that is not finite or lies more than a million semitones
    /// from A4 (every frequency a `Double` holds lies within 13,000).
    func nearestNote(toSemitones semitones: Double) throws(KoeError) -> Double {
        guard abs(semitones) <= Self.farthestSemitones else {
            throw KoeError.invalidArgument("\(semitones) semitones from A4 is not a pitch: it must be a finite number within ±\(Int(Self.farthestSemitones))")
        }
        return nearest(toSemitones: semitones)
    }

    /// Semitones from A4 a pitch may lie at: whole notes there are still a step of 1 apart as `Double`s and as
    /// `Int`s, which the walk to a note of the scale counts on.
    private static let farthestSemitones = 1e6

    /// `nearestNote` of a pitch known to lie within `farthestSemitones`: that of a positive finite F0 against an
    /// A4 of the snap's range.
    func nearest(toSemitones semitones: Double) -> Double {
        var below = semitones.rounded(.down)
        var above = semitones.rounded(.up)
        // Every mode holds a note in any run of 3 semitones, so each walk takes at most 2 steps.
        while !contains(note: Int(below)) { below -= 1 }
        while !contains(note: Int(above)) { above += 1 }
        return semitones - below <= above - semitones ? below : above
    }

    /// Whether the note `note` semitones from A4 belongs to the scale.
    private func contains(note: Int) -> Bool {
        // A4 is pitch class 9 (A).
        pitchClasses >> (((note + 9) % 12 + 12) % 12) & 1 == 1
    }
}
