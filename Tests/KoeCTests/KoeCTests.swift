import Glibc
import Koe
import KoeC
@testable import KoeIO
@testable import KoeWorld
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
                        _ = statuses.insert(koe_process(changer, input, output, Int32(frames)))
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

    /// koe.h's koe_scale values name `MusicalScale.Mode`'s cases in order: each gives the output of that mode.
    /// At 8 kHz and a quarter second: 28 live changers in a debug build.
    @Test func snapScalesAreTheModesInOrder() throws {
        let rate = 8000
        let input = Array(Signals.speechLike(sampleRate: rate).map(Float.init).prefix(rate / 4))
        var options = VoiceChanger.Options()
        options.analysis.live = true
        func changer() throws -> OpaquePointer {
            try #require(koe_create(Int32(rate), 1, nil))
        }
        var outputs: [[Float]] = []
        for (index, mode) in MusicalScale.Mode.allCases.enumerated() {
            let reference = try VoiceChanger(sampleRate: rate, channels: 1, options: options)
            reference.voice.snap = PitchSnap.Options(scale: MusicalScale(key: 2, mode: mode), strength: 0.9, speed: 10, a4: 442)
            let expected = try reference.process([input])[0]
            let snapping = try changer()
            defer { koe_destroy(snapping) }
            // Key 14 is key 2 (D): pitch classes are taken modulo 12.
            #expect(koe_set_snap_scale(snapping, 14, Int32(index), 0.9, 10, 442) == 0)
            let samples = processInPlace(snapping, input, block: 256).samples
            #expect(samples == expected, "scale \(index), \(mode)")
            outputs.append(samples)
        }
        #expect(outputs[1] != outputs[2], "major and minor snap alike: the signal cannot tell the scales apart")

        let switched = try changer()
        defer { koe_destroy(switched) }
        #expect(koe_set_snap_scale(switched, 0, Int32(MusicalScale.Mode.allCases.count), 1, 0, 440) == -1)
        #expect(koe_set_snap_scale(switched, 0, -2, 1, 0, 440) == -1)
        #expect(koe_set_snap_scale(switched, 0, 1, 1, 0, 440) == 0)
        #expect(koe_set_snap_scale(switched, 0, -1, 1, 0, 440) == 0)
        // Turned on, then off again before any audio: the output of a changer that never snapped.
        let unsnapped = try VoiceChanger(sampleRate: rate, channels: 1, options: options).process([input])[0]
        #expect(processInPlace(switched, input, block: 256).samples == unsnapped)
        #expect(koe_set_snap_scale(nil, 0, 1, 1, 0, 440) == -1)
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

    /// The C ABI drives the one engine: 480-frame blocks read `latency` frames late are `convert`'s live
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
        _ = try convert(.file(folder.file("in.wav")), to: .file(folder.file("out.wav")), settings: settings)
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

    /// koe_set_aim aims the ratios at a voice preset's target from the speaker's profile, here one given with
    /// koe_set_profile; koe_get_ratios tells what the vocoder applies, koe_get_profile what it aims from.
    @Test func aimsFromAGivenProfileAndSaysWhatItApplies() throws {
        let changer = try makeChanger()
        defer { koe_destroy(changer) }
        var profile = [Double](repeating: -1, count: 4)
        func current() -> [Double] {
            #expect(profile.withUnsafeMutableBytes { koe_get_profile(changer, $0.baseAddress) } == 0)
            return profile
        }
        func ratios() -> (pitch: Double, formant: Double) {
            var pitch = 0.0, formant = 0.0
            #expect(koe_get_ratios(changer, &pitch, &formant) == 0)
            return (pitch, formant)
        }
        #expect(current().allSatisfy { $0.isNaN })
        #expect(koe_set_aim(changer, 0) == 0)
        _ = processInPlace(changer, [Float](repeating: 0, count: 1600), block: 256)
        #expect(ratios() == (1.6, 1.2), "kawaii's own ratios until a profile is known")
        let known: [Double] = [200, 3, 14.5, 5]
        #expect(known.withUnsafeBytes { koe_set_profile(changer, $0.baseAddress) } == 0)
        #expect(current() == known)
        _ = processInPlace(changer, Signals.vowel(f0: 200, sampleRate: Int(sampleRate), duration: 0.3).map(Float.init), block: 256)
        #expect(ratios().pitch == 1.5 && abs(ratios().formant - 14.5 / 13.5) < 1e-12, "300 Hz from 200, 13.5 cm from 14.5")

        for bad in [[3.0, 3, 14.5, 5], [200, 3, -1, 5], [200, -3, 14.5, 5], [200, 3, 14.5, .infinity]] {
            #expect(bad.withUnsafeBytes { koe_set_profile(changer, $0.baseAddress) } == -1, "\(bad)")
        }
        #expect(current() == known, "a refused profile changes nothing")
        #expect([200.0, 3, .nan, 5].withUnsafeBytes { koe_set_profile(changer, $0.baseAddress) } == 0, "a length unknown")
        #expect(koe_set_aim(changer, 6) == -1 && koe_set_aim(changer, -2) == -1)
        #expect(koe_set_aim(changer, -1) == 0)
        _ = processInPlace(changer, Signals.vowel(f0: 200, sampleRate: Int(sampleRate), duration: 0.3).map(Float.init), block: 256)
        #expect(ratios() == (1.6, 1.2), "off: the ratios set, which the aim left at kawaii's own")
        #expect(koe_set_profile(changer, nil) == 0 && current().allSatisfy { $0.isNaN })
        #expect(koe_set_aim(nil, 0) == -1 && koe_set_profile(nil, nil) == -1)
        #expect(koe_get_ratios(changer, nil, nil) == -1)
    }
}

/// WORLD through koe_world.h: KoeWorld's numbers in the caller's buffers; every refusal a status and a message.
@Suite struct KoeWorldCTests {
    private let sampleRate: Int32 = 16000
    private var signal: [Double] { Signals.speechLike(sampleRate: Int(sampleRate)) }

    private func message(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) -> (status: Int32, text: String) {
        var buffer = [CChar](repeating: 1, count: 256)
        let status = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        return (status, cText(buffer))
    }

    @Test func analysisAndSynthesisEqualKoeWorlds() throws {
        let x = signal
        var frames = 0
        #expect(koe_world_frame_count(sampleRate, 5, x.count, &frames, nil, 0) == 0)
        var f0 = [Double](repeating: 0, count: frames), time = f0
        #expect(koe_world_harvest(x, x.count, sampleRate, 71, 800, 5, &f0, &time, frames, nil, 0) == 0)
        let contour = try Harvest(sampleRate: Int(sampleRate)).estimate(x)
        #expect(f0 == contour.f0 && time == contour.time)

        var fftSize: Int32 = 0
        #expect(koe_world_cheaptrick_fft_size(sampleRate, 71, &fftSize, nil, 0) == 0)
        let bins = Int(fftSize) / 2 + 1
        var sp = [Double](repeating: 0, count: frames * bins), ap = sp
        #expect(koe_world_cheaptrick(x, x.count, sampleRate, time, f0, frames, -0.15, fftSize, 2, &sp, nil, 0) == 0)
        #expect(koe_world_d4c(x, x.count, sampleRate, time, f0, frames, 0.85, fftSize, 1, &ap, nil, 0) == 0)
        let envelope = try CheapTrick(sampleRate: Int(sampleRate)).estimate(x, contour: contour)
        #expect(sp == envelope.storage)
        let aperiodicity = try D4C(sampleRate: Int(sampleRate), fftSize: Int(fftSize)).estimate(x, contour: contour)
        #expect(ap == aperiodicity.storage)

        var length = 0
        #expect(koe_world_synthesis_length(sampleRate, 5, frames, &length, nil, 0) == 0)
        var y = [Double](repeating: 0, count: length)
        #expect(koe_world_synthesize(f0, frames, sp, ap, bins, sampleRate, 5, &y, length, nil, 0) == 0)
        #expect(y == (try Synthesis(sampleRate: Int(sampleRate), framePeriod: 5).synthesize(f0: f0, spectrogram: envelope, aperiodicity: aperiodicity)))
    }

    @Test func refusalsAreStatusesWithMessages() {
        var frames = 0
        let x = signal
        var f0 = [Double](repeating: 0, count: 4), time = f0
        let rate = message { koe_world_frame_count(1000, 5, 100, &frames, $0, $1) }
        #expect(rate.status == -1 && rate.text.contains("1000 Hz is not supported"))
        let null = message { koe_world_dio(nil, 100, sampleRate, 71, 800, 2, 5, 1, 0.1, &f0, &time, 4, $0, $1) }
        #expect(null.status == -1 && null.text == "the signal is NULL")
        let size = message { koe_world_dio(x, x.count, sampleRate, 71, 800, 2, 5, 1, 0.1, &f0, &time, 4, $0, $1) }
        #expect(size.status == -1 && size.text.contains("the buffer given holds 4"))
        var nan = x
        nan[7] = .nan
        let finite = message { koe_world_harvest(nan, nan.count, sampleRate, 71, 800, 5, &f0, &time, 4, $0, $1) }
        #expect(finite.status == -1 && finite.text.contains("sample 7 is not a finite number"))
        let threads = message { koe_world_d4c(x, x.count, sampleRate, time, f0, 4, 0.85, 1024, 0, &f0, $0, $1) }
        #expect(threads.status == -1 && threads.text.contains("threads"))
        // A message longer than the buffer is cut at a character's boundary and terminated.
        var short = [CChar](repeating: 1, count: 8)
        #expect(koe_world_frame_count(1000, 5, 100, &frames, &short, short.count) == -1)
        #expect(cText(short) == "sample ")
        #expect(koe_world_frame_count(16000, 5, 100, nil, nil, 0) == -1)
    }

    @Test func convertRefusesBadOptionsWithTheirReason() {
        let names: [UnsafePointer<CChar>?] = [UnsafePointer(strdup("pich"))]
        let values: [UnsafePointer<CChar>?] = [UnsafePointer(strdup("1.2"))]
        defer { (names + values).forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        let unknown = message { koe_convert("in.wav", "out.wav", names, values, 1, $0, $1) }
        #expect(unknown.status == -1 && unknown.text.hasPrefix("unknown option 'pich'"))
        let missing = message { koe_convert("/no/such/file.wav", "out.wav", nil, nil, 0, $0, $1) }
        #expect(missing.status == -4 && missing.text.contains("/no/such/file.wav"))
    }

    /// koe_profile fills koe.h's koe_profile_result (four doubles) with what `SpeakerProfile` measures.
    @Test func profileIsTheLibrarysAndRefusesWithAReason() throws {
        let vowel = Signals.vowel(f0: 130, sampleRate: Int(sampleRate), duration: 1, formants: [500, 1500, 2500, 3500])
        var result = [Double](repeating: -1, count: 4)
        #expect(result.withUnsafeMutableBytes { koe_profile(vowel, vowel.count, sampleRate, $0.baseAddress, nil, 0) } == 0)
        let profile = try SpeakerProfile(analyzing: vowel, sampleRate: Int(sampleRate))
        #expect(result == [profile.f0Median, profile.f0Spread, profile.vocalTractLength, profile.voicedSeconds])
        #expect(abs(result[0] - 130) < 1.5)

        let silence = [Double](repeating: 0, count: 16000)
        let refused = message { buffer, size in
            result.withUnsafeMutableBytes { koe_profile(silence, silence.count, sampleRate, $0.baseAddress, buffer, size) }
        }
        #expect(refused.status == -1 && refused.text.contains("no voiced frame"))
        let rate = message { buffer, size in result.withUnsafeMutableBytes { koe_profile(vowel, vowel.count, 4000, $0.baseAddress, buffer, size) } }
        #expect(rate.status == -1 && !rate.text.isEmpty)
        #expect(koe_profile(vowel, vowel.count, sampleRate, nil, nil, 0) == -1)
        #expect(result.withUnsafeMutableBytes { koe_profile(nil, 10, sampleRate, $0.baseAddress, nil, 0) } == -1)
        #expect(result.withUnsafeMutableBytes { koe_profile(vowel, -1, sampleRate, $0.baseAddress, nil, 0) } == -1)
    }
}

/// The text of the NUL-terminated C string at the start of `buffer`.
private func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
