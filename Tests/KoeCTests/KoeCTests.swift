import Koe
import KoeC
import KoeIO
import Testing
import TestSupport

/// The C ABI as a C caller sees it: statuses, never a trap; any block size; in place.
@Suite struct KoeCTests {
    private let sampleRate: Int32 = 16000

    private func makeChanger() throws -> OpaquePointer {
        var status: Int32 = 99
        let changer = koe_create(sampleRate, 1, &status)
        #expect(status == 0)
        return try #require(changer)
    }

    /// `input` through koe_process in blocks of `block` frames, in place, as the plugins call it.
    private func processInPlace(_ changer: OpaquePointer, _ input: [Float], block: Int) -> (samples: [Float], statuses: Set<Int32>) {
        var samples = input
        var statuses = Set<Int32>()
        samples.withUnsafeMutableBufferPointer { buffer in
            var start = 0
            while start < buffer.count {
                let frames = min(block, buffer.count - start)
                var channel: UnsafeMutablePointer<Float>? = buffer.baseAddress! + start
                withUnsafePointer(to: &channel) { output in
                    output.withMemoryRebound(to: UnsafePointer<Float>?.self, capacity: 1) { input in
                        statuses.insert(koe_process(changer, input, output, Int32(frames)))
                    }
                }
                start += frames
            }
        }
        return (samples, statuses)
    }

    /// The C ABI runs the live analysis: its output is a live VoiceChanger's.
    @Test func blocksOfAnySizeInPlaceGiveTheChangersOutput() throws {
        let input = Signals.speechLike(sampleRate: Int(sampleRate)).map(Float.init)
        var options = VoiceChanger.Options()
        options.analysis.live = true
        let reference = try VoiceChanger(sampleRate: Int(sampleRate), channels: 1, options: options)
        reference.voice.pitch = 1.2
        reference.voice.formant = 0.9
        reference.gainDB = -6
        let expected = try reference.process([input])[0]

        for block in [1, 17, 512, input.count] {
            let changer = try makeChanger()
            defer { koe_destroy(changer) }
            #expect(koe_set_pitch(changer, 1.2) == 0)
            #expect(koe_set_formant(changer, 0.9) == 0)
            #expect(koe_set_gain_db(changer, -6) == 0)
            #expect(koe_latency(changer) == Int32(reference.latency))
            let (samples, statuses) = processInPlace(changer, input, block: block)
            #expect(statuses == [0], "block \(block)")
            #expect(samples == expected, "block \(block)")
        }
    }

    @Test func badArgumentsAreStatusesNotTraps() throws {
        var status: Int32 = 0
        #expect(koe_create(1000, 1, &status) == nil)
        #expect(status == -1)
        #expect(koe_create(48000, 0, nil) == nil)
        #expect(koe_set_pitch(nil, 1.2) == -1)
        #expect(koe_latency(nil) == -1)
        #expect(koe_process(nil, nil, nil, 1) == -1)
        #expect(koe_reset(nil) == -1)
        koe_destroy(nil)

        let changer = try makeChanger()
        defer { koe_destroy(changer) }
        #expect(koe_set_preset(changer, "no such voice") == -2)
        #expect(koe_set_preset(changer, "kawaii") == 0)
        #expect(koe_set_preset(changer, nil) == -1)
        #expect(koe_process(changer, nil, nil, 4) == -1)
        var sample: Float = 0
        withUnsafeMutablePointer(to: &sample) { sample in
            var channel: UnsafeMutablePointer<Float>? = sample
            withUnsafePointer(to: &channel) { output in
                output.withMemoryRebound(to: UnsafePointer<Float>?.self, capacity: 1) { input in
                    #expect(koe_process(changer, input, output, -1) == -1)
                    #expect(koe_process(changer, input, output, 0) == 0)
                }
            }
        }
        let (_, refused) = processInPlace(changer, [0, .nan, 0], block: 3)
        #expect(refused == [-3], "a NaN sample: the block is refused")
        #expect(String(cString: koe_status_string(-3)).contains("refused"))
        #expect(String(cString: koe_status_string(12345)) == "unknown status")
    }

    @Test func settingsOutOfRangeAreClampedAndNonFiniteOnesIgnored() throws {
        let input = Signals.speechLike(sampleRate: Int(sampleRate)).map(Float.init)
        func output(pitch: Double) throws -> [Float] {
            let changer = try makeChanger()
            defer { koe_destroy(changer) }
            #expect(koe_set_pitch(changer, pitch) == 0)
            return processInPlace(changer, input, block: 256).samples
        }
        #expect(try output(pitch: 1e9) == output(pitch: 16))
        #expect(try output(pitch: -1) == output(pitch: 1.0 / 16))
        #expect(try output(pitch: .nan) == output(pitch: 1))
        #expect(try output(pitch: 16).allSatisfy(\.isFinite))
    }

    @Test func resetStartsANewStreamWithTheSameSettings() throws {
        let input = Signals.speechLike(sampleRate: Int(sampleRate)).map(Float.init)
        let changer = try makeChanger()
        defer { koe_destroy(changer) }
        #expect(koe_set_pitch(changer, 1.5) == 0)
        let first = processInPlace(changer, input, block: 480).samples
        #expect(koe_reset(changer) == 0)
        let second = processInPlace(changer, input, block: 480).samples
        #expect(first == second)
    }

    /// The C ABI drives the one engine: 480-frame blocks read `latency` frames late are `convertFile`'s live
    /// conversion of the same audio, sample for sample (pitch 1.2, formant 1.1). A host has no end of stream, so
    /// the audio ends in silence, as a plugin test's input does, and the frames the C caller has are compared.
    @Test func equalsALiveConversionOfAFile() throws {
        let speech = Signals.speechLike(sampleRate: Int(sampleRate)).map(Float.init)
        let input = speech + [Float](repeating: 0, count: Int(sampleRate) / 2)
        let folder = TemporaryFolder()
        let file = try AudioFile(writing: folder.file("in.wav"), sampleRate: Int(sampleRate), channels: 1, encoding: .float32)
        try file.write(channels: [input.map(Double.init)])
        try file.close()
        var settings = ConversionSettings()
        settings.voice.pitch = 1.2
        settings.voice.formant = 1.1
        settings.analysis.live = true
        _ = try convertFile(folder.file("in.wav"), to: folder.file("out.wav"), settings: settings)
        let converted = try AudioFile(reading: folder.file("out.wav")).readChannel(0)

        let changer = try makeChanger()
        defer { koe_destroy(changer) }
        #expect(koe_set_pitch(changer, 1.2) == 0)
        #expect(koe_set_formant(changer, 1.1) == 0)
        let latency = Int(koe_latency(changer))
        let (samples, statuses) = processInPlace(changer, input, block: 480)
        #expect(statuses == [0])
        let late = samples.dropFirst(latency).map(Double.init)
        let expected = Array(converted.prefix(late.count))
        let equal = late == expected
        #expect(equal, "largest difference \(largestDifference(late, expected))")
    }
}
