import ArgumentParser
import Foundation
import Koe

struct Profile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure a voice: its median F0, F0 spread, vocal-tract length and voiced seconds.",
        discussion: """
            F0 is found as Praat's "To Pitch (ac)" finds it (75 to 600 Hz, 10 ms frames, the cheapest path \
            through the autocorrelation candidates), so the median holds against octave errors; the spread is \
            the semitones between the 10th and 90th percentiles. The vocal-tract length comes from the formant \
            spacing of the voiced frames (LPC up to 5.5 kHz, or 3.8 kHz for telephone-band audio). The channels \
            of a multichannel file are mixed. These are the figures the presets aim from.
            """)

    @Argument(help: ArgumentHelp("Audio file to measure (any format libsndfile reads).", valueName: "in"))
    var input: String

    @Flag(help: "Print one JSON object instead: f0_median_hz, f0_spread_semitones, vocal_tract_length_cm, voiced_seconds.")
    var json = false

    func run() throws {
        let profile = try SpeakerProfile(file: input)
        if json {
            print(profile.json)
        } else {
            print(profile.text)
        }
    }
}

extension SpeakerProfile {
    /// The profile as `koe profile --json` prints it, keys sorted; a length that could not be estimated is null.
    var jsonObject: [String: Any] {
        [
            "f0_median_hz": f0Median.roundedTo(2), "f0_spread_semitones": f0Spread.roundedTo(2),
            "vocal_tract_length_cm": vocalTractLength.isFinite ? vocalTractLength.roundedTo(2) : NSNull(),
            "voiced_seconds": voicedSeconds.roundedTo(2),
        ]
    }

    /// The profile `koe profile --json` wrote into the file at `path`. Throws `KoeError.badInput` naming the file
    /// for one that cannot be read, is not such an object, or holds a median F0 out of a median's range
    /// (`pitch_median`'s) or a length that is not a positive number (null: unknown).
    init(json path: String) throws(KoeError) {
        func refuse(_ reason: String) -> KoeError { .badInput(source: path, reason: reason) }
        guard let data = FileManager.default.contents(atPath: path) else { throw refuse("cannot be read") }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw refuse("is not a JSON object as koe profile --json writes one")
        }
        func number(_ key: String) -> Double? { object[key] as? Double }
        guard let median = number("f0_median_hz") else { throw refuse("has no number f0_median_hz") }
        if let problem = Setting.pitchMedian.problem(median, as: "its f0_median_hz") { throw refuse(problem) }
        var length = Double.nan
        if !(object["vocal_tract_length_cm"] is NSNull) {
            guard let value = number("vocal_tract_length_cm"), value > 0, value.isFinite else {
                throw refuse("its vocal_tract_length_cm must be a positive number of cm, or null when unknown")
            }
            length = value
        }
        self.init(
            f0Median: median, f0Spread: number("f0_spread_semitones") ?? 0, vocalTractLength: length,
            voicedSeconds: number("voiced_seconds") ?? 0)
    }

    var json: String { jsonLine(jsonObject) }

    /// The profile in lines a person reads.
    var text: String {
        let length = vocalTractLength.isFinite ? String(format: "%.1f cm", vocalTractLength) : "unknown (no formants found)"
        return """
            f0 median     \(String(format: "%.1f", f0Median)) Hz
            f0 spread     \(String(format: "%.1f", f0Spread)) semitones (10th to 90th percentile)
            vocal tract   \(length)
            voiced        \(String(format: "%.2f", voicedSeconds)) s
            """
    }
}

extension Double {
    /// Rounded to `places` decimals, for JSON a person reads too.
    func roundedTo(_ places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
