import Glibc
import KoeIO

/// Where the samples of a conversion come from: an audio file, or raw PCM on standard input.
enum AudioSource {
    case file(AudioFile)
    case standardInput(RawPCMReader)

    static func open(_ path: String, raw: RawOptions) throws -> AudioSource {
        if path == "-" {
            return .standardInput(RawPCMReader(format: try raw.inputFormat()))
        }
        return .file(try AudioFile(reading: path))
    }

    var sampleRate: Int {
        switch self {
        case .file(let file): return file.sampleRate
        case .standardInput(let reader): return reader.format.sampleRate
        }
    }

    var channels: Int {
        switch self {
        case .file(let file): return file.channels
        case .standardInput(let reader): return reader.format.channels
        }
    }

    /// Frames the whole input holds, where that is known in advance.
    var totalFrames: Int? {
        if case .file(let file) = self { return file.frames }
        return nil
    }

    /// The next interleaved frames, at most `maxFrames`; nil at the end of the input.
    func read(maxFrames: Int) throws -> [Double]? {
        switch self {
        case .file(let file):
            let samples = try file.readInterleaved(maxFrames: maxFrames)
            return samples.isEmpty ? nil : samples
        case .standardInput(let reader):
            return try reader.read(maxFrames: maxFrames)
        }
    }

    /// Fails when the input held no audio at all.
    func requireAudio(framesRead: Int) throws {
        guard framesRead == 0 else { return }
        switch self {
        case .file(let file): throw IOError.emptyAudio(path: file.path)
        case .standardInput(let reader): throw IOError.emptyAudio(path: reader.name)
        }
    }

    var sampleEncoding: SampleEncoding? {
        if case .file(let file) = self { return file.format.sampleEncoding }
        return nil
    }
}

/// Where converted samples go: an audio file written atomically, or raw PCM on standard output.
enum AudioSink {
    case file(FileSink)
    case standardOutput(RawPCMWriter)

    static func open(_ path: String, raw: RawOptions, like source: AudioSource) throws -> AudioSink {
        if path == "-" {
            return .standardOutput(RawPCMWriter(format: try raw.outputFormat(sampleRate: source.sampleRate, channels: source.channels)))
        }
        return try file(path, like: source)
    }

    /// An audio file in the format `path`'s extension names, with the source's rate, channels and (where the
    /// format holds it) sample encoding.
    static func file(_ path: String, like source: AudioSource) throws -> AudioSink {
        .file(try FileSink(path: path, sampleRate: source.sampleRate, channels: source.channels, preferred: source.sampleEncoding))
    }

    func write(_ interleaved: [Double]) throws {
        guard !interleaved.isEmpty else { return }
        switch self {
        case .file(let sink): try sink.write(interleaved)
        case .standardOutput(let writer): try writer.write(interleaved: interleaved)
        }
    }

    /// Completes the output: a file appears under its name only now.
    func finish() throws {
        if case .file(let sink) = self { try sink.commit() }
    }

    var clippedSamples: Int {
        switch self {
        case .file(let sink): return sink.clippedSamples
        case .standardOutput(let writer): return writer.clippedSamples
        }
    }
}

/// An audio file written to a temporary name beside its destination and renamed when complete.
/// Every step goes through `AtomicOutput.fill`, so errors name the destination and remove the temporary file.
final class FileSink {
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

    func write(_ interleaved: [Double]) throws {
        try output.fill { _ in try file.write(interleaved: interleaved) }
    }

    func commit() throws {
        try output.fill { _ in try file.close() }
        try output.commit()
    }
}
