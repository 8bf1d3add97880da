import ArgumentParser
import Koe


struct Presets: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the named voices for `koe convert --preset`.")

    func run() {
        let width = Preset.all.map(\.name.count).max() ?? 0
        for preset in Preset.all {
            let name = preset.name.padding(toLength: width, withPad: " ", startingAt: 0)
            print("\(name)  \(preset.summary)  [\(settings(of: preset))]")
        }
    }

    /// The preset as the options that would give the same voice.
    private func settings(of preset: Preset) -> String {
        let voice = preset.voice
        var parts: [String] = []
        if voice.pitch != 1 { parts.append("--pitch \(voice.pitch)") }
        if voice.pitchRange != 1 { parts.append("--pitch-range \(voice.pitchRange)") }
        if voice.formant != 1 { parts.append("--formant \(voice.formant)") }
        if voice.tempo != 1 { parts.append("--tempo \(voice.tempo)") }
        if voice.whisper { parts.append("whisper") }
        parts += preset.bands.map { "--eq \($0)" }
        return parts.joined(separator: " ")
    }
}
