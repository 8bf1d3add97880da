import ArgumentParser
import Koe
import KoePlot

struct Plot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw the spectrogram and F0 track of a recording, or of two (before and after) stacked.",
        discussion: """
            Each recording gets a panel: its spectrogram on a logarithmic frequency axis (50 Hz to 10 kHz, or the \
            Nyquist frequency), in dB below the loudest bin of the figure, with its F0 track (WORLD's DIO or \
            Harvest) drawn over it in Hz. With two recordings both panels share the time axis and the colour \
            scale, and each shows the other's F0 dashed. A recording's channels are averaged. The figure is \
            SVG (text; the spectrograms embedded as PNG) or PNG (the SVG rasterised by librsvg, 1920 pixels \
            wide), by the output's extension; it appears only when complete.
            """
    )

    @Argument(help: ArgumentHelp("Audio file to draw.", valueName: "in"))
    var input: String

    @Argument(help: ArgumentHelp("A second audio file, drawn below the first.", valueName: "in2"))
    var secondInput: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("The figure: a .svg or .png file.", valueName: "file"))
    var output: String

    @Option(name: .customLong("f0-method"), help: ArgumentHelp("F0 estimator of the tracks.", valueName: "dio|harvest"))
    var f0Method = AnalysisOptions.F0Method.dio

    @Option(help: ArgumentHelp(
        "Span of time drawn, in seconds: START:END, START: (to the end) or :END (default: all).", valueName: "start:end"))
    var range: String?

    func validate() throws {
        let name = output.lowercased()
        guard name.hasSuffix(".svg") || name.hasSuffix(".png") else {
            throw ValidationError("-o \(output): a plot is written as .svg or .png")
        }
        _ = try timeRange()
    }

    func run() throws {
        var options = PlotOptions()
        options.f0Method = f0Method
        options.timeRange = try timeRange()
        try writePlot(of: [input] + (secondInput.map { [$0] } ?? []), to: output, options: options)
    }

    /// `--range`, with an open end reaching the end of the longest input.
    private func timeRange() throws -> ClosedRange<Double>? {
        guard let range else { return nil }
        let fields = range.split(separator: ":", omittingEmptySubsequences: false)
        let start = fields.first.flatMap { $0.isEmpty ? 0 : Double($0) }
        let end = fields.count == 2 ? (fields[1].isEmpty ? Double.greatestFiniteMagnitude : Double(fields[1])) : nil
        guard fields.count == 2, let start, let end, start.isFinite, start >= 0, end > start else {
            throw ValidationError("--range \(range): expected START:END in seconds, 0 <= START < END (such as 0.5:2)")
        }
        return start...end
    }
}
