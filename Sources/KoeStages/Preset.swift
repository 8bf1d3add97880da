import Glibc

/// A named voice: vocoder settings and equalizer bands that go with them.
/// Explicit options given alongside a preset override its values.
///
/// A voice preset (`female`, `male`, `kawaii`, `child`, `deep`, `giant`) also names a `target`: a median F0 and
/// a vocal-tract length from published measurements. A conversion of a file measures the speaker first
/// (`SpeakerProfile`) and computes the ratios that move that voice to the target (`aim(for:)`); a stream and a
/// live changer estimate the profile as the voice runs (`Aiming`). `voice` keeps a typical speaker's ratios,
/// which hold until the profile is known. Effects (`chipmunk`, `robot`, `whisper`) have no target.
public struct Preset: Sendable {
    public let name: String
    public let summary: String
    public let voice: VoiceSettings
    /// The bands as designed; `bands(sampleRate:)` gives those a recording can take.
    package let bands: [EqualizerBand]
    /// The voice the preset aims at; nil for an effect.
    package let target: Target?

    /// What a voice preset aims at.
    package struct Target: Sendable, Equatable {
        /// Median F0 of the voice, in Hz.
        package let f0Median: Double
        /// Vocal-tract length, in cm: the formant ratio is the speaker's length over this.
        package let vocalTractLength: Double
        /// Where the figures come from.
        package let source: String
    }

    /// The ratios a speaker takes to reach a target, within bounds a vocoder keeps natural.
    package struct Aim: Sendable, Equatable {
        package var pitch: Double
        package var formant: Double
        /// Whether the pitch or the formant ratio the target asked for was beyond its bounds.
        package let pitchClamped: Bool
        package let formantClamped: Bool
        /// The ratios before the bounds.
        package let wantedPitch: Double
        package let wantedFormant: Double

        package var clamped: Bool { pitchClamped || formantClamped }

        /// The aim where only the ratios that aim count: a bound bites only where the ratio is the target's.
        package func applied(pitch aimsPitch: Bool, formant aimsFormant: Bool) -> Aim {
            Aim(
                pitch: pitch, formant: formant, pitchClamped: aimsPitch && pitchClamped,
                formantClamped: aimsFormant && formantClamped, wantedPitch: wantedPitch, wantedFormant: wantedFormant)
        }
    }

    /// A deep voice must still reach `kawaii` (2.5 octaves would be 5.7), yet no ratio may turn speech into a
    /// squeak or a growl: pitch within 0.4 to 4, formants within 0.75 to 1.35 (adult tracts span about 14.5 to
    /// 18 cm, a ratio of 1.24; a child's reaches about 1.35).
    package static let pitchBounds = 0.4...4.0
    package static let formantBounds = 0.75...1.35
    /// A measured vocal-tract length is taken within the adult span before the formant ratio is formed: an
    /// estimate beyond it (from telephone-band audio, a voice with few vowels) says less than the span does.
    static let speakerTractSpan = 14.5...18.0
    /// How far (octaves) the vocoder's median F0 may sit from the voice's before the ratio follows the vocoder's.
    static let octaveOff = 0.75

    /// The ratios that move `profile`'s voice to the target; nil for an effect (see `Aiming.aim(for:vocoderMedian:)`).
    package func aim(for profile: SpeakerProfile, vocoderMedian: Double? = nil) -> Aim? {
        aiming?.aim(for: profile, vocoderMedian: vocoderMedian)
    }

    /// The target as a stream's voice carries it (`VoiceSettings.aiming`), with this preset's own ratios; nil for
    /// an effect.
    package var aiming: Aiming? {
        target.map { Aiming(target: $0, typicalPitch: voice.pitch, typicalFormant: voice.formant) }
    }

    /// A voice preset's target as a voice carries it while it plays: the ratios aim at it from the speaker's
    /// profile, which a stream estimates as it runs. Until the profile is known, and for a ratio that does not aim,
    /// the voice's own ratio holds; a ratio aims only while it is still the preset's own (`VoiceSettings.aimsPitch`),
    /// so a ratio set explicitly means what it says.
    package struct Aiming: Sendable, Equatable {
        package let target: Target
        /// The preset's ratios: a typical speaker's.
        package let typicalPitch: Double
        package let typicalFormant: Double
        /// Which ratios aim (a conversion's settings turn one off when it is set explicitly).
        package var aimsPitch = true
        package var aimsFormant = true

        /// How fast an aimed ratio moves toward what the profile asks, in semitones a second: from a typical
        /// speaker's ratio to a deep voice's (an octave and more) in about a second, a sweep rather than a jump, and
        /// well within 1 semitone in any 50 ms.
        static let semitonesPerSecond = 12.0

        init(target: Target, typicalPitch: Double, typicalFormant: Double) {
            self.target = target
            self.typicalPitch = typicalPitch
            self.typicalFormant = typicalFormant
        }

        /// The ratios that move `profile`'s voice to the target. Pitch: the target's median over the speaker's.
        /// Formant: the speaker's vocal-tract length (within the adult span) over the target's; the preset's own
        /// ratio where the length could not be measured.
        ///
        /// `vocoderMedian` is the median of the F0 the vocoder will scale (DIO's), where known. The output's F0 is
        /// that F0 times the ratio, so where it sits an octave or more from the voice's (a voice whose fundamental a
        /// radio band removed, which DIO and Harvest read at its second harmonic), the ratio is taken from it: the
        /// output then lands on the target although the vocoder's F0 is the wrong octave. Nearer than that, the
        /// profile's median, which octave errors of single frames do not move, decides.
        package func aim(for profile: SpeakerProfile, vocoderMedian: Double?) -> Aim {
            var voiceMedian = profile.f0Median
            if let vocoderMedian, vocoderMedian > 0, abs(log2(vocoderMedian / voiceMedian)) > Preset.octaveOff {
                voiceMedian = vocoderMedian
            }
            let wantedPitch = target.f0Median / voiceMedian
            let span = Preset.speakerTractSpan
            let speakerLength = profile.vocalTractLength.isFinite
                ? min(max(profile.vocalTractLength, span.lowerBound), span.upperBound) : nil
            let wantedFormant = speakerLength.map { $0 / target.vocalTractLength } ?? typicalFormant
            let pitch = min(max(wantedPitch, Preset.pitchBounds.lowerBound), Preset.pitchBounds.upperBound)
            let formant = min(max(wantedFormant, Preset.formantBounds.lowerBound), Preset.formantBounds.upperBound)
            return Aim(
                pitch: pitch, formant: formant, pitchClamped: pitch != wantedPitch, formantClamped: formant != wantedFormant,
                wantedPitch: wantedPitch, wantedFormant: wantedFormant)
        }
    }

    public static func named(_ name: String) -> Preset? {
        all.first { $0.name == name.lowercased() }
    }

    // Targets. F0: mean speaking F0 of adults in running speech, about 120 Hz for men and 210 Hz for women
    // (Traunmüller & Eriksson 1995, across languages; Titze 1994 gives the same round figures); children: 264 Hz
    // (Peterson & Barney 1952, read vowels). Vocal tracts: about 17 cm for men and 14.5 cm for women (Fitch &
    // Giedd 1999, MRI; the span the issue gives), children of 10 to 12 about 13 cm (Hillenbrand et al. 1995:
    // their formants about 1.3 times men's). kawaii: an anime-style voice above the female mean, where the CHI
    // 2025 "Super Kawaii Vocalics" study (N = 512) found cuteness rising with F0 and formants up to a sweet spot
    // that depends on the voice; 300 Hz and 13.5 cm sit half an octave and a few percent above the female
    // target. deep: a low bass speaking voice (about 90 Hz, a long 18.5 cm tract); giant: beyond any human.
    private static let female = Target(f0Median: 210, vocalTractLength: 14.5, source: "Traunmüller & Eriksson 1995; Fitch & Giedd 1999")
    private static let male = Target(f0Median: 120, vocalTractLength: 17, source: "Traunmüller & Eriksson 1995; Fitch & Giedd 1999")
    private static let child = Target(f0Median: 264, vocalTractLength: 13, source: "Peterson & Barney 1952; Hillenbrand et al. 1995")
    private static let kawaii = Target(f0Median: 300, vocalTractLength: 13.5, source: "above the female target, toward the sweet spots of Super Kawaii Vocalics (CHI 2025)")
    private static let deep = Target(f0Median: 90, vocalTractLength: 18.5, source: "a bass speaking voice (Titze 1994)")
    private static let giant = Target(f0Median: 65, vocalTractLength: 22, source: "beyond human: below a bass, a tract longer than any adult's")

    /// Every preset, in the order `koe presets` lists them.
    public static let all: [Preset] = [
        Preset("kawaii", "bright, high anime-style voice", target: kawaii, bands: ["highshelf:5000:3"]) {
            $0.pitch = 1.6
            $0.formant = 1.2
        },
        Preset("child", "a child's voice: higher pitch, smaller vocal tract", target: child) {
            $0.pitch = 1.5
            $0.formant = 1.3
        },
        Preset("female", "a typical adult female voice", target: female) {
            $0.pitch = 1.7
            $0.formant = 1.15
        },
        Preset("male", "a typical adult male voice", target: male) {
            $0.pitch = 0.6
            $0.formant = 0.87
        },
        Preset("deep", "deeper, darker voice", target: deep, bands: ["lowshelf:150:3"]) {
            $0.pitch = 0.75
            $0.formant = 0.9
        },
        Preset("giant", "huge and slow: very low pitch, large vocal tract", target: giant, bands: ["lowshelf:120:4"]) {
            $0.pitch = 0.55
            $0.formant = 0.75
            $0.tempo = 0.9
        },
        Preset("chipmunk", "fast, tiny, very high voice") {
            $0.pitch = 2
            $0.formant = 1.45
            $0.tempo = 1.15
        },
        Preset("robot", "monotone at the speaker's median pitch", bands: ["peak:1500:4:2"]) {
            $0.pitchRange = 0
        },
        Preset("whisper", "breath only: every frame noise-excited") {
            $0.whisper = true
        },
    ]

    /// The bands below the Nyquist frequency of `sampleRate`. A preset is made for any recording, so a band
    /// the rate cannot hold (kawaii's 5 kHz shelf at 8 kHz) is left out, where an explicit band would be refused.
    public func bands(sampleRate: Int) -> [EqualizerBand] {
        bands.filter { $0.frequency < Double(sampleRate) / 2 }
    }

    private init(
        _ name: String, _ summary: String, target: Target? = nil, bands: [String] = [],
        voice change: (inout VoiceSettings) -> Void
    ) {
        self.name = name
        self.summary = summary
        self.target = target
        var voice = VoiceSettings()
        change(&voice)
        self.voice = voice
        // The table's band specs are fixed text; a typo in them is a programming error caught by the tests.
        self.bands = bands.map { try! EqualizerBand(parsing: $0) }
    }
}
