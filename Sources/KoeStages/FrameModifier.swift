import Foundation
import KoeWorld

/// One frame of vocoder parameters, in buffers reused from frame to frame.
struct ParameterFrame {
    var f0: Double
    var spectrum: [Double]
    var aperiodicity: [Double]

    init(bins: Int) {
        f0 = 0
        spectrum = [Double](repeating: 0, count: bins)
        aperiodicity = [Double](repeating: 0, count: bins)
    }

    mutating func copy(from other: ParameterFrame) {
        f0 = other.f0
        spectrum.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: other.spectrum) }
        aperiodicity.withUnsafeMutableBufferPointer { _ = $0.update(fromContentsOf: other.aperiodicity) }
    }
}

/// Applies `VoiceSettings` to analysed frames: F0 ratio, median and range, formant warp, whisper.
struct FrameModifier {
    private let voice: VoiceSettings
    private var median = MedianTracker()
    private let warpedBins: [(index: Int, fraction: Double)]?

    init(voice: VoiceSettings, sampleRate: Int, fftSize: Int) {
        self.voice = voice
        warpedBins = voice.formantRatio == 1 ? nil : FrameModifier.warp(bins: fftSize / 2 + 1, ratio: voice.formantRatio)
    }

    /// For each output bin, where on the input axis its value comes from: bin `i` reads `i / ratio`,
    /// held at the last bin past Nyquist.
    private static func warp(bins: Int, ratio: Double) -> [(index: Int, fraction: Double)] {
        (0..<bins).map { bin in
            let source = min(Double(bin) / ratio, Double(bins - 1))
            let index = min(Int(source), bins - 2)
            return (index, source - Double(index))
        }
    }

    mutating func modify(
        f0: Double, spectrogram: Matrix, aperiodicity: Matrix, row: Int, into frame: inout ParameterFrame
    ) {
        frame.f0 = voice.whisper ? 0 : shiftedF0(f0)
        // Buffers taken once a frame: element writes through `frame` inside the row closures each paid for a
        // uniqueness check and an exclusivity check.
        frame.spectrum.withUnsafeMutableBufferPointer { spectrum in
            spectrogram.withRow(row) { source in
                if let warpedBins {
                    warpedBins.withUnsafeBufferPointer { warpedBins in
                        for (bin, from) in warpedBins.enumerated() {
                            spectrum[bin] = source[from.index] + from.fraction * (source[from.index + 1] - source[from.index])
                        }
                    }
                } else {
                    _ = spectrum.update(fromContentsOf: source)
                }
            }
        }
        frame.aperiodicity.withUnsafeMutableBufferPointer { output in
            if voice.whisper {
                output.update(repeating: 1)
            } else {
                aperiodicity.withRow(row) { source in _ = output.update(fromContentsOf: source) }
            }
        }
    }

    private mutating func shiftedF0(_ f0: Double) -> Double {
        guard f0 > 0 else { return 0 }
        guard voice.needsMedian else { return f0 * voice.pitchRatio }
        let reference: Double
        if let known = voice.referenceMedian {
            reference = known
        } else {
            median.add(f0)
            reference = median.value
        }
        let centre = voice.targetMedian ?? reference
        return voice.pitchRatio * exp(log(centre) + voice.pitchRange * (log(f0) - log(reference)))
    }
}

/// The median of the voiced F0 values seen so far, in bounded memory: a histogram of log-F0 in 1-cent bins,
/// so the median is exact to a cent whatever the length of the stream.
struct MedianTracker {
    private static let lowest = 20.0
    private static let binsPerOctave = 1200.0
    private static let octaves = 8.0
    private var counts = [Int](repeating: 0, count: Int(MedianTracker.binsPerOctave * MedianTracker.octaves))
    private var total = 0
    /// The bin holding the middle value: the lowest bin through which more than half the values lie.
    private var medianBin = 0
    /// Values in the bins below `medianBin`.
    private var below = 0

    /// Counts the value; the median bin moves only as far as the values between its old and new place, so
    /// adding costs little however many bins the histogram has.
    mutating func add(_ f0: Double) {
        let position = log2(f0 / MedianTracker.lowest) * MedianTracker.binsPerOctave
        let bin = min(max(Int(position), 0), counts.count - 1)
        counts[bin] += 1
        total += 1
        if bin < medianBin {
            below += 1
        }
        while 2 * (below + counts[medianBin]) <= total {
            below += counts[medianBin]
            medianBin += 1
        }
        while 2 * below > total {
            medianBin -= 1
            below -= counts[medianBin]
        }
    }

    /// The centre frequency of the bin holding the middle value (Hz); 0 before any value.
    var value: Double {
        guard total > 0 else { return 0 }
        return MedianTracker.lowest * exp2((Double(medianBin) + 0.5) / MedianTracker.binsPerOctave)
    }
}
