import KoeIO
import KoeStages

extension SpeakerProfile {
    /// The profile of the voice in an audio file, its channels mixed (averaged), read in pieces so that a long
    /// file costs little memory. Throws `KoeError` for a file that cannot be read and for the reasons
    /// `init(analyzing:sampleRate:)` throws, naming the file.
    package init(file path: String) throws(KoeError) {
        let file = try KoeError.wrapping { try AudioFile(reading: path) }
        var profiler = try SpeakerProfiler(sampleRate: file.sampleRate)
        do {
            while case let chunk = try KoeError.wrapping(source: path, { try file.readInterleaved(maxFrames: 1 << 16) }), !chunk.isEmpty {
                let channels = file.channels
                let mixed = stride(from: 0, to: chunk.count, by: channels).map { start in
                    var sum = 0.0
                    for channel in 0..<channels { sum += chunk[start + channel] }
                    return sum / Double(channels)
                }
                try profiler.add(mixed)
            }
            self = try profiler.finish()
        } catch {
            if case .badInput(nil, let reason) = error { throw .badInput(source: path, reason: reason) }
            throw error
        }
    }
}
