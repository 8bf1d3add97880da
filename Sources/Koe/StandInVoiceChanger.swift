// TEMPORARY stand-in for the lead's `Koe.VoiceChanger` (issue 11), with the same public signatures, so the
// C ABI, the plugins and `koe live` can be built and tested before it lands. Deleted when main is merged.
// It streams through KoeStages' VoiceShift and delays by a fixed latency; it allocates, unlike the real one.
import Glibc
import KoeStages

public struct KoeError: Error, CustomStringConvertible {
    public let description: String
}

public final class VoiceChanger {
    public struct Options {
        public var threads = 1
        public init() {}
    }

    public var pitch = 1.0 { didSet { pitch = Self.ratio(pitch, else: oldValue); rebuild() } }
    public var semitones: Double {
        get { 12 * log2(pitch) }
        set { pitch = exp2(newValue / 12) }
    }
    public var formant = 1.0 { didSet { formant = Self.ratio(formant, else: oldValue); rebuild() } }
    public var gainDB = 0.0 { didSet { gainDB = gainDB.isFinite ? min(max(gainDB, -60), 60) : oldValue } }
    public let latency: Int

    private let sampleRate: Int
    private let channels: Int
    private var shifts: [VoiceShift] = []
    private var queues: [[Float]] = []

    public init(sampleRate: Int, channels: Int, options: VoiceChanger.Options = .init()) throws(KoeError) {
        guard (8000...192000).contains(sampleRate) else { throw KoeError(description: "sample rate \(sampleRate) Hz is outside 8000-192000") }
        guard channels >= 1 else { throw KoeError(description: "channels must be at least 1 (got \(channels))") }
        self.sampleRate = sampleRate
        self.channels = channels
        latency = VoiceShift(sampleRate: sampleRate, voice: VoiceSettings()).latency + sampleRate / 50
        reset()
    }

    public func apply(preset name: String) throws(KoeError) {
        guard let preset = Preset.named(name) else { throw KoeError(description: "unknown preset '\(name)'") }
        pitch = preset.voice.pitchRatio
        formant = preset.voice.formantRatio
    }

    public func process(_ input: [[Float]]) throws(KoeError) -> [[Float]] {
        guard input.count == channels, let frames = input.first?.count, input.allSatisfy({ $0.count == frames }) else {
            throw KoeError(description: "expected \(channels) channels of equal length")
        }
        var output = input
        for channel in 0..<channels {
            let shifted: [Double]
            do {
                shifted = try shifts[channel].process(input[channel].map(Double.init), isFinal: false)
            } catch {
                throw KoeError(description: "\(error)")
            }
            let factor = Float(pow(10, gainDB / 20))
            queues[channel] += shifted.map { Float($0) * factor }
            let ready = min(frames, queues[channel].count)
            output[channel] = Array(queues[channel].prefix(ready)) + Array(repeating: 0, count: frames - ready)
            queues[channel].removeFirst(ready)
        }
        return output
    }

    public func process(
        _ input: UnsafePointer<UnsafePointer<Float>>, into output: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int
    ) throws(KoeError) {
        let planar = (0..<channels).map { Array(UnsafeBufferPointer(start: input[$0], count: frames)) }
        let result = try process(planar)
        for channel in 0..<channels {
            for frame in 0..<frames { output[channel][frame] = result[channel][frame] }
        }
    }

    public func finish() throws(KoeError) -> [[Float]] {
        try process(Array(repeating: Array(repeating: 0, count: latency), count: channels))
    }

    public func reset() {
        shifts = []
        queues = Array(repeating: [], count: channels)
        rebuild()
    }

    private static func ratio(_ value: Double, else previous: Double) -> Double {
        value.isFinite ? min(max(value, 1.0 / 16), 16) : previous
    }

    /// A new voice starts a new stream, aligned with its first input: what the old one still held becomes
    /// silence, so the queue is padded to `latency` samples and the delay stays `latency`.
    private func rebuild() {
        var voice = VoiceSettings()
        voice.pitchRatio = pitch
        voice.formantRatio = formant
        shifts = (0..<channels).map { _ in VoiceShift(sampleRate: sampleRate, voice: voice) }
        for channel in queues.indices {
            queues[channel] += Array(repeating: 0, count: max(0, latency - queues[channel].count))
        }
    }
}
