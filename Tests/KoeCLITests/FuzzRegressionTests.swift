import Foundation
import KoeIO
import Testing
import TestSupport

/// Command lines the fuzzers (Tests/Fuzz) found crashing, hanging or misread, run through the binary:
/// each must now end in a clean refusal or a correct conversion.
@Suite struct FuzzRegressionTests {
    let koe = CommandRunner()

    /// Values that crashed koe (an allocation past memory, an infinite F0 converted to Int) or made it run
    /// towards an endless output, now refused before any audio is read.
    @Test(arguments: [
        ["--chunk-size", "9223372036854775807"], ["--chunk-size", "100000000000"], ["--tempo", "1e-5"],
        ["--tempo", "1e300"], ["--pitch", "1e307"], ["--pitch-range", "1e300"], ["--pitch-median", "1e307", "--pitch", "16"],
    ])
    func outOfRangeValuesAreRefused(options: [String]) throws {
        try koe.writeVowel(duration: 0.1)
        try koe.expectRefusal(["vowel.wav", "out.wav"] + options, mentioning: options[0])
    }

    /// Negative numbers after an option were taken for options themselves ("Missing value for '--gain'").
    @Test(arguments: [["--semitones", "-3"], ["--gain", "-6"], ["--geq", "-3,0,0,0,0,0,0,0,0,-2"]])
    func negativeValuesAreRead(options: [String]) throws {
        try koe.writeVowel(sampleRate: 48000, duration: 0.1)
        try koe.expectConverted(try koe.runBounded(["vowel.wav", "out.wav"] + options), from: "vowel.wav", to: "out.wav")
    }

    /// A negative value where only a positive one makes sense is read as the value and refused by its range check,
    /// naming the option, where it was taken for a flag ("Missing value for '--pitch <ratio>'").
    @Test(arguments: [
        ["--pitch", "-1"], ["--formant", "-2"], ["--tempo", "-1"], ["--frame-period", "-5"], ["--f0-floor", "-10"],
        ["--threads", "-2"], ["--chunk-size", "-1"], ["--look-ahead", "-3"], ["--pitch-median", "-100"],
    ])
    func negativeValuesAreRefusedByTheirRange(options: [String]) throws {
        try koe.writeVowel(duration: 0.1)
        try koe.expectRefusal(["vowel.wav", "out.wav"] + options, mentioning: "\(options[0]) must be")
    }

    /// An EQ gain whose amplitude 10^(dB/40) overflows once turned every sample into NaN; gains are now
    /// limited to ±60 dB and such a band is refused.
    @Test(arguments: [["--eq", "peak:1000:20000"], ["--geq", "3,22,3,21,3,221,3,2,3,22223"]])
    func overflowingEqualizerGain(options: [String]) throws {
        let vowel = Signals.vowel(f0: 150, sampleRate: 48000, duration: 0.1)
        try koe.writeAudio(vowel, sampleRate: 48000, to: "float.wav", encoding: .float32)
        try koe.expectRefusal(try koe.runBounded(["float.wav", "out.wav"] + options), mentioning: "between -60 and 60 dB")
    }
}
