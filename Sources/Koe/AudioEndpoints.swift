import Glibc
import KoeIO
import KoeWorld

/// Where the samples of a conversion come from: an audio file, or raw PCM on standard input.
package enum AudioSource {
    case file(AudioFile)
    case standardInput(RawPCMReader)

    package var sampleRate: Int {
        switch self {
        case .file(let file): return file.sampleRate
        case .standardInput(let reader): return reader.format.sampleRate
        }
    }

    package var channels: Int {
        switch self {
        case .file(let file): return file.channels
        case .standardInput(let reader): return reader.format.channels
        }
    }

    /// Frames the whole input holds, where that is known in advance.
    package var totalFrames: Int? {
        if case .file(let file) = self { return file.frames }
        return nil
    }

    /// The next interleaved frames, at most `maxFrames`; nil at the end of the input.
    package func read(maxFrames: Int) throws -> [Double]? {
        switch self {
        case .file(let file):
            let samples = try file.readInterleaved(maxFrames: maxFrames)
            return samples.isEmpty ? nil : samples
        case .standardInput(let reader):
            return try reader.read(maxFrames: maxFrames)
        }
    }

    /// Fails when the input held no audio at all.
    package func requireAudio(framesRead: Int) throws {
        guard framesRead == 0 else { return }
        throw IOError.emptyAudio(path: name)
    }

    /// Fails on the first sample of `interleaved` (frames from `firstFrame` on) that is NaN or infinite:
    /// no stage can make sound of it, and a filter would smear it over everything after.
    func requireFinite(_ interleaved: [Double], firstFrame: Int) throws(KoeError) {
        guard let index = SignalRequirements.firstNonFinite(interleaved) else { return }
        throw .nonFiniteSample(
            frame: firstFrame + index / channels, channel: channels == 1 ? nil : index % channels, source: name)
    }

    /// Names the input in messages.
    package var name: String {
        switch self {
        case .file(let file): return file.path
        case .standardInput(let reader): return reader.name
        }
    }

    package var sampleEncoding: SampleEncoding? {
        if case .file(let file) = self { return file.format.sampleEncoding }
        return nil
    }
}

/// Where converted samples go: an audio file written atomically, or raw PCM on standard output.
package enum AudioSink {
    case file(FileSink)
    case standardOutput(RawPCMWriter)

    /// An audio file in the format `path`'s extension names, with the source's rate, channels and (where the
    /// format holds it) sample encoding.
    package static func file(_ path: String, like source: AudioSource) throws -> AudioSink {
        .file(try FileSink(path: path, sampleRate: source.sampleRate, channels: source.channels, preferred: source.sampleEncoding))
    }

    package func write(_ interleaved: [Double]) throws {
        guard !interleaved.isEmpty else { return }
        switch self {
        case .file(let sink): try sink.write(interleaved)
        case .standardOutput(let writer): try writer.write(interleaved: interleaved)
        }
    }

    /// Completes the output: a file appears under its name only now.
    package func finish() throws {
        if case .file(let sink) = self { try sink.commit() }
    }

    package var clippedSamples: Int {
        switch self {
        case .file(let sink): return sink.clippedSamples
        case .standardOutput(let writer): return writer.clippedSamples
        }
    }

    /// The largest sample the output stores without clipping.
    package var fullScale: Double {
        switch self {
        case .file(let sink): return sink.fullScale
        case .standardOutput(let writer): return writer.format.fullScale
        }
    }
}

/// An audio file written to a temporary name beside its destination and renamed when complete.
/// Every step goes through `AtomicOutput.fill`, so errors name the destination and remove the temporary file.
package final class FileSink {
    private let output: AtomicOutput
    private let file: AudioFile

    init(path: String, sampleRate: Int, channels: Int, preferred: SampleEncoding?) throws {
        let format = try AudioFormat.forWriting(path, sampleRate: sampleRate, channels: channels, preferred: preferred)
        output = try AtomicOutput(destination: path)
        var opened: AudioFile?
        try output.fill { temporaryPath in
            opened = try AudioFile(writing: temporaryPath, sampleRate: sampleRate, channels: channels, format: format)
        }
        file = opened!
    }

    var clippedSamples: Int { file.clippedSamples }

    var fullScale: Double { file.format.fullScale }

    func write(_ interleaved: [Double]) throws {
        try output.fill { _ in try file.write(interleaved: interleaved) }
    }

    func commit() throws {
        try output.fill { _ in try file.close() }
        try output.commit()
    }
}
