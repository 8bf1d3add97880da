import Foundation
import Testing
import TestSupport
@testable import KoeIO

@Suite struct AudioFileTests {
    let folder = TemporaryFolder()
    let signal = Signals.sine(frequency: 440, sampleRate: 16000, duration: 0.25, amplitude: 0.9)

    /// Largest difference a write/read round trip may make at `bits` of PCM: one quantisation step.
    private func pcmTolerance(bits: Int) -> Double { 1.0 / Double(1 << (bits - 1)) }

    private func roundTrip(_ name: String, encoding: SampleEncoding?, channels: [[Double]]) throws -> AudioFile {
        let path = folder.file(name)
        let writer = try AudioFile(writing: path, sampleRate: 16000, channels: channels.count, encoding: encoding)
        try writer.write(channels: channels)
        try writer.close()
        return try AudioFile(reading: path)
    }

    @Test(arguments: [
        ("wav", SampleEncoding.pcm8, 8), ("wav", .pcm16, 16), ("wav", .pcm24, 24), ("wav", .pcm32, 32),
        ("flac", .pcm8, 8), ("flac", .pcm16, 16), ("flac", .pcm24, 24),
        ("aiff", .pcm16, 16), ("aiff", .pcm24, 24),
    ])
    func pcmRoundTripKeepsSamplesWithinOneStep(fileExtension: String, encoding: SampleEncoding, bits: Int) throws {
        let file = try roundTrip("tone-\(bits).\(fileExtension)", encoding: encoding, channels: [signal])
        #expect(file.sampleRate == 16000)
        #expect(file.channels == 1)
        #expect(file.frames == signal.count)
        let samples = try file.readChannel(0)
        let worst = zip(samples, signal).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst <= pcmTolerance(bits: bits))
    }

    @Test func floatWavKeepsSamplesExactly() throws {
        let float64 = try roundTrip("tone-f64.wav", encoding: .float64, channels: [signal])
        #expect(try float64.readChannel(0) == signal)
        let float32 = try roundTrip("tone-f32.wav", encoding: .float32, channels: [signal])
        #expect(try float32.readChannel(0) == signal.map { Double(Float($0)) })
    }

    @Test func stereoChannelsStayApart() throws {
        let right = signal.map { -0.5 * $0 }
        let file = try roundTrip("stereo.wav", encoding: .float64, channels: [signal, right])
        #expect(file.channels == 2)
        #expect(try file.readAll() == [signal, right])
        #expect(try AudioFile(reading: folder.file("stereo.wav")).readChannel(1) == right)
    }

    @Test func readsInChunksUntilTheEnd() throws {
        let file = try roundTrip("chunks.wav", encoding: .float64, channels: [signal])
        var collected: [Double] = []
        while true {
            let chunk = try file.readChannels(maxFrames: 1000)[0]
            if chunk.isEmpty { break }
            #expect(chunk.count <= 1000)
            collected += chunk
        }
        #expect(collected == signal)
    }

    @Test func samplesBeyondFullScaleClipInsteadOfWrapping() throws {
        let file = try roundTrip("loud.wav", encoding: .pcm16, channels: [[1.5, -1.5, 0.25]])
        let samples = try file.readChannel(0)
        #expect(samples[0] > 0.999)
        #expect(samples[1] <= -0.999)
    }

    @Test func formatComesFromTheExtension() throws {
        let wav = try AudioFormat.forWriting("a/b.WAV", sampleRate: 16000, channels: 1)
        #expect(wav.description.hasPrefix("WAV"))
        #expect(wav.description.contains("16 bit PCM"))
        let ogg = try AudioFormat.forWriting("b.ogg", sampleRate: 16000, channels: 1)
        #expect(ogg.description.contains("Vorbis"))
        let aif = try AudioFormat.forWriting("c.aif", sampleRate: 48000, channels: 2, encoding: .pcm24)
        #expect(aif.description.hasPrefix("AIFF"))
        #expect(throws: IOError.unknownAudioFormat(path: "d.xyz")) {
            try AudioFormat.forWriting("d.xyz", sampleRate: 16000, channels: 1)
        }
        #expect(throws: IOError.unknownAudioFormat(path: "noextension")) {
            try AudioFormat.forWriting("noextension", sampleRate: 16000, channels: 1)
        }
        #expect(throws: IOError.self) {
            try AudioFormat.forWriting("e.flac", sampleRate: 16000, channels: 1, encoding: .float64)
        }
    }

    @Test func vorbisRoundTripKeepsLengthAndShape() throws {
        let file = try roundTrip("tone.ogg", encoding: nil, channels: [signal])
        let samples = try file.readChannel(0)
        #expect(samples.count == signal.count)
        let error = zip(samples, signal).map { ($0 - $1) * ($0 - $1) }.reduce(0, +)
        let energy = signal.map { $0 * $0 }.reduce(0, +)
        #expect(error < 0.01 * energy)
    }

    // MARK: Bad input

    @Test func missingFileIsReported() {
        let path = folder.file("missing.wav")
        #expect(throws: IOError.fileNotFound(path: path)) { try AudioFile(reading: path) }
    }

    @Test func folderIsNotAnAudioFile() {
        #expect(throws: IOError.notARegularFile(path: folder.path)) { try AudioFile(reading: folder.path) }
    }

    @Test func textIsNotAnAudioFile() {
        let path = folder.write(Array("hello, not audio at all\n".utf8), to: "text.wav")
        #expect { try AudioFile(reading: path) } throws: { error in
            guard case IOError.notAudio(path, _)? = error as? IOError else { return false }
            return true
        }
    }

    @Test func emptyFilesHoldNoAudio() throws {
        let empty = folder.write([], to: "empty.wav")
        #expect(throws: IOError.emptyAudio(path: empty)) { try AudioFile(reading: empty) }
        let headerOnly = folder.write(Array(try wavBytes(frames: 100).prefix(44)), to: "header-only.wav")
        #expect(throws: IOError.self) { try AudioFile(reading: headerOnly) }
    }

    @Test func truncatedWavIsReported() throws {
        let bytes = try wavBytes(frames: 1000)
        let path = folder.write(Array(bytes.prefix(44 + 2 * 400)), to: "cut.wav")
        #expect(throws: IOError.truncatedAudio(path: path, expectedFrames: 1000, actualFrames: 400)) {
            try AudioFile(reading: path)
        }
    }

    @Test func streamedWavWithUnknownLengthIsRead() throws {
        var bytes = try wavBytes(frames: 1000)
        bytes.replaceSubrange(40..<44, with: [0xFF, 0xFF, 0xFF, 0xFF])
        let path = folder.write(bytes, to: "streamed.wav")
        #expect(try AudioFile(reading: path).readChannel(0).count == 1000)
    }

    @Test func channelOutOfRangeIsReported() throws {
        let file = try roundTrip("mono.wav", encoding: .pcm16, channels: [signal])
        #expect(throws: IOError.channelOutOfRange(path: file.path, channel: 1, channels: 1)) {
            try file.readChannel(1)
        }
    }

    @Test func errorMessagesAreSingleLinesNamingTheFile() {
        let errors: [IOError] = [
            .fileNotFound(path: "a.wav"), .notAudio(path: "a.wav", reason: "unknown format"), .emptyAudio(path: "a.wav"),
            .truncatedAudio(path: "a.wav", expectedFrames: 10, actualFrames: 5),
            .channelOutOfRange(path: "a.wav", channel: 2, channels: 2), .unwritableFolder(path: "a.wav", reason: "denied"),
            .invalidNpy(path: "a.wav", reason: "truncated"), .unknownAudioFormat(path: "a.wav"),
        ]
        for error in errors {
            #expect(!error.description.contains("\n"))
            #expect(error.description.hasPrefix("a.wav: "))
        }
    }

    /// A canonical 16-bit mono WAV file's bytes: 44-byte header, then the samples.
    private func wavBytes(frames: Int) throws -> [UInt8] {
        let path = folder.file("source-\(frames).wav")
        let writer = try AudioFile(writing: path, sampleRate: 16000, channels: 1, encoding: .pcm16)
        try writer.write(channels: [Array(signal.prefix(frames)) + Array(repeating: 0, count: max(0, frames - signal.count))])
        try writer.close()
        let bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        precondition(bytes.count == 44 + 2 * frames, "expected a canonical 44-byte WAV header")
        return bytes
    }
}
