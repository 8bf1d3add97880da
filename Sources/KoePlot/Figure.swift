import Foundation
import KoeIO
import KoeWorld

/// One recording to draw: mono samples at their rate; `name` titles its panel.
struct Recording: Sendable {
    var name: String
    var samples: [Double]
    var sampleRate: Int

    init(name: String, samples: [Double], sampleRate: Int) {
        self.name = name
        self.samples = samples
        self.sampleRate = sampleRate
    }

    /// An audio file, its channels averaged, named by its file name.
    init(contentsOf path: String) throws {
        let file = try AudioFile(reading: path)
        let channels = try file.readAll()
        var mono = [Double](repeating: 0, count: channels[0].count)
        for channel in channels {
            for index in mono.indices { mono[index] += channel[index] / Double(channels.count) }
        }
        self.init(name: path.split(separator: "/").last.map(String.init) ?? path, samples: mono, sampleRate: file.sampleRate)
    }

    var seconds: Double { Double(samples.count) / Double(sampleRate) }
}

/// What a figure shows.
package struct PlotOptions: Sendable, Equatable {
    /// The F0 estimator of the track drawn over the spectrogram (default DIO refined by StoneMask).
    package var f0Method = AnalysisOptions.F0Method.dio
    /// The F0 search range, in Hz (default WORLD's, 71 to 800 Hz).
    var f0Range = 71.0...800
    /// The span of input time drawn, in seconds, cut at the end of the longest recording (default nil: from 0 to
    /// that end).
    package var timeRange: ClosedRange<Double>?
    /// The frequency axis, in Hz, logarithmic; its top is lowered to the lowest Nyquist frequency of the
    /// recordings (default 50 Hz to 10 kHz).
    var frequencyRange = 50.0...10_000
    /// Levels drawn, in dB below the loudest bin of all the recordings; quieter is black (default 80).
    var dynamicRange = 80.0

    package init() {}
}

/// A figure of one or more recordings, one panel each, stacked on a shared time axis: the spectrogram on a
/// log-frequency axis with each recording's F0 track over it, its own solid, the others' dashed, so that a
/// before/after pair reads at a glance; one colour scale for all, in dB below the loudest bin.
struct Figure {
    /// The figure as an SVG document, the spectrograms embedded as PNG images.
    let svg: String
    /// Size in SVG pixels.
    let width: Double
    let height: Double

    /// Panel colours of the F0 tracks, in recording order: cyan and lime read on every colour of the map.
    private static let trackColors = [RGB(red: 0.25, green: 0.85, blue: 1), RGB(red: 0.65, green: 1, blue: 0.3)]

    init(_ recordings: [Recording], options: PlotOptions = PlotOptions()) throws(PlotError) {
        guard (1...Self.trackColors.count).contains(recordings.count) else {
            throw PlotError("a figure shows 1 or \(Self.trackColors.count) recordings (got \(recordings.count))")
        }
        let longest = recordings.map(\.seconds).max() ?? 0
        let wanted = options.timeRange ?? 0...longest
        guard wanted.lowerBound >= 0, wanted.lowerBound < longest else {
            throw PlotError(String(format: "the time range must start between 0 and the end of the longest recording, %.3f s (got %g s)", longest, wanted.lowerBound))
        }
        let span = wanted.lowerBound...min(wanted.upperBound, longest)
        let nyquist = recordings.map { Double($0.sampleRate) / 2 }.min() ?? 0
        let frequencies = options.frequencyRange.lowerBound...min(options.frequencyRange.upperBound, nyquist)
        guard frequencies.lowerBound > 0, frequencies.upperBound > frequencies.lowerBound * 2 else {
            throw PlotError("the frequency axis needs an octave at least below the Nyquist frequency (\(nyquist) Hz)")
        }
        let layout = Layout(panels: recordings.count)
        let tracks = try recordings.map { recording throws(PlotError) in try Self.f0Track(of: recording, options: options) }
        let spectrograms = recordings.map { recording in
            LogSpectrogram(
                recording.samples, sampleRate: recording.sampleRate, span: span, frequencies: frequencies,
                columns: Int(layout.plotWidth * Layout.imageScale), rows: Int(Layout.plotHeight * Layout.imageScale))
        }
        let loudest = spectrograms.map(\.loudest).max() ?? 0
        let axes = Axes(layout: layout, span: span, frequencies: frequencies)

        var svg = SVG()
        for (index, recording) in recordings.enumerated() {
            let top = layout.plotTop(panel: index)
            let image = try Self.image(spectrograms[index], loudest: loudest, dynamicRange: options.dynamicRange)
            svg.image(png: image, x: layout.plotLeft, y: top, width: layout.plotWidth, height: Layout.plotHeight)
            for (other, track) in tracks.enumerated() where other != index {
                svg.drawTrack(track, on: axes, top: top, color: Self.trackColors[other].hex, dashed: true)
            }
            svg.drawTrack(tracks[index], on: axes, top: top, color: Self.trackColors[index].hex, dashed: false)
            axes.draw(on: &svg, top: top)
            svg.text(recording.name, x: layout.plotLeft, y: top - 10, size: 14, weight: "bold")
            let details = String(format: "%g kHz, F0: ", Double(recording.sampleRate) / 1000) + options.f0Method.displayName
            svg.text(details, x: layout.plotLeft + layout.titleWidth(recording.name), y: top - 10, size: 12, fill: "#555")
            if recordings.count > 1 { Self.legend(on: &svg, recordings: recordings, panel: index, layout: layout, top: top) }
        }
        svg.text("Time (s)", x: layout.plotLeft + layout.plotWidth / 2, y: layout.height - 10, size: 14, anchor: .middle)
        try Self.colorBar(on: &svg, layout: layout, dynamicRange: options.dynamicRange)
        width = Layout.width
        height = layout.height
        self.svg = svg.document(width: width, height: height)
    }

    /// The figure rasterised by librsvg, `scale` pixels for each SVG pixel (2: 1920 pixels wide).
    func png(scale: Double = 2) throws(PlotError) -> [UInt8] {
        try SVGDocument(svg).rasterized(width: width, height: height, scale: scale).png()
    }

    // MARK: Steps

    /// WORLD's F0 of the whole recording: (time, Hz) a frame, 0 where unvoiced.
    private static func f0Track(of recording: Recording, options: PlotOptions) throws(PlotError) -> [(Double, Double)] {
        let (signal, sampleRate) = (recording.samples, recording.sampleRate)
        do {
            var analysis = AnalysisOptions()
            analysis.f0Method = options.f0Method
            analysis.f0Floor = options.f0Range.lowerBound
            analysis.f0Ceil = options.f0Range.upperBound
            let contour = try F0Contour(estimating: signal, sampleRate: sampleRate, options: analysis)
            return Array(zip(contour.time, contour.f0))
        } catch {
            throw PlotError("\(recording.name): \(error)")
        }
    }

    /// The spectrogram's levels through the colour map, as a PNG.
    private static func image(_ spectrogram: LogSpectrogram, loudest: Double, dynamicRange: Double) throws(PlotError) -> [UInt8] {
        let image = try ImageSurface(width: spectrogram.columns, height: spectrogram.rows)
        image.paint { x, y in
            ColorMap.color((spectrogram.level(row: y, column: x) - loudest + dynamicRange) / dynamicRange)
        }
        return try image.png()
    }

    /// Which line is whose, at the right of the panel's title: its own solid, the others dashed.
    private static func legend(on svg: inout SVG, recordings: [Recording], panel: Int, layout: Layout, top: Double) {
        var x = layout.plotLeft + layout.plotWidth
        for index in recordings.indices.reversed() {
            let label = "F0 " + recordings[index].name
            x -= layout.textWidth(label, size: 12)
            svg.text(label, x: x, y: top - 10, size: 12)
            x -= 30
            svg.haloedPolyline([(x, top - 14), (x + 24, top - 14)], color: trackColors[index].hex, dashed: index != panel)
            x -= 14
        }
    }

    /// The colour scale beside the panels, loudest at the top, with its dB ticks.
    private static func colorBar(on svg: inout SVG, layout: Layout, dynamicRange: Double) throws(PlotError) {
        let top = layout.plotTop(panel: 0)
        let bottom = layout.plotTop(panel: layout.panels - 1) + Layout.plotHeight
        let x = layout.plotLeft + layout.plotWidth + 18
        let gradient = try ImageSurface(width: 1, height: 256)
        gradient.paint { _, y in ColorMap.color(1 - Double(y) / 255) }
        svg.image(png: try gradient.png(), x: x, y: top, width: 14, height: bottom - top)
        svg.rect(x: x, y: top, width: 14, height: bottom - top, stroke: "#222")
        let step = dynamicRange > 60 ? 20.0 : 10
        for level in stride(from: 0, through: -dynamicRange, by: -step) {
            let y = top + (bottom - top) * (-level / dynamicRange)
            svg.line(x + 14, y, x + 18, y)
            svg.text(String(format: "%.0f", level), x: x + 21, y: y + 4, size: 11)
        }
        svg.text("level (dB re peak)", x: x + 58, y: (top + bottom) / 2, size: 12, anchor: .middle, rotated: true)
    }
}

extension SVG {
    /// The voiced runs of `track` inside the plot, each a line.
    fileprivate mutating func drawTrack(_ track: [(Double, Double)], on axes: Axes, top: Double, color: String, dashed: Bool) {
        var run: [(Double, Double)] = []
        func finishRun() {
            if run.count > 1 { haloedPolyline(run, color: color, dashed: dashed) }
            run.removeAll(keepingCapacity: true)
        }
        for (time, f0) in track {
            guard f0 > 0, let point = axes.point(time: time, frequency: f0, top: top) else {
                finishRun()
                continue
            }
            run.append(point)
        }
        finishRun()
    }
}

/// Where things go, in SVG pixels.
private struct Layout {
    static let width = 960.0
    static let plotHeight = 280.0
    /// Spectrogram pixels for each SVG pixel: a PNG at twice the size stays sharp.
    static let imageScale = 2.0
    private static let top = 12.0
    private static let titleBand = 30.0
    private static let tickBand = 26.0
    private static let gap = 10.0
    private static let bottom = 30.0

    let panels: Int
    let plotLeft = 72.0
    var plotWidth: Double { Self.width - plotLeft - 120 }
    var height: Double {
        Self.top + Double(panels) * (Self.titleBand + Self.plotHeight + Self.tickBand) + Double(panels - 1) * Self.gap + Self.bottom
    }

    func plotTop(panel: Int) -> Double {
        Self.top + Self.titleBand + Double(panel) * (Self.titleBand + Self.plotHeight + Self.tickBand + Self.gap)
    }

    /// About how wide DejaVu Sans sets `text`: 0.6 of the size a character, a little more in bold.
    func textWidth(_ text: String, size: Double) -> Double {
        Double(text.count) * size * 0.6
    }

    func titleWidth(_ title: String) -> Double {
        Double(title.count) * 14 * 0.66 + 12
    }
}

/// The time and frequency axes of a panel: positions, ticks and labels.
private struct Axes {
    let layout: Layout
    let span: ClosedRange<Double>
    let frequencies: ClosedRange<Double>

    /// The point of (time, frequency) in a panel whose plot starts at `top`; nil outside the plot.
    func point(time: Double, frequency: Double, top: Double) -> (Double, Double)? {
        guard span.contains(time), frequencies.contains(frequency) else { return nil }
        let x = layout.plotLeft + (time - span.lowerBound) / (span.upperBound - span.lowerBound) * layout.plotWidth
        return (x, y(frequency, top: top))
    }

    private func y(_ frequency: Double, top: Double) -> Double {
        top + Layout.plotHeight * (1 - log(frequency / frequencies.lowerBound) / log(frequencies.upperBound / frequencies.lowerBound))
    }

    func draw(on svg: inout SVG, top: Double) {
        let left = layout.plotLeft
        let bottom = top + Layout.plotHeight
        svg.rect(x: left, y: top, width: layout.plotWidth, height: Layout.plotHeight, stroke: "#222")
        let (major, minor) = Ticks.logarithmic(frequencies)
        for tick in major {
            let y = y(tick.value, top: top)
            svg.line(left - 6, y, left, y)
            svg.text(tick.label, x: left - 9, y: y + 4, size: 12, anchor: .end)
        }
        for value in minor {
            let y = y(value, top: top)
            svg.line(left - 3, y, left, y)
        }
        svg.text("Frequency (Hz)", x: 18, y: top + Layout.plotHeight / 2, size: 14, anchor: .middle, rotated: true)
        for tick in Ticks.linear(span) {
            let x = left + (tick.value - span.lowerBound) / (span.upperBound - span.lowerBound) * layout.plotWidth
            svg.line(x, bottom, x, bottom + 6)
            svg.text(tick.label, x: x, y: bottom + 19, size: 12, anchor: .middle)
        }
    }
}

/// Draws `inputs` (one or two audio files, channels averaged) into `output`: SVG or PNG by its extension,
/// written whole or not at all.
package func writePlot(of inputs: [String], to output: String, options: PlotOptions = PlotOptions()) throws {
    let isPNG = output.lowercased().hasSuffix(".png")
    guard isPNG || output.lowercased().hasSuffix(".svg") else {
        throw PlotError("\(output): a plot is written as .svg or .png")
    }
    let figure = try Figure(try inputs.map { try Recording(contentsOf: $0) }, options: options)
    let bytes = isPNG ? try figure.png() : Array(figure.svg.utf8)
    // In place: FileManager's createFile would add a temporary beside `temporary`, left behind by a kill.
    try AtomicOutput.write(to: output) { temporary in
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw IOError.writeFailed(path: output, reason: "could not write the file")
        }
    }
}

extension AnalysisOptions.F0Method {
    /// As a figure's caption names the estimator.
    fileprivate var displayName: String {
        switch self {
        case .dio: "DIO + StoneMask"
        case .harvest: "Harvest"
        }
    }
}
