import Glibc
import KoeDSP
import KoeStages
import KoeWorld

extension Engine {
    /// Swift's runtime sets up some of the types a stream uses the first time they are used, under its locks: once
    /// per process, sample rate and analysis, a scratch engine runs a vowel through the planar block path while its
    /// settings move out of identity and back, as a host's controls do, so that every path a block or a setting
    /// can take has run here, not in a host's audio callback. Only a stream on one thread promises its blocks take
    /// no lock, so only such a stream warms up.
    static func warmUp(sampleRate: Int, analysis: AnalysisOptions, threads: Int) throws {
        guard threads == 1, WarmedUp.shared.insert("\(sampleRate) \(analysis)") else { return }
        let scratch = try unwarmedStream(sampleRate: sampleRate, channels: 1, analysis: analysis, threads: 1)
        func moveVoice(_ change: (inout VoiceSettings) -> Void) {
            var voice = scratch.voice
            change(&voice)
            scratch.change(voice: voice)
        }
        // A voice aiming at a preset's target from a profile known before, which the scratch voice takes at once.
        let aiming = Preset.all.lazy.compactMap(\.aiming).first!
        scratch.set(knownProfile: SpeakerProfile(f0Median: 150, f0Spread: 4, vocalTractLength: 16, voicedSeconds: 3))
        let moves: [() -> Void] = [
            { moveVoice { $0.pitch = 1.2 } }, { moveVoice { $0.formant = 1.1 } }, { scratch.set(gainDB: -3) },
            { scratch.change(voice: VoiceSettings()) }, { scratch.set(gainDB: 0) }, { moveVoice { $0.pitch = 0.9 } },
            {
                moveVoice {
                    ($0.pitch, $0.formant) = (aiming.typicalPitch, aiming.typicalFormant)
                    $0.aiming = aiming
                }
            },
        ]
        var vowel = (0..<(sampleRate / 2)).map { Float(0.3 * sin(2 * Double.pi * 150 * Double($0) / Double(sampleRate))) }
        try vowel.withUnsafeMutableBufferPointer { samples throws(KoeError) in
            for (index, start) in stride(from: 0, to: samples.count, by: pieceFrames).enumerated() {
                moves[index % moves.count]()
                var channel = samples.baseAddress! + start
                let frames = min(pieceFrames, samples.count - start)
                try withUnsafePointer(to: &channel) { output throws(KoeError) in
                    try output.withMemoryRebound(to: UnsafePointer<Float>.self, capacity: 1) { input throws(KoeError) in
                        try scratch.process(input, into: output, frames: frames)
                    }
                }
            }
        }
    }
}

/// The sample rates and analyses `Engine.warmUp` has run with in this process.
private final class WarmedUp: @unchecked Sendable {
    static let shared = WarmedUp()

    private let lock = Lock()
    private var keys: Set<String> = []

    /// True if `key` is new.
    func insert(_ key: String) -> Bool {
        lock.withLock { keys.insert(key).inserted }
    }
}
