import Foundation
import KoeStages
import Testing
import TestSupport

@Suite struct RunningSpeakerProfileTests {
    typealias Change = (position: Int, profile: SpeakerProfile?)

    /// Speech-like: `parts` vowels of 0.6 s at `f0` from a `length` cm tract, each followed by 0.3 s of silence.
    static func phrases(f0: Double, length: Double = 17, sampleRate: Int, parts: Int) -> [Double] {
        let silence = [Double](repeating: 0, count: Int(0.3 * Double(sampleRate)))
        return (0..<parts).flatMap { (part: Int) -> [Double] in
            let pitch = f0 * (1 + 0.02 * Double(part % 3))
            let vowel = SpeakerProfileTests.vowel(f0: pitch, length: length, sampleRate: sampleRate, duration: 0.6, seed: UInt64(part + 1))
            return vowel + silence
        }
    }

    /// `samples` through `profile` in pieces of `piece` samples: the changes it told of.
    private func listen(_ samples: [Double], piece: Int, to profile: inout RunningSpeakerProfile) -> [Change] {
        var changes: [Change] = []
        for start in stride(from: 0, to: samples.count, by: piece) {
            samples[start..<min(samples.count, start + piece)].withUnsafeBufferPointer { buffer in
                profile.add(buffer) { changes.append(($0, $1)) }
            }
        }
        return changes
    }

    private func same(_ first: SpeakerProfile?, _ second: SpeakerProfile?) -> Bool {
        guard let first, let second else { return first == nil && second == nil }
        return first.f0Median == second.f0Median && first.f0Spread == second.f0Spread
            && (first.vocalTractLength == second.vocalTractLength || first.vocalTractLength.isNaN && second.vocalTractLength.isNaN)
            && first.voicedSeconds == second.voicedSeconds
    }

    /// The estimate is first told once 0.5 s of voice has been heard, and by the end of the voice it is the profile
    /// a file of the same samples has: the same measure.
    @Test(arguments: [16000, 48000])
    func convergesOnWhatTheFilesProfileSays(sampleRate: Int) throws {
        let voice = Self.phrases(f0: 120, length: 17.5, sampleRate: sampleRate, parts: 5)
        var running = try RunningSpeakerProfile(sampleRate: sampleRate)
        let changes = listen(voice, piece: 480, to: &running)
        let first = try #require(changes.first)
        let firstProfile = try #require(first.profile)
        #expect(firstProfile.voicedSeconds >= RunningSpeakerProfile.usableVoicedSeconds)
        // The first vowel (0.6 s) holds the first half second of voice; it is told once decided, within 0.8 s.
        #expect(first.position < Int(1.3 * Double(sampleRate)), "\(first.position)")
        #expect(abs(firstProfile.f0Median / 120 - 1) < 0.03, "\(firstProfile.f0Median)")

        let file = try SpeakerProfile(analyzing: voice, sampleRate: sampleRate)
        let estimate = try #require(running.estimate)
        #expect(abs(estimate.f0Median / file.f0Median - 1) < 0.005, "\(estimate.f0Median) against \(file.f0Median)")
        #expect(abs(estimate.f0Spread - file.f0Spread) < 0.3, "\(estimate.f0Spread) against \(file.f0Spread)")
        #expect(abs(estimate.vocalTractLength - file.vocalTractLength) < 0.2, "\(estimate.vocalTractLength) against \(file.vocalTractLength)")
        // The last frames are decided 0.3 s after them, and counted in the estimate each 0.1 s.
        #expect(abs(estimate.voicedSeconds - file.voicedSeconds) < 0.1, "\(estimate.voicedSeconds) against \(file.voicedSeconds)")
        #expect(running.current.map { same($0, estimate) } == true)
        #expect(changes.map(\.position) == changes.map(\.position).sorted() && Set(changes.map(\.position)).count == changes.count)
    }

    /// A whisper of a vowel: breath shaped by the vocal tract, noise through the formants of a `length` cm tube,
    /// each far wider than a voiced vowel's (whispered vowels' bandwidths are about twice phonated ones'), as loud
    /// as `SpeakerProfileTests.vowel`.
    static func whisper(length: Double, sampleRate: Int, duration: Double, seed: UInt64) -> [Double] {
        var noise = Signals.whiteNoise(count: Int(duration * Double(sampleRate)), amplitude: 1, seed: seed)
        for (index, formant) in SpeakerProfileTests.tube(length).enumerated() where formant < Double(sampleRate) / 2 - 500 {
            noise = SpeakerProfileTests.resonate(noise, frequency: formant, bandwidth: 250 + 50 * Double(index), sampleRate: sampleRate)
        }
        let peak = noise.map(abs).max() ?? 1
        return noise.map { 0.5 * $0 / peak }
    }

    /// Silence, breath (white noise) and a whisper after a voice tell of no change and leave the estimate as it
    /// was; alone, they never make one.
    @Test func silenceBreathAndWhisperLeaveItAsItIs() throws {
        let sampleRate = 16000
        let voice = Self.phrases(f0: 150, length: 15, sampleRate: sampleRate, parts: 3)
        let silence = [Double](repeating: 0, count: sampleRate)
        let breath = Signals.whiteNoise(count: 2 * sampleRate, amplitude: 0.05, seed: 9)
        let unvoiced = silence + breath + Self.whisper(length: 15, sampleRate: sampleRate, duration: 3, seed: 11)

        var running = try RunningSpeakerProfile(sampleRate: sampleRate)
        // The voice's last frames are decided 0.3 s after them, in the silence that follows it.
        _ = listen(voice + silence, piece: 333, to: &running)
        let before = try #require(running.estimate)
        let changes = listen(unvoiced, piece: 333, to: &running)
        #expect(changes.isEmpty, "\(changes.count) changes, the first \(String(describing: changes.first))")
        #expect(same(running.estimate, before))

        var alone = try RunningSpeakerProfile(sampleRate: sampleRate)
        #expect(listen(unvoiced + unvoiced, piece: 333, to: &alone).isEmpty && alone.estimate == nil)
    }

    /// However the samples are cut, the same profiles are told at the same places.
    @Test(arguments: [1, 17, 1000])
    func piecesDoNotChangeWhatIsTold(piece: Int) throws {
        let sampleRate = 16000
        let voice = Self.phrases(f0: 110, sampleRate: sampleRate, parts: 2) + Self.phrases(f0: 180, length: 14.5, sampleRate: sampleRate, parts: 2)
        var whole = try RunningSpeakerProfile(sampleRate: sampleRate)
        var pieces = try RunningSpeakerProfile(sampleRate: sampleRate)
        let expected = listen(voice, piece: voice.count, to: &whole)
        let told = listen(voice, piece: piece, to: &pieces)
        #expect(expected.count > 3)
        #expect(told.map(\.position) == expected.map(\.position))
        #expect(zip(told, expected).allSatisfy { same($0.profile, $1.profile) })
    }

    /// A profile known before the voice is told at once and holds until the estimate is usable; a reset forgets
    /// the voice heard but not the profile known.
    @Test func aKnownProfileHoldsUntilTheEstimate() throws {
        let sampleRate = 16000
        let known = SpeakerProfile(f0Median: 200, f0Spread: 3, vocalTractLength: 15, voicedSeconds: 10)
        var running = try RunningSpeakerProfile(sampleRate: sampleRate)
        running.known = known
        #expect(same(running.current, known))
        let voice = Self.phrases(f0: 110, sampleRate: sampleRate, parts: 4)
        var changes = listen(voice, piece: 500, to: &running)
        #expect(changes.first?.position == 0 && same(changes.first?.profile, known))
        #expect(changes.count > 2 && abs((changes.last?.profile?.f0Median ?? 0) / 110 - 1) < 0.03)
        #expect(running.estimate != nil && !same(running.current, known))

        running.reset()
        #expect(running.estimate == nil && same(running.current, known))
        changes = listen(Array(voice.prefix(sampleRate / 2)), piece: 500, to: &running)
        #expect(changes.count == 1 && changes.first?.position == 0 && same(changes.first?.profile, known))
    }

    /// A new voice takes over the estimate once it has been heard longer than the first.
    @Test func aNewVoiceTakesOver() throws {
        let sampleRate = 16000
        var running = try RunningSpeakerProfile(sampleRate: sampleRate)
        _ = listen(Self.phrases(f0: 110, sampleRate: sampleRate, parts: 3), piece: 800, to: &running)
        #expect(abs((running.estimate?.f0Median ?? 0) / 110 - 1) < 0.03)
        _ = listen(Self.phrases(f0: 220, length: 14.5, sampleRate: sampleRate, parts: 6), piece: 800, to: &running)
        #expect(abs((running.estimate?.f0Median ?? 0) / 220 - 1) < 0.03, "\(running.estimate?.f0Median ?? 0)")
    }
}
