/// A named voice: vocoder settings and equalizer bands that go with them.
/// Explicit options given alongside a preset override its values.
public struct Preset: Sendable {
    public let name: String
    public let summary: String
    public let voice: VoiceSettings
    /// The bands as designed; `bands(sampleRate:)` gives those a recording can take.
    package let bands: [EqualizerBand]

    public static func named(_ name: String) -> Preset? {
        all.first { $0.name == name.lowercased() }
    }

    /// Every preset, in the order `koe presets` lists them.
    public static let all: [Preset] = [
        Preset("kawaii", "bright, high anime-style voice", bands: ["highshelf:5000:3"]) {
            $0.pitch = 1.6
            $0.formant = 1.2
        },
        Preset("child", "a child's voice: higher pitch, smaller vocal tract") {
            $0.pitch = 1.5
            $0.formant = 1.3
        },
        Preset("female", "a lower voice moved to a typical female range") {
            $0.pitch = 1.7
            $0.formant = 1.15
        },
        Preset("male", "a higher voice moved to a typical male range") {
            $0.pitch = 0.6
            $0.formant = 0.87
        },
        Preset("deep", "deeper, darker voice", bands: ["lowshelf:150:3"]) {
            $0.pitch = 0.75
            $0.formant = 0.9
        },
        Preset("giant", "huge and slow: very low pitch, large vocal tract", bands: ["lowshelf:120:4"]) {
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

    private init(_ name: String, _ summary: String, bands: [String] = [], voice change: (inout VoiceSettings) -> Void) {
        self.name = name
        self.summary = summary
        var voice = VoiceSettings()
        change(&voice)
        self.voice = voice
        // The table's band specs are fixed text; a typo in them is a programming error caught by the tests.
        self.bands = bands.map { try! EqualizerBand(parsing: $0) }
    }
}
