import Foundation
import Koe
import KoeStages
import KoeWorld
import Testing
import TestSupport

@Suite struct VoiceChangerTests {
    private let sampleRate = 16000

    /// The whole stream through the changer in blocks of `block` frames, then its tail.
    private func stream(
        _ changer: VoiceChanger, _ input: [[Double]], block: Int, finishing: Bool = true
    ) throws -> (out: [[Double]], tail: [[Double]]) {
        var out = [[Double]](repeating: [], count: input.count)
        var start = 0
        while start < input[0].count {
            let end = min(start + block, input[0].count)
            let piece = try changer.process(input.map { Array($0[start..<end]) })
            #expect(piece.map(\.count) == [Int](repeating: end - start, count: input.count), "block in = block out")
            for channel in out.indices { out[channel] += piece[channel] }
            start = end
        }
        return (out, finishing ? try changer.finish(as: Double.self) : [])
    }

    @Test func outputIsTheConversionDelayedByExactlyTheLatency() throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        changer.voice.pitch = 1.3
        changer.voice.formant = 1.1
        let (out, tail) = try stream(changer, [input], block: 480)
        #expect(tail[0].count == changer.latency)

        var voice = VoiceSettings()
        voice.pitch = 1.3
        voice.formant = 1.1
        let vocoder = try VoiceShift(sampleRate: sampleRate, voice: voice)
        let conversion = try vocoder.process(input) + vocoder.finish()
        let whole = out[0] + tail[0]
        #expect(whole.count == input.count + changer.latency)
        #expect(whole.prefix(changer.latency).allSatisfy { $0 == 0 })
        #expect(Array(whole.dropFirst(changer.latency)) == conversion, "largest difference \(largestDifference(Array(whole.dropFirst(changer.latency)), conversion))")
    }

    @Test(arguments: [1, 17, 480, 4096])
    func blockSizeDoesNotChangeTheOutput(block: Int) throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        func run(_ block: Int) throws -> [Double] {
            let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
            changer.voice.pitch = 0.8
            changer.gainDB = -3
            changer.equalizer = [EqualizerBand(kind: .peak, frequency: 1000, gainDB: 4, q: 1.4)]
            let (out, tail) = try stream(changer, [input], block: block)
            return out[0] + tail[0]
        }
        let blocks = try run(block), whole = try run(input.count)
        #expect(blocks == whole, "largest difference \(largestDifference(blocks, whole))")
    }

    @Test func threadsDoNotChangeTheOutputOfAChangingVoice() throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        func run(threads: Int) throws -> [Double] {
            var options = VoiceChanger.Options()
            options.threads = threads
            let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1, options: options)
            changer.voice.pitch = 1.2
            var out: [Double] = []
            for start in stride(from: 0, to: input.count, by: 320) {
                if start == 8000 {
                    changer.voice.pitch = 0.9
                    changer.voice.formant = 1.2
                }
                out += try changer.process([Array(input[start..<min(start + 320, input.count)])])[0]
            }
            return out + (try changer.finish(as: Double.self))[0]
        }
        let single = try run(threads: 1)
        let shared = try run(threads: 2)
        #expect(shared == single, "largest difference \(largestDifference(shared, single))")
    }

    /// A stream reset while changes glide (a voice leaving identity, so crossfading to the vocoder first; a gain;
    /// a band; the limiter switched off) then plays what a changer made with those settings plays.
    @Test(arguments: [(1, false), (2, false), (1, true)])
    func resetStartsTheStreamAFreshChangerWouldPlay(threads: Int, live: Bool) throws {
        let first = Signals.vowel(f0: 130, sampleRate: sampleRate, duration: 0.5)
        let second = Signals.speechLike(sampleRate: sampleRate)
        var options = VoiceChanger.Options()
        options.threads = threads
        options.analysis.live = live
        func settle(_ changer: VoiceChanger) {
            changer.voice.pitch = 1.3
            changer.gainDB = -4
            changer.equalizer = [EqualizerBand(kind: .peak, frequency: 900, gainDB: 5, q: 1.2)]
            changer.limitsOutput = false
        }
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 2, options: options)
        _ = try changer.process([first, first].map { Array($0[..<4000]) })
        settle(changer)
        _ = try changer.process([first, first].map { Array($0[4000..<4500]) })
        changer.reset()
        let fresh = try VoiceChanger(sampleRate: sampleRate, channels: 2, options: options)
        settle(fresh)
        let (out, tail) = try stream(changer, [second, second], block: 480)
        let (freshOut, freshTail) = try stream(fresh, [second, second], block: 480)
        #expect(out == freshOut && tail == freshTail)
        #expect(changer.voice == fresh.voice && changer.gainDB == fresh.gainDB && changer.equalizer == fresh.equalizer)
    }

    @Test func channelsAreIndependent() throws {
        let left = Signals.speechLike(sampleRate: sampleRate)
        let right = left.map { $0 * 0.5 }.reversed().map { $0 }
        let stereo = try VoiceChanger(sampleRate: sampleRate, channels: 2)
        stereo.voice.pitch = 1.1
        let (out, tail) = try stream(stereo, [left, right], block: 333)
        for (channel, signal) in [left, right].enumerated() {
            let mono = try VoiceChanger(sampleRate: sampleRate, channels: 1)
            mono.voice.pitch = 1.1
            let (alone, aloneTail) = try stream(mono, [signal], block: 333)
            #expect(out[channel] + tail[channel] == alone[0] + aloneTail[0], "channel \(channel)")
        }
    }

    @Test func pointerFormInPlaceEqualsArrayForm() throws {
        let input = Signals.speechLike(sampleRate: sampleRate).map(Float.init)
        let arrays = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        let pointers = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        for changer in [arrays, pointers] { changer.voice.pitch = 1.25 }
        var expected: [Float] = []
        var inPlace = input
        for start in stride(from: 0, to: input.count, by: 256) {
            let end = min(start + 256, input.count)
            expected += try arrays.process([Array(input[start..<end])])[0]
            try inPlace.withUnsafeMutableBufferPointer { buffer in
                let block = buffer.baseAddress! + start
                var reading = UnsafePointer(block)
                var writing = block
                try pointers.process(&reading, into: &writing, frames: end - start)
            }
        }
        #expect(inPlace == expected)
        var tail = [Float](repeating: .nan, count: pointers.latency)
        try tail.withUnsafeMutableBufferPointer { buffer in
            var writing = buffer.baseAddress!
            try pointers.finish(into: &writing)
        }
        #expect(tail == (try arrays.finish())[0])
    }

    @Test func refusesWhatItCannotRun() {
        #expect(throws: KoeError.self) { try VoiceChanger(sampleRate: 100, channels: 1) }
        #expect(throws: KoeError.self) { try VoiceChanger(sampleRate: 48000, channels: 0) }
        #expect(throws: KoeError.self) { try VoiceChanger(sampleRate: 48000, channels: -3) }
        var options = VoiceChanger.Options()
        options.analysis.f0Ceil = 5000
        #expect(throws: KoeError.self) { try VoiceChanger(sampleRate: 8000, channels: 1, options: options) }
        options = VoiceChanger.Options()
        options.threads = 0
        #expect(throws: KoeError.self) { try VoiceChanger(sampleRate: 48000, channels: 1, options: options) }
    }

    /// Counts a host could send by mistake are refused before anything is made of them.
    @Test func refusesChannelAndThreadCountsPastTheirLimits() {
        for channels in [1025, Int.max, Int.min] {
            #expect(throws: KoeError.self) { try VoiceChanger(sampleRate: 48000, channels: channels) }
        }
        for threads in [1025, Int.max] {
            var options = VoiceChanger.Options()
            options.threads = threads
            #expect(throws: KoeError.self) { try VoiceChanger(sampleRate: 48000, channels: 1, options: options) }
        }
        var analysis = AnalysisOptions()
        analysis.framePeriod = .nan
        var options = VoiceChanger.Options()
        options.analysis = analysis
        #expect(throws: KoeError.self) { try VoiceChanger(sampleRate: 48000, channels: 1, options: options) }
    }

    @Test func thePointerFormRefusesANegativeCountAndAFinishedStream() throws {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        var samples = [Float](repeating: 0.1, count: 16)
        try samples.withUnsafeMutableBufferPointer { buffer in
            var reading = UnsafePointer(buffer.baseAddress!)
            var writing = buffer.baseAddress!
            #expect(throws: KoeError.self) { try changer.process(&reading, into: &writing, frames: -1) }
            try changer.process(&reading, into: &writing, frames: 16)
            _ = try changer.finish()
            #expect(throws: KoeError.self) { try changer.process(&reading, into: &writing, frames: 16) }
            #expect(throws: KoeError.self) { try changer.finish() }
        }
    }

    @Test func refusesBadBlocksAndKeepsGoing() throws {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 2)
        let good: [[Float]] = [[Float](repeating: 0.1, count: 100), [Float](repeating: -0.1, count: 100)]
        #expect(throws: KoeError.self) { try changer.process([good[0]]) }
        #expect(throws: KoeError.self) { try changer.process([good[0], Array(good[1].prefix(99))]) }
        #expect(throws: KoeError.self) { try changer.process([good[0], good[1].map { _ in Float.nan }]) }
        #expect(throws: KoeError.self) { try changer.process([good[0], [Float](repeating: .infinity, count: 100)]) }
        #expect(try changer.process(good).map(\.count) == [100, 100])
        _ = try changer.finish()
        #expect(throws: KoeError.self) { try changer.process(good) }
        changer.reset()
        #expect(try changer.process(good).map(\.count) == [100, 100])
    }

    /// Found by the API fuzzer: Harvest's first block arrived after the changer's latency, which then threw.
    @Test func aHarvestChangerKeepsItsLatency() throws {
        var options = VoiceChanger.Options()
        options.analysis.f0Method = .harvest
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1, options: options)
        let input = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 2.5)
        let (out, tail) = try stream(changer, [input], block: 480)
        #expect(out[0].count + tail[0].count == input.count + changer.latency)
        #expect(out[0].allSatisfy { $0.isFinite } && tail[0].allSatisfy { $0.isFinite })
    }

    @Test func absurdSettingsAreClampedOrIgnored() throws {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        let ratios = try #require(Setting.named("pitch")?.range)
        changer.voice.pitch = 0
        #expect(changer.voice.pitch == ratios.lowerBound)
        changer.voice.pitch = 1e9
        #expect(changer.voice.pitch == ratios.upperBound)
        changer.voice.pitch = .nan
        #expect(changer.voice.pitch == ratios.upperBound)
        changer.voice.formant = -2
        #expect(changer.voice.formant == ratios.lowerBound)
        changer.voice.semitones = 12
        #expect(abs(changer.voice.pitch - 2) < 1e-12)
        // Found by the API fuzzer: 2^(1e9 / 12) overflowed to infinity, which the changer ignored as not finite.
        changer.voice.semitones = 1e9
        #expect(changer.voice.pitch == ratios.upperBound)
        changer.voice.semitones = -1e9
        #expect(changer.voice.pitch == ratios.lowerBound)
        changer.voice.semitones = .infinity
        #expect(changer.voice.pitch == ratios.lowerBound)
        changer.gainDB = .infinity
        #expect(changer.gainDB == 0)
        changer.gainDB = 500
        #expect(changer.gainDB == 60)
        changer.voice.pitchRange = -1
        #expect(changer.voice.pitchRange == 0)
        changer.voice.pitchMedian = 1e6
        #expect(changer.voice.pitchMedian == 5000)
        changer.equalizer = [
            EqualizerBand(kind: .peak, frequency: 9000, gainDB: 3, q: 1),
            EqualizerBand(kind: .peak, frequency: 1000, gainDB: 3, q: -1),
            EqualizerBand(kind: .peak, frequency: 1000, gainDB: 3, q: .leastNonzeroMagnitude),
            EqualizerBand(kind: .peak, frequency: 1000, gainDB: 0, q: 1),
            EqualizerBand(kind: .lowshelf, frequency: 200, gainDB: 3),
        ]
        #expect(changer.equalizer == [EqualizerBand(kind: .lowshelf, frequency: 200, gainDB: 3)])
        #expect(throws: KoeError.self) { try changer.apply(preset: "nobody") }
        try changer.apply(preset: "kawaii")
        #expect(changer.voice.pitch == 1.6 && changer.voice.formant == 1.2)
        changer.gainDB = 60
        changer.voice.pitch = 16
        let out = try changer.process([Signals.vowel(f0: 200, sampleRate: sampleRate, duration: 0.5).map(Float.init)])
        #expect(out[0].allSatisfy { $0.isFinite })
    }

    /// 150 Hz is 37 cents above D3 (146.83 Hz): snapped to the chromatic scale, the vowel comes out on D3.
    @Test func snapPutsAVowelOnItsNote() throws {
        let input = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 1)
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        changer.voice.snap = PitchSnap.Options()
        let (out, tail) = try stream(changer, [input], block: 480)
        let aligned = Array((out[0] + tail[0]).dropFirst(changer.latency))
        let f0 = try StoneMask(sampleRate: sampleRate).refine(aligned, contour: Dio(sampleRate: sampleRate).estimate(aligned)).f0
        let voiced = f0.filter { $0 > 0 }.sorted()
        let median = voiced[voiced.count / 2]
        #expect(abs(1200 * log2(median / 146.832)) < 5, "median F0 \(median) Hz")
    }

    /// Telephone-rate speech keeps its voice: at 8 kHz D4C's voicing test ends at Nyquist, so voiced frames are
    /// synthesised from pulses, not from noise alone (a whisper).
    @Test func aVoiceAt8kHzStaysVoiced() throws {
        let rate = 8000
        let input = Signals.vowel(f0: 110, sampleRate: rate, duration: 1)
        let changer = try VoiceChanger(sampleRate: rate, channels: 1)
        changer.voice.pitch = 1.2
        let (out, tail) = try stream(changer, [input], block: 400)
        let middle = Array(Array((out[0] + tail[0]).dropFirst(changer.latency))[(rate / 4)..<(3 * rate / 4)])
        func correlation(atLag lag: Int) -> Double {
            let a = middle.dropLast(lag), b = middle.dropFirst(lag)
            let dot = zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
            return dot / (a.reduce(0) { $0 + $1 * $1 } * b.reduce(0) { $0 + $1 * $1 }).squareRoot()
        }
        let period = Double(rate) / 132
        let strongest = (Int(period) - 3...Int(period) + 3).map(correlation(atLag:)).max()!
        #expect(strongest > 0.8, "normalised autocorrelation at a 132 Hz period: \(strongest)")
    }

    @Test func theLimiterKeepsALoudBlockWithinFullScaleAndCanBeSwitchedOff() throws {
        let input = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.8)
        func peak(limiting: Bool) throws -> Double {
            let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
            changer.gainDB = 12
            changer.limitsOutput = limiting
            let (out, tail) = try stream(changer, [input], block: 480)
            return (out[0] + tail[0]).map(abs).max()!
        }
        #expect(try peak(limiting: true) <= 1)
        #expect(try peak(limiting: false) > 1.5)
    }

    /// Found by the API fuzzer: frames the chain had made with the limiter off and the changer still held came
    /// out past full scale after it was switched on.
    @Test(arguments: [17, 480, 810, 2047])
    func everyFrameAfterTheLimiterIsSwitchedOnIsWithinFullScale(block: Int) throws {
        let input = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.8)
        for pitch in [1.0, 1.2] {
            let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
            changer.voice.pitch = pitch
            changer.gainDB = 12
            changer.limitsOutput = false
            let (out, _) = try stream(changer, [input], block: block, finishing: false)
            #expect(out[0].map(abs).max()! > 1.5)
            changer.limitsOutput = true
            let after = try changer.process([Array(input.prefix(block))]) + changer.finish(as: Double.self)
            #expect(after.joined().allSatisfy { abs($0) <= 1 }, "pitch \(pitch): peak \(after.joined().map(abs).max()!)")
        }
    }

    @Test func snapAndVibratoAreClampedOrIgnored() throws {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        changer.voice.snap = PitchSnap.Options(strength: 3, speed: -5, a4: 1000)
        #expect(changer.voice.snap == PitchSnap.Options(strength: 1, speed: 0, a4: 480))
        changer.voice.snap = PitchSnap.Options(strength: .nan)
        #expect(changer.voice.snap == PitchSnap.Options(strength: 1, speed: 0, a4: 480), "ignored")
        changer.voice.snap = nil
        #expect(changer.voice.snap == nil)
        changer.voice.vibrato = Vibrato.Options(rate: 100, depth: -1)
        #expect(changer.voice.vibrato == Vibrato.Options(rate: 20, depth: 0))
        changer.voice.vibrato = Vibrato.Options(rate: .infinity)
        #expect(changer.voice.vibrato == Vibrato.Options(rate: 20, depth: 0), "ignored")
    }

    @Test func aChangeGlidesInsteadOfJumping() throws {
        // A steady vowel; the pitch moves from 1 to 1.5 halfway. The output F0, frame by frame, must pass
        // through values between the two rather than step.
        let input = Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 1.2)
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        var out: [Double] = []
        for start in stride(from: 0, to: input.count, by: 160) {
            if start == input.count / 2 { changer.voice.pitch = 1.5 }
            out += try changer.process([Array(input[start..<min(start + 160, input.count)])])[0]
        }
        out += try changer.finish(as: Double.self)[0]
        let aligned = Array(out.dropFirst(changer.latency))
        let f0 = try StoneMask(sampleRate: sampleRate).refine(aligned, contour: Dio(sampleRate: sampleRate).estimate(aligned)).f0
        let between = f0.filter { $0 > 150 * 1.08 && $0 < 150 * 1.42 }
        #expect(between.count >= 3, "frames between the two pitches: \(between.count)")
        #expect(between.count <= 30, "a glide of 50 ms, not a slow drift: \(between.count) frames")
    }

    /// 441 samples, shorter than one analysis window (677 at 16 kHz): converted, not silenced.
    @Test func aStreamShorterThanAnAnalysisWindowIsConverted() throws {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        changer.voice.pitch = 1.2
        let input = Array(Signals.vowel(f0: 150, sampleRate: sampleRate, duration: 0.05).prefix(441))
        let (out, tail) = try stream(changer, [input], block: 160)
        #expect(tail[0].count == changer.latency)
        let converted = Array((out[0] + tail[0]).dropFirst(changer.latency))
        #expect(converted.count == 441 && converted.allSatisfy { $0.isFinite })
        #expect(converted.map(abs).max()! > 0.1)
    }

    /// Where the voice changes nothing the input itself passes, exactly, at the fixed delay; a change crossfades
    /// to the vocoder and back.
    @Test func anUnchangedVoicePassesTheInputThrough() throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        let latency = changer.latency
        let block = 160
        var output: [Double] = []
        for (number, start) in stride(from: 0, to: input.count, by: block).enumerated() {
            if number == 20 { changer.voice.pitch = 1.2 }
            if number == 60 { changer.voice.pitch = 1 }
            output += try changer.process([Array(input[start..<min(start + block, input.count)])])[0]
        }
        output += try changer.finish(as: Double.self)[0]
        let delayed = [Double](repeating: 0, count: latency) + input
        let switchedOn = 20 * block + latency, switchedOff = 60 * block + latency
        let glide = Glide.samples(sampleRate: sampleRate)
        #expect(Array(output[..<switchedOn]) == Array(delayed[..<switchedOn]), "dry before the change")
        #expect(output[(switchedOn + glide)..<switchedOff] != delayed[(switchedOn + glide)..<switchedOff], "wet at 1.2")
        #expect(Array(output[(switchedOff + glide)...]) == Array(delayed[(switchedOff + glide)...]), "dry again")
    }

    /// A conversion's settings, as `koe live` passes them: the voice and EQ taken, what needs a whole input or a
    /// higher rate refused with nothing changed.
    @Test func takesAConversionsSettings() throws {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        var settings = ConversionSettings()
        try settings.apply(preset: "kawaii")
        settings.voice.pitch = 1.3
        settings.equalizer = [EqualizerBand(kind: .peak, frequency: 1000, gainDB: 6)]
        settings.gainDB = -3
        settings.limitsOutput = false
        try changer.apply(settings)
        #expect(changer.voice.pitch == 1.3)
        #expect(changer.voice.formant == settings.voice.formant)
        #expect(changer.gainDB == -3 && !changer.limitsOutput)
        let fitting = try #require(settings.preset).bands(sampleRate: sampleRate).filter { !$0.isFlat }
        #expect(changer.equalizer == fitting + settings.equalizer)

        var tooHigh = settings
        tooHigh.equalizer = [EqualizerBand(kind: .peak, frequency: 9000, gainDB: 6)]
        #expect(throws: KoeError.self) { try changer.apply(tooHigh) }
        var faster = settings
        faster.voice.tempo = 2
        #expect(throws: KoeError.self) { try changer.apply(faster) }
        #expect(changer.equalizer == fitting + settings.equalizer, "a refused apply changes nothing")
        #expect(changer.voice.pitch == 1.3)

        var wide = settings
        wide.voice.formant = 40
        #expect(throws: KoeError.invalidArgument("formant must be between 0.0625 and 16 (got 40)")) { try changer.apply(wide) }
        #expect(changer.voice.formant == settings.voice.formant, "a refused apply changes nothing")
    }

    // MARK: a voice preset that aims at its target

    /// Speech-like: vowels of 0.6 s at about `f0`, 0.3 s of silence after each.
    private func phrases(f0: Double, parts: Int) -> [Double] {
        let silence = [Double](repeating: 0, count: sampleRate * 3 / 10)
        return (0..<parts).flatMap { (part: Int) -> [Double] in
            Signals.vowel(f0: f0 * (1 + 0.02 * Double(part % 3)), sampleRate: sampleRate, duration: 0.6) + silence
        }
    }

    /// The ratios applied after each block of `block` frames of `input`.
    private func appliedRatios(_ changer: VoiceChanger, _ input: [Double], block: Int) throws -> [(pitch: Double, formant: Double)] {
        var ratios: [(pitch: Double, formant: Double)] = []
        for start in stride(from: 0, to: input.count, by: block) {
            _ = try changer.process([Array(input[start..<min(input.count, start + block)])])
            ratios.append(changer.appliedRatios)
        }
        return ratios
    }

    /// A voice preset holds its typical ratios until 0.5 s of voice has been heard, then moves to the ratios that take
    /// this voice to its target, never more than a semitone in any 50 ms; the profile is the voice's.
    @Test func aPresetAimsAtItsTargetAsTheVoiceRuns() throws {
        var options = VoiceChanger.Options()
        options.analysis.live = true
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1, options: options)
        try changer.apply(preset: "female")
        #expect(changer.speakerProfile == nil && changer.voice.pitch == 1.7)
        let ratios = try appliedRatios(changer, phrases(f0: 110, parts: 5), block: sampleRate / 200)
        #expect(ratios[..<100].allSatisfy { $0 == (1.7, 1.15) }, "the first half second")
        let profile = try #require(changer.speakerProfile)
        #expect(abs(profile.f0Median / 110 - 1) < 0.03)
        #expect(abs(ratios.last!.pitch - 210 / profile.f0Median) < 1e-9, "\(ratios.last!.pitch)")
        #expect(changer.voice.pitch == 1.7, "the voice's own ratio stays the preset's")
        var largest = 0.0
        for start in ratios.indices {
            let span = ratios[start..<min(ratios.count, start + 11)]
            largest = max(largest, 12 * log2(span.map(\.pitch).max()! / span.map(\.pitch).min()!))
            largest = max(largest, 12 * log2(span.map(\.formant).max()! / span.map(\.formant).min()!))
        }
        #expect(largest <= 0.6 + 1e-9 && largest > 0.3, "\(largest) semitones in 50 ms")

        changer.voice.pitch = 1.3
        _ = try appliedRatios(changer, phrases(f0: 110, parts: 1), block: sampleRate / 200)
        #expect(changer.appliedRatios.pitch == 1.3, "a ratio set means what it says")
    }

    /// A profile measured before aims the voice from the first block.
    @Test func aKnownProfileAimsFromTheFirstBlock() throws {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        try changer.apply(preset: "kawaii")
        changer.speakerProfile = SpeakerProfile(f0Median: 100, f0Spread: 4, vocalTractLength: 17, voicedSeconds: 9)
        let ratios = try appliedRatios(changer, phrases(f0: 100, parts: 1), block: 512)
        // The preset's ratios until the first frame is synthesised (the latency), the aim's from that frame on.
        let first = try #require(ratios.firstIndex { $0.pitch != 1.6 })
        #expect(first <= changer.latency / 512 + 1, "\(first)")
        #expect(ratios[first...].allSatisfy { $0.pitch == 3 && abs($0.formant - 17 / 13.5) < 1e-12 })
    }

    /// The library equals the CLI here too: a changer whose preset aims gives what `convert --live` of the same
    /// samples gives, delayed by its latency, in blocks of any size.
    @Test(arguments: [17, 480])
    func anAimingChangerEqualsALiveConversion(block: Int) throws {
        let speech = phrases(f0: 120, parts: 4).map { Double(Float($0)) }
        var settings = ConversionSettings()
        try settings.apply(preset: "kawaii")
        settings.analysis.live = true
        var position = 0
        let source = ConversionInput.stream(name: "speech", sampleRate: sampleRate, channels: 1) { maxFrames in
            guard position < speech.count else { return nil }
            defer { position += maxFrames }
            return Array(speech[position..<min(speech.count, position + maxFrames)])
        }
        var converted: [Double] = []
        let statistics = try convert(source, to: .stream(fullScale: 1) { converted += $0; return 0 }, settings: settings)
        #expect(statistics.profile != nil)

        var options = VoiceChanger.Options()
        options.analysis.live = true
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1, options: options)
        try changer.apply(preset: "kawaii")
        let (out, tail) = try stream(changer, [speech], block: block)
        let changed = Array((out[0] + tail[0]).dropFirst(changer.latency))
        #expect(changed == converted, "largest difference \(largestDifference(changed, converted))")
    }

    /// A change made ready on another thread and taken between blocks (`prepare`, `take`: what koe live's audio
    /// thread does) gives what `apply` gives at the same moment, sample for sample: the same glides.
    @Test func aChangeTakenGivesWhatApplyGives() throws {
        let input = Signals.speechLike(sampleRate: sampleRate)
        var settings = ConversionSettings()
        try settings.set("pitch", to: "1.4")
        try settings.set("formant", to: "0.9")
        try settings.set("eq", to: "peak:1500:6:1.4")
        try settings.set("geq", to: "3,0,0,0,0,-4,0,0,0,0")
        try settings.set("gain", to: "-3")
        func run(taking: Bool) throws -> [Double] {
            let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
            changer.equalizer = [EqualizerBand(kind: .lowshelf, frequency: 200, gainDB: 4)]
            let half = input.count / 2
            var out = try changer.process([Array(input[..<half])])[0]
            if taking { changer.take(try changer.prepare(settings)) } else { try changer.apply(settings) }
            out += try changer.process([Array(input[half...])])[0]
            return out + (try changer.finish(as: Double.self))[0]
        }
        let taken = try run(taking: true), applied = try run(taking: false)
        #expect(taken == applied, "largest difference \(largestDifference(taken, applied))")
    }

    /// `prepare` refuses what `apply` refuses, and more EQ bands than a live voice takes without allocating.
    @Test func prepareRefusesWhatApplyRefuses() throws {
        let changer = try VoiceChanger(sampleRate: 16000, channels: 1)
        var tempo = ConversionSettings()
        tempo.voice.tempo = 1.2
        var aboveNyquist = ConversionSettings()
        aboveNyquist.equalizer = [EqualizerBand(kind: .peak, frequency: 9000, gainDB: 3)]
        var many = ConversionSettings()
        many.equalizer = (1...33).map { EqualizerBand(kind: .peak, frequency: Double(100 * $0), gainDB: 1) }
        for settings in [tempo, aboveNyquist, many] {
            #expect(throws: KoeError.self) { _ = try changer.prepare(settings) }
        }
        many.equalizer.removeLast()
        _ = try changer.prepare(many)
    }

    /// The F0 the vocoder heard and made, frame by frame, for koe live's chart: the made one is the heard one
    /// times the pitch ratio on a voiced vowel.
    @Test func latestF0IsTheHeardF0TimesTheRatio() throws {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        changer.voice.pitch = 1.5
        #expect(changer.latestF0.map { $0.input == 0 && $0.output == 0 } == true, "before any frame")
        let vowel = Signals.vowel(f0: 140, sampleRate: sampleRate, duration: 1)
        _ = try changer.process([vowel])
        let f0 = try #require(changer.latestF0)
        #expect(abs(f0.input / 140 - 1) < 0.05, "heard \(f0.input) Hz")
        #expect(abs(f0.output / f0.input - 1.5) < 1e-9, "made \(f0.output) Hz from \(f0.input) Hz")
    }
}
