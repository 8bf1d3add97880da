import Foundation
import Testing
@testable import KoeStages

@Suite struct PitchSnapTests {
    private func cents(_ f0: Double, from reference: Double) -> Double {
        1200 * log2(f0 / reference)
    }

    @Test func parsesKeysAndScales() throws {
        #expect(try MusicalScale(parsing: "chromatic") == .chromatic)
        #expect(try MusicalScale(parsing: "C:major") == MusicalScale(key: 0, mode: .major))
        #expect(try MusicalScale(parsing: "a:Minor") == MusicalScale(key: 9, mode: .minor))
        #expect(try MusicalScale(parsing: "F#:dorian") == MusicalScale(key: 6, mode: .dorian))
        #expect(try MusicalScale(parsing: "Bb:major-pentatonic") == MusicalScale(key: 10, mode: .majorPentatonic))
        #expect(try MusicalScale(parsing: "Cb:aeolian") == MusicalScale(key: 11, mode: .minor))
        #expect(try MusicalScale(parsing: "E:ionian").description == "E:major")
        #expect(try MusicalScale(parsing: "Db:minor").description == "C#:minor")
    }

    @Test(arguments: [
        ("H:major", "unknown key 'H'"), ("C##:major", "unknown key 'C##'"), ("C:majr", "unknown scale 'majr'"),
        ("major", "expected KEY:SCALE"), ("C:major:7", "expected KEY:SCALE"), (":minor", "unknown key ''"),
    ])
    func refusesUnknownKeysAndScales(spec: String, message: String) {
        #expect {
            try MusicalScale(parsing: spec)
        } throws: { error in
            (error as? KoeError)?.description.contains(message) == true
        }
    }

    /// Semitones from A4: C5 is 3, B4 2, C#5 4; C major holds B and C but not C#.
    @Test func nearestNoteOfTheScale() throws {
        let chromatic = MusicalScale.chromatic
        #expect(try chromatic.nearestNote(toSemitones: 0.4) == 0)
        #expect(try chromatic.nearestNote(toSemitones: 0.6) == 1)
        #expect(try chromatic.nearestNote(toSemitones: -12.7) == -13)
        let cMajor = try MusicalScale(parsing: "C:major")
        #expect(try cMajor.nearestNote(toSemitones: 3.9) == 3, "C# goes to C")
        #expect(try cMajor.nearestNote(toSemitones: 4.6) == 5, "between C# and D goes to D")
        #expect(try cMajor.nearestNote(toSemitones: 2.4) == 2)
        let aMinorPentatonic = MusicalScale(key: 9, mode: .minorPentatonic)
        #expect(try aMinorPentatonic.nearestNote(toSemitones: 1.4) == 0, "A, C, D, E, G: B goes to A")
        #expect(try aMinorPentatonic.nearestNote(toSemitones: 1.6) == 3)
        #expect(try aMinorPentatonic.nearestNote(toSemitones: -30.2) == -31, "three octaves down: D")
        #expect(try cMajor.nearestNote(toSemitones: -12_993) == -12_993, "the lowest a Double frequency reaches: C")
    }

    /// Values that are no pitch are refused: `Int(nan)` trapped, and 1e17 (C#, outside C major) walked down
    /// forever, as 1e17 - 1 is 1e17.
    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e17, -1e300, 1_000_000.5])
    func nearestNoteRefusesWhatIsNoPitch(semitones: Double) throws {
        #expect(throws: KoeError.self) { try MusicalScale(key: 0, mode: .major).nearestNote(toSemitones: semitones) }
    }

    @Test func hardSnapLandsOnTheNote() {
        var snap = PitchSnap()
        let options = PitchSnap.Options()
        for f0 in [150.0, 173.2, 201.7, 415.3, 96.1] {
            let snapped = snap.snapped(f0, options: options, framePeriod: 5)
            let fromA4 = cents(snapped, from: 440)
            #expect(abs(fromA4 - 100 * (fromA4 / 100).rounded()) < 1e-9, "\(f0) Hz went to \(snapped) Hz")
            #expect(abs(cents(snapped, from: f0)) <= 50 + 1e-9)
        }
    }

    @Test func strengthMovesPartWayAndA4Retunes() {
        var snap = PitchSnap()
        let half = PitchSnap.Options(strength: 0.5)
        let input = 440 * exp2(30.0 / 1200)  // 30 cents above A4
        #expect(abs(cents(snap.snapped(input, options: half, framePeriod: 5), from: 440) - 15) < 1e-9)
        let baroque = PitchSnap.Options(a4: 415)
        #expect(abs(snap.snapped(420, options: baroque, framePeriod: 5) - 415) < 1e-9)
    }

    /// With a speed, the correction follows its need as a first-order lag of that time constant, starting from
    /// 0 at each voiced onset.
    @Test func speedIsATimeConstant() {
        var snap = PitchSnap()
        let slow = PitchSnap.Options(speed: 50)
        let input = 440 * exp2(40.0 / 1200)
        var corrections: [Double] = []
        for _ in 0..<10 {
            corrections.append(cents(snap.snapped(input, options: slow, framePeriod: 5), from: input))
        }
        #expect(abs(corrections[0] - -40 * (1 - exp(-0.1))) < 1e-9)
        #expect(abs(corrections[9] - -40 * (1 - exp(-1))) < 1e-9, "after 50 ms: 63 % of the way")
        snap.unvoiced()
        #expect(abs(cents(snap.snapped(input, options: slow, framePeriod: 5), from: input) - corrections[0]) < 1e-9)
    }

    @Test func optionsOutOfRangeAreNamed() {
        #expect(PitchSnap.Options().problem == nil)
        #expect(PitchSnap.Options(strength: 1.5).problem?.contains("strength") == true)
        #expect(PitchSnap.Options(speed: -1).problem?.contains("speed") == true)
        #expect(PitchSnap.Options(a4: .nan).problem?.contains("A4") == true)
    }
}
