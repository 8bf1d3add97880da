import ArgumentParser
import Koe
import KoeBatch
import KoeIO

extension SampleEncoding: ExpressibleByArgument {}

struct Synth: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Synthesize speech from WORLD parameters written by `koe analyze`.",
        discussion: """
            Reads f0.npy, sp.npy, ap.npy and meta.json (sample_rate and frame_period are required) from the \
            folder. The output's extension picks its format (.wav, .flac, .aiff, .ogg, ...), 16-bit PCM where \
            the format holds PCM. Samples beyond full scale are clipped, with a warning.
            """
    )

    @Argument(help: ArgumentHelp("Folder written by `koe analyze`.", valueName: "dir"))
    var parameters: String

    @Argument(help: ArgumentHelp("Audio file to write.", valueName: "out"))
    var output: String

    @Option(help: ArgumentHelp(
        "Sample encoding of the output, where its format holds it (default: 16-bit PCM).",
        valueName: SampleEncoding.allCases.map(\.rawValue).joined(separator: "|")))
    var encoding: SampleEncoding?

    func run() throws {
        let parameters = try WorldParameters(folder: self.parameters)
        let format = try AudioFormat.forWriting(output, sampleRate: parameters.sampleRate, channels: 1, encoding: encoding)
        let destination = try AtomicOutput(destination: output)
        let waveform = try parameters.synthesize()
        try destination.fill { path in
            let file = try AudioFile(writing: path, sampleRate: parameters.sampleRate, channels: 1, format: format)
            try file.write(channels: [waveform])
            try file.close()
        }
        try destination.commit()
        reportClipping(waveform)
    }

    private func reportClipping(_ waveform: [Double]) {
        let clipped = waveform.lazy.filter { abs($0) > 1 }.count
        guard clipped > 0 else { return }
        let peak = ((waveform.lazy.map(abs).max() ?? 0) * 1000).rounded(.up) / 1000
        let were = clipped == 1 ? "was" : "were"
        Report.warning("\(clipped) of \(waveform.count) samples \(were) beyond full scale (peak \(peak)) and clipped in \(output)")
    }
}
