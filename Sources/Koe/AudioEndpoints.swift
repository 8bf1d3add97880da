import Glibc
import KoeIO
import KoeWorld

/// Where a conversion reads (`convert(_:to:settings:progress:)`).
public enum ConversionInput {
    /// An audio file in any format libsndfile reads.
    case file(String)
    /// Interleaved samples at `sampleRate`, `channels` a frame, that `read` gives piece by piece: at most
    /// `maxFrames` frames a call, nil at the end. `mayWait` says whether the next `read` may block (a pipe with
    /// nothing in it yet): the conversion then first hands out what it has. `name` names the stream in messages.
    case stream(
        name: String, sampleRate: Int, channels: Int, read: (_ maxFrames: Int) throws -> [Double]?, mayWait: () -> Bool = { true })
}

/// Where a conversion writes (`convert(_:to:settings:progress:)`).
public enum ConversionOutput {
    /// An audio file in the format its extension names, written whole or not at all.
    case file(String)
    /// Interleaved samples handed to `write` as they are made; `write` returns how many it had to clip.
    /// `fullScale` is the largest sample it stores without clipping (1 for floats, 32767/32768 for 16-bit PCM),
    /// which the output limiter keeps to.
    case stream(fullScale: Double, write: (_ interleaved: [Double]) throws -> Int)
}

/// A stream's reader and the question whether it may wait, as `ConversionInput.stream` gives them.
struct InputStream {
    let name: String
    let sampleRate: Int
    let channels: Int
    let read: (Int) throws -> [Double]?
    let mayWait: () -> Bool
}

/// A stream's writer, and the samples it has clipped so far.
final class OutputStream {
    let fullScale: Double
    let write: ([Double]) throws -> Int
    var clippedSamples = 0

    init(fullScale: Double, write: @escaping ([Double]) throws -> Int) {
        self.fullScale = fullScale
        self.write = write
    }
}

/// Where the samples of a conversion come from: an audio file, or a stream.
enum AudioSource {
    case file(AudioFile)
    case stream(InputStream)

    init(_ input: ConversionInput) throws(KoeError) {
        switch input {
        case .file(let path): self = .file(try KoeError.wrapping { try AudioFile(reading: path) })
        case .stream(let name, let sampleRate, let channels, let read, let mayWait):
            self = .stream(InputStream(name: name, sampleRate: sampleRate, channels: channels, read: read, mayWait: mayWait))
        }
    }

    package var sampleRate: Int {
        switch self {
        case .file(let file): return file.sampleRate
        case .stream(let stream): return stream.sampleRate
        }
    }

    package var channels: Int {
        switch self {
        case .file(let file): return file.channels
        case .stream(let stream): return stream.channels
        }
    }

    /// Frames the whole input holds, where that is known in advance.
    var totalFrames: Int? {
        if case .file(let file) = self { return file.frames }
        return nil
    }

    /// The next interleaved frames, at most `maxFrames`; nil at the end of the input.
    package func read(maxFrames: Int) throws -> [Double]? {
        switch self {
        case .file(let file):
            let samples = try file.readInterleaved(maxFrames: maxFrames)
            return samples.isEmpty ? nil : samples
        case .stream(let stream):
            return try stream.read(maxFrames)
        }
    }

    /// Fails when the input held no audio at all.
    func requireAudio(framesRead: Int) throws {
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
        case .stream(let stream): return stream.name
        }
    }

    var sampleEncoding: SampleEncoding? {
        if case .file(let file) = self { return file.format.sampleEncoding }
        return nil
    }
}

/// Where converted samples go: an audio file written atomically, or a stream.
enum AudioSink {
    case file(FileSink)
    case stream(OutputStream)

    /// `output` opened for `source`'s samples.
    init(_ output: ConversionOutput, like source: AudioSource) throws(KoeError) {
        switch output {
        case .file(let path): self = try KoeError.wrapping { try .file(path, like: source) }
        case .stream(let fullScale, let write): self = .stream(OutputStream(fullScale: fullScale, write: write))
        }
    }

    /// An audio file in the format `path`'s extension names, with the source's rate, channels and (where the
    /// format holds it) sample encoding.
    static func file(_ path: String, like source: AudioSource) throws -> AudioSink {
        .file(try FileSink(path: path, sampleRate: source.sampleRate, channels: source.channels, preferred: source.sampleEncoding))
    }

    package func write(_ interleaved: [Double]) throws {
        guard !interleaved.isEmpty else { return }
        switch self {
        case .file(let sink): try sink.write(interleaved)
        case .stream(let stream): stream.clippedSamples += try stream.write(interleaved)
        }
    }

    /// Completes the output: a file appears under its name only now.
    package func finish() throws {
        if case .file(let sink) = self { try sink.commit() }
    }

    package var clippedSamples: Int {
        switch self {
        case .file(let sink): return sink.clippedSamples
        case .stream(let stream): return stream.clippedSamples
        }
    }

    /// The largest sample the output stores without clipping.
    package var fullScale: Double {
        switch self {
        case .file(let sink): return sink.fullScale
        case .stream(let stream): return stream.fullScale
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

    var fullScale: Double { file.format.fullScale }

    func write(_ interleaved: [Double]) throws {
        try output.fill { _ in try file.write(interleaved: interleaved) }
    }

    func commit() throws {
        try output.fill { _ in try file.close() }
        try output.commit()
    }
}
