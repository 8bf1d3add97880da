import Foundation
import KoeStages
import Testing
import TestSupport

@Suite struct SpeakerProfileTests {
    /// The formants of a uniform tube `length` cm long, closed at one end: (2i − 1) c / 4L, c = 350 m/s.
    static func tube(_ length: Double, count: Int = 6) -> [Double] {
        (1...count).map { Double(2 * $0 - 1) * 35_000 / (4 * length) }
    }

    /// A vowel as a source-filter model makes one (Klatt): pulses at `f0` whose periods wander by up to `jitter`
    /// either way, a glottal source falling 12 dB an octave (two leaky integrators at 100 Hz), the tube's formants
    /// (bandwidths 60 Hz and 30 Hz more each), the lips' radiation (a difference) and a noise floor 80 dB down.
    static func vowel(f0: Double, length: Double, sampleRate: Int, duration: Double, jitter: Double = 0.01, seed: UInt64 = 1) -> [Double] {
        let count = Int(duration * Double(sampleRate))
        let wander = Signals.whiteNoise(count: count, amplitude: jitter, seed: seed)
        var signal = [Double](repeating: 0, count: count)
        var position = 0.0, pulse = 0
        while Int(position) < count {
            signal[Int(position)] = 1
            position += Double(sampleRate) / f0 * (1 + wander[pulse])
            pulse += 1
        }
        let leak = exp(-2 * Double.pi * 100 / Double(sampleRate))
        for _ in 0..<2 {
            var state = 0.0
            signal = signal.map { sample in
                state = sample + leak * state
                return state
            }
        }
        for (index, formant) in tube(length).enumerated() where formant < Double(sampleRate) / 2 - 500 {
            signal = resonate(signal, frequency: formant, bandwidth: 60 + 30 * Double(index), sampleRate: sampleRate)
        }
        signal = zip(signal, [0] + signal.dropLast()).map { $0 - $1 }
        let peak = signal.map(abs).max() ?? 1
        let floor = Signals.whiteNoise(count: count, amplitude: 1e-4, seed: seed + 1)
        return zip(signal, floor).map { 0.5 * $0 / peak + $1 }
    }

    static func resonate(_ x: [Double], frequency: Double, bandwidth: Double, sampleRate: Int) -> [Double] {
        let radius = exp(-Double.pi * bandwidth / Double(sampleRate))
        let a1 = 2 * radius * cos(2 * Double.pi * frequency / Double(sampleRate)), a2 = -radius * radius
        var y1 = 0.0, y2 = 0.0
        return x.map { sample in
            let y = sample + a1 * y1 + a2 * y2
            (y2, y1) = (y1, y)
            return y
        }
    }

    @Test(arguments: [16000, 44100, 48000])
    func findsTheF0AndTheTractOfASteadyVowel(sampleRate: Int) throws {
        for (f0, length) in [(110.0, 17.5), (220.0, 14.5)] {
            let vowel = Self.vowel(f0: f0, length: length, sampleRate: sampleRate, duration: 1.5)
            let profile = try SpeakerProfile(analyzing: vowel, sampleRate: sampleRate)
            #expect(abs(profile.f0Median / f0 - 1) < 0.01, "\(f0) Hz at \(sampleRate) Hz: \(profile.f0Median)")
            #expect(abs(profile.vocalTractLength - length) < 0.4, "\(length) cm at \(sampleRate) Hz: \(profile.vocalTractLength)")
            #expect(profile.f0Spread < 0.5)
            #expect(abs(profile.voicedSeconds - 1.45) < 0.1, "\(profile.voicedSeconds)")
        }
    }

    @Test func aLongerTractIsLongerAtTheSameF0() throws {
        let short = try SpeakerProfile(analyzing: Self.vowel(f0: 150, length: 14, sampleRate: 16000, duration: 1), sampleRate: 16000)
        let long = try SpeakerProfile(analyzing: Self.vowel(f0: 150, length: 18, sampleRate: 16000, duration: 1), sampleRate: 16000)
        #expect(long.vocalTractLength > short.vocalTractLength + 3, "\(short.vocalTractLength) \(long.vocalTractLength)")
        #expect(abs(short.f0Median - long.f0Median) < 1)
    }

    @Test func spreadIsTheSemitonesBetweenTheTenthAndNinetiethPercentiles() throws {
        let sampleRate = 16000
        let voice = [100.0, 141.4, 200].flatMap { Self.vowel(f0: $0, length: 16, sampleRate: sampleRate, duration: 1) }
        let profile = try SpeakerProfile(analyzing: voice, sampleRate: sampleRate)
        #expect(abs(profile.f0Spread - 12) < 0.5, "\(profile.f0Spread)")
        #expect(abs(profile.f0Median / 141.4 - 1) < 0.02, "\(profile.f0Median)")
    }

    /// A voice whose fundamental a radio band took away: its harmonics 2 to 30 only. Its period is still 1/110 s,
    /// where Harvest and DIO find the second harmonic, 220 Hz.
    @Test func aMissingFundamentalIsNotAnOctaveUp() throws {
        let sampleRate = 16000
        let samples = (0..<(2 * sampleRate)).map { index in
            (2...30).reduce(0.0) { sum, harmonic in
                sum + 0.1 / Double(harmonic) * cos(2 * Double.pi * 110 * Double(harmonic) * Double(index) / Double(sampleRate))
            }
        }
        let profile = try SpeakerProfile(analyzing: samples, sampleRate: sampleRate)
        #expect(abs(profile.f0Median / 110 - 1) < 0.01, "\(profile.f0Median)")
    }

    /// Creaks an octave down (irregular periods of about twice the voice's) do not move the median: the path
    /// stays with the voice.
    @Test func creakAnOctaveDownDoesNotMoveTheMedian() throws {
        let sampleRate = 16000
        var voice: [Double] = []
        for seed in 0..<6 {
            voice += Self.vowel(f0: 200, length: 15, sampleRate: sampleRate, duration: 0.3, jitter: 0.02, seed: UInt64(10 * seed))
            voice += Self.vowel(f0: 100, length: 15, sampleRate: sampleRate, duration: 0.04, jitter: 0.1, seed: UInt64(10 * seed + 5))
        }
        let profile = try SpeakerProfile(analyzing: voice, sampleRate: sampleRate)
        #expect(abs(profile.f0Median / 200 - 1) < 0.01, "\(profile.f0Median)")
    }

    @Test func chunksGiveTheWholeSignalsProfile() throws {
        let voice = Signals.speechLike() + Self.vowel(f0: 150, length: 16, sampleRate: 16000, duration: 0.5)
        let whole = try SpeakerProfile(analyzing: voice, sampleRate: 16000)
        var profiler = try SpeakerProfiler(sampleRate: 16000)
        for start in stride(from: 0, to: voice.count, by: 777) {
            try profiler.add(Array(voice[start..<min(start + 777, voice.count)]))
        }
        let chunked = try profiler.finish()
        #expect(chunked.f0Median == whole.f0Median && chunked.f0Spread == whole.f0Spread)
        #expect(chunked.vocalTractLength == whole.vocalTractLength && chunked.voicedSeconds == whole.voicedSeconds)
    }

    @Test func refusesWhatHasNoVoice() {
        #expect(throws: KoeError.self) { try SpeakerProfile(analyzing: [Double](repeating: 0, count: 16000), sampleRate: 16000) }
        #expect(throws: KoeError.self) { try SpeakerProfile(analyzing: Signals.whiteNoise(count: 16000, amplitude: 0.3), sampleRate: 16000) }
        #expect(throws: KoeError.self) { try SpeakerProfile(analyzing: [0.1, 0.2], sampleRate: 16000) }
        #expect(throws: KoeError.self) { try SpeakerProfile(analyzing: [], sampleRate: 16000) }
        #expect(throws: KoeError.self) { try SpeakerProfile(analyzing: Signals.vowel(f0: 120, sampleRate: 16000, duration: 0.5), sampleRate: 4000) }
        var withNaN = Self.vowel(f0: 120, length: 17, sampleRate: 16000, duration: 0.5)
        withNaN[100] = .nan
        #expect(throws: KoeError.self) { try SpeakerProfile(analyzing: withNaN, sampleRate: 16000) }
    }
}
