// A program that uses koe as a Swift package dependency would: `import Koe` and nothing else of koe's.
// Reads mono float32 samples on standard input, streams them through a VoiceChanger in fixed blocks, changes
// the pitch at a given frame, and writes the output and then the tail (float32) on standard output.
// Usage: koe-library-client RATE BLOCK SWITCH_FRAME PITCH FORMANT PITCH_AFTER LIVE (1: VoiceChanger.Options.live)
import Foundation
import Koe

let arguments = CommandLine.arguments.dropFirst().map { Double($0) ?? .nan }
guard arguments.count == 7, arguments.allSatisfy(\.isFinite) else {
    FileHandle.standardError.write(Data("usage: koe-library-client RATE BLOCK SWITCH_FRAME PITCH FORMANT PITCH_AFTER LIVE\n".utf8))
    exit(2)
}
let (rate, block, switchFrame) = (Int(arguments[0]), Int(arguments[1]), Int(arguments[2]))
let bytes = FileHandle.standardInput.readDataToEndOfFile()
let input = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }

do {
    var options = VoiceChanger.Options()
    options.analysis.live = arguments[6] == 1
    let changer = try VoiceChanger(sampleRate: rate, channels: 1, options: options)
    changer.voice.pitch = arguments[3]
    changer.voice.formant = arguments[4]
    var output: [Float] = []
    for start in stride(from: 0, to: input.count, by: block) {
        if start == switchFrame { changer.voice.pitch = arguments[5] }
        let piece = Array(input[start..<min(start + block, input.count)])
        let converted = try changer.process([piece])
        guard converted.count == 1, converted[0].count == piece.count else {
            FileHandle.standardError.write(Data("block of \(piece.count) frames came back as \(converted.map(\.count))\n".utf8))
            exit(1)
        }
        output += converted[0]
    }
    output += try changer.finish()[0]
    FileHandle.standardOutput.write(output.withUnsafeBytes { Data($0) })
    FileHandle.standardError.write(Data("{\"latency\": \(changer.latency)}\n".utf8))
} catch {
    FileHandle.standardError.write(Data("koe-library-client: \(error)\n".utf8))
    exit(1)
}
