import Foundation
import KoeWorld

/// The vocoder stage: WORLD analysis of the stream, the voice changes frame by frame, and WORLD synthesis.
///
/// Output is aligned with the input and exactly `round(input / tempo)` samples long: the stage holds back
/// what the analyser and synthesiser still need, and drains it when the stream ends.
public final class VoiceShift: Stage {
    public let sampleRate: Int
    public let voice: VoiceSettings

    private let analyzer: StreamingAnalyzer
    private let synthesizer: StreamingSynthesizer
    private var modifier: FrameModifier
    private var timeline: TempoTimeline
    private var scratch: ParameterFrame
    private var inputMedian = MedianTracker()
    private var outputMedian = MedianTracker()
    private var received = 0
    private var emitted = 0
    private var pending: [Double] = []

    public init(sampleRate: Int, voice: VoiceSettings, analysis: StreamingAnalyzer.Options = .init()) {
        self.sampleRate = sampleRate
        self.voice = voice
        analyzer = StreamingAnalyzer(sampleRate: sampleRate, options: analysis)
        synthesizer = StreamingSynthesizer(
            sampleRate: sampleRate, framePeriod: analysis.framePeriod, fftSize: analyzer.fftSize)
        modifier = FrameModifier(voice: voice, sampleRate: sampleRate, fftSize: analyzer.fftSize)
        timeline = TempoTimeline(tempo: voice.tempo, bins: analyzer.fftSize / 2 + 1)
        scratch = ParameterFrame(bins: analyzer.fftSize / 2 + 1)
    }

    public var latency: Int { analyzer.latency + synthesizer.latency }

    /// Median F0 of the voiced input frames so far, in Hz; nil before any.
    public var medianInputF0: Double? { inputMedian.value > 0 ? inputMedian.value : nil }

    /// Median F0 of the voiced frames sent to synthesis so far, in Hz; nil before any.
    public var medianOutputF0: Double? { outputMedian.value > 0 ? outputMedian.value : nil }

    public var lengthRatio: Double { 1 / voice.tempo }

    public func process(_ input: [Double], isFinal: Bool) throws -> [Double] {
        received += input.count
        for block in try analyzer.push(input) {
            feed(block)
        }
        if isFinal {
            for block in try analyzer.finish() {
                feed(block)
            }
            feedRemainingFrames()
            _ = synthesizer.finish(into: &pending)
        } else {
            _ = synthesizer.drain(into: &pending)
        }
        return release(isFinal: isFinal)
    }

    private func feed(_ block: StreamingAnalyzer.Block) {
        for row in 0..<block.f0.count {
            modifier.modify(
                f0: block.f0[row], spectrogram: block.spectrogram, aperiodicity: block.aperiodicity, row: row,
                into: &scratch)
            if block.f0[row] > 0 { inputMedian.add(block.f0[row]) }
            if scratch.f0 > 0 { outputMedian.add(scratch.f0) }
            timeline.add(&scratch)
            while let output = timeline.nextOutputFrame() {
                append(output)
            }
        }
    }

    /// At the end, output frames past the last input frame hold the last frame, until WORLD's frame count
    /// for the output length is reached.
    private func feedRemainingFrames() {
        let total = F0Contour.frameCount(
            samples: outputLength, sampleRate: sampleRate, framePeriod: analyzer.options.framePeriod)
        while timeline.emittedFrames < total, let output = timeline.holdingLastFrame() {
            append(output)
        }
    }

    private func append(_ frame: ParameterFrame) {
        frame.spectrum.withUnsafeBufferPointer { spectrum in
            frame.aperiodicity.withUnsafeBufferPointer { aperiodicity in
                synthesizer.append(f0: frame.f0, spectrum: spectrum, aperiodicity: aperiodicity)
            }
        }
    }

    private var outputLength: Int {
        Int((Double(received) / voice.tempo).rounded())
    }

    /// Hands out what is ready, never past the output length; the final call pads a short synthesis with silence.
    private func release(isFinal: Bool) -> [Double] {
        let limit = isFinal ? outputLength : min(outputLength, emitted + pending.count)
        var count = min(pending.count, max(0, limit - emitted))
        var output = Array(pending.prefix(count))
        pending.removeFirst(count)
        if isFinal, emitted + count < limit {
            output.append(contentsOf: repeatElement(0, count: limit - emitted - count))
            count = limit - emitted
        }
        emitted += count
        if isFinal { pending.removeAll() }
        return output
    }
}
