// A long stream through one VoiceChanger, as a live host would run it: 48 kHz mono in 480-frame blocks through
// the pointer form, a settings change every second. Reads mono float32 speech on standard input and loops it.
// Prints one JSON line a minute of audio (resident memory, non-finite samples, peak) and one at the end.
// Usage: koe-soak MINUTES
import Foundation
import Koe

let rate = 48_000
let block = 480
guard CommandLine.arguments.count == 2, let minutes = Int(CommandLine.arguments[1]), minutes > 0 else {
    FileHandle.standardError.write(Data("usage: koe-soak MINUTES\n".utf8))
    exit(2)
}
let bytes = FileHandle.standardInput.readDataToEndOfFile()
let speech = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
guard speech.count >= block else {
    FileHandle.standardError.write(Data("koe-soak: give at least \(block) samples of speech on standard input\n".utf8))
    exit(2)
}

/// Resident memory in KiB, from /proc/self/statm (pages).
func residentKiB() -> Int {
    let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024 : 0
}

/// The settings of second `second`: pitch, formant, gain and EQ all move, some seconds with a preset.
func change(_ changer: VoiceChanger, second: Int) throws {
    let pitches = [1.2, 0.8, 1.5, 1.0, 0.6, 2.0]
    let formants = [1.1, 0.9, 1.3, 1.0, 0.8]
    if second % 17 == 16 {
        try changer.apply(preset: ["kawaii", "deep", "giant"][second / 17 % 3])
        return
    }
    changer.voice.pitch = pitches[second % pitches.count]
    changer.voice.formant = formants[second % formants.count]
    changer.gainDB = Double(second % 7) - 3
    changer.voice.pitchRange = second % 5 == 0 ? 0.5 : 1
    changer.equalizer = second % 3 == 0
        ? [EqualizerBand(kind: .peak, frequency: 1000 + Double(second % 11) * 100, gainDB: 6, q: 1.4)]
        : []
}

do {
    let changer = try VoiceChanger(sampleRate: rate, channels: 1)
    // Buffers and channel pointer tables taken once, as an audio callback has them.
    let input = UnsafeMutablePointer<Float>.allocate(capacity: block)
    let output = UnsafeMutablePointer<Float>.allocate(capacity: block)
    let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 1)
    let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
    inputs[0] = UnsafePointer(input)
    outputs[0] = output
    var position = 0
    var nonFinite = 0
    var peak: Float = 0
    let blocksPerSecond = rate / block
    let start = Date()
    for second in 0..<(minutes * 60) {
        try change(changer, second: second)
        for _ in 0..<blocksPerSecond {
            for index in 0..<block {
                input[index] = speech[position]
                position = position + 1 == speech.count ? 0 : position + 1
            }
            try changer.process(inputs, into: outputs, frames: block)
            for sample in UnsafeBufferPointer(start: output, count: block) {
                if sample.isFinite { peak = max(peak, abs(sample)) } else { nonFinite += 1 }
            }
        }
        if (second + 1) % 60 == 0 {
            let line = "{\"minute\": \((second + 1) / 60), \"rss_kib\": \(residentKiB()), \"non_finite\": \(nonFinite), "
                + "\"peak\": \(peak), \"seconds\": \(Date().timeIntervalSince(start))}\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }
} catch {
    FileHandle.standardError.write(Data("koe-soak: \(error)\n".utf8))
    exit(1)
}
