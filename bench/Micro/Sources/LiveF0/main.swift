// StreamingDio's live mode against whole-signal DIO (`Dio`, which equals pyworld.dio), frame by frame.
// Usage: live-f0 [--rates 16000,48000] [--look-aheads 0,10,20,30,40,50,80] [--chunk 4096] [--non-live MS]
//                [--so-far MS,...] [--detail] [--dump] WAV...
// Each file is resampled by sox to each rate (mono, float64). Per rate, over all files' frames together:
// V/UV agreement (% of frames both voiced or both unvoiced), the F0 error on jointly voiced frames (median,
// p95, % of frames beyond 5 %), and where the V/UV differs (voiced only in whole-signal DIO, or only live).
// The last rows of each rate are the anchors: today's non-live StreamingDio at 80 ms (--non-live adds a row at
// another look-ahead, from its least, 50 ms), and WORLD's own causal figure at each --so-far look-ahead
// (default 30 ms): each frame's F0 from whole-signal DIO run on the signal cut where live mode settles that
// frame (its look-ahead, then the end of its 5 ms block), as if the signal ended there. --detail counts the differing frames by their distance from the
// start or end of whole-signal DIO's voiced run or gap; --dump prints every frame's F0, whole and streamed.

import Foundation
import KoeWorld
import SpeechFiles

/// Each frame's F0 from whole-signal DIO on the signal up to the end of the live block that settles the frame
/// at `lookAhead`: the most the signal so far can tell WORLD itself.
func soFar(_ signal: [Double], rate: Int, lookAhead: Double, frames: Int) -> [Double] {
    let live = StreamingDio(sampleRate: rate, options: {
        var options = StreamingDio.Options()
        options.live = true
        options.lookAhead = lookAhead
        return options
    }())
    let block = live.blockLength
    var estimates: [Int: [Double]] = [:]
    return (0..<frames).map { frame in
        let centre = Int((Double(frame) * Dio.Options().framePeriod * Double(rate) / 1000).rounded())
        let blocks = (centre + live.lookAheadSamples + 1 + block - 1) / block
        let end = min(signal.count, blocks * block)
        if estimates[end] == nil {
            // Too short a cut for one analysis frame (the first few frames): unvoiced.
            estimates[end] = (try? Dio(sampleRate: rate).estimate(Array(signal[..<end])).f0) ?? []
        }
        let f0 = estimates[end]!
        return frame < f0.count ? f0[frame] : 0
    }
}

struct Tally {
    var frames = 0
    var agree = 0
    var onlyWhole = 0
    var onlyLive = 0
    var errors: [Double] = []
    var seconds = 0.0
    /// Differing frames by whole-signal DIO's V/UV there and their distance in frames (10 for 10 or more) from
    /// the nearer end of its voiced run or gap, for --detail.
    var mismatches: [String: Int] = [:]

    mutating func locate(live: [Double], whole: [Double]) {
        for frame in whole.indices where (live[frame] > 0) != (whole[frame] > 0) {
            // Distance to the start and end of whole DIO's voiced run (or gap) holding the frame.
            var start = frame
            while start > 0 && (whole[start - 1] > 0) == (whole[frame] > 0) { start -= 1 }
            var end = frame
            while end < whole.count - 1 && (whole[end + 1] > 0) == (whole[frame] > 0) { end += 1 }
            let kind = whole[frame] > 0 ? "whole voiced" : "whole unvoiced"
            let fromStart = frame - start
            let fromEnd = end - frame
            let place = fromStart <= fromEnd ? "start+\(min(fromStart, 10))" : "end-\(min(fromEnd, 10))"
            mismatches["\(kind) \(place)", default: 0] += 1
        }
    }

    mutating func add(live: [Double], whole: [Double]) {
        for (a, b) in zip(live, whole) {
            frames += 1
            switch (a > 0, b > 0) {
            case (true, true):
                agree += 1
                errors.append(abs(a - b) / b * 100)
            case (false, false):
                agree += 1
            case (false, true):
                onlyWhole += 1
            case (true, false):
                onlyLive += 1
            }
        }
    }

    func row(_ label: String, latency: String) -> String {
        func pct(_ n: Int, of total: Int) -> String { String(format: "%.2f", 100 * Double(n) / Double(max(total, 1))) }
        let gross = errors.filter { $0 > 5 }.count
        return [label, latency, "\(frames)", pct(agree, of: frames), pct(onlyWhole, of: frames), pct(onlyLive, of: frames),
                String(format: "%.3f", percentile(errors, 50)), String(format: "%.2f", percentile(errors, 95)), pct(gross, of: errors.count),
                String(format: "%.3f", seconds)].joined(separator: " | ")
    }
}

var rates = [16000, 48000]
var lookAheads: [Double] = [0, 10, 20, 30, 40, 50, 80]
var chunk = 4096
var files: [String] = []
var detail = false
var dump = false
var nonLive: Double?
var soFarLookAheads: [Double] = [30]
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--rates": rates = arguments.popFirst()!.split(separator: ",").map { Int($0)! }
    case "--look-aheads": lookAheads = arguments.popFirst()!.split(separator: ",").map { Double($0)! }
    case "--chunk": chunk = Int(arguments.popFirst()!)!
    case "--detail": detail = true
    case "--dump": dump = true
    case "--non-live": nonLive = Double(arguments.popFirst()!)!
    case "--so-far": soFarLookAheads = arguments.popFirst()!.split(separator: ",").map { Double($0)! }
    default: files.append(argument)
    }
}
guard !files.isEmpty else {
    FileHandle.standardError.write(
        "usage: live-f0 [--rates R,...] [--look-aheads MS,...] [--chunk N] [--non-live MS] [--so-far MS,...] [--detail] [--dump] WAV...\n"
            .data(using: .utf8)!)
    exit(2)
}

print("files: " + files.map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: " "))
print("mode | latency ms | frames | V/UV agree % | voiced only whole % | voiced only live % | median err % | p95 err % | >5 % err frames % | s per s audio")
print("---|---|---|---|---|---|---|---|---|---")
for rate in rates {
    let signals = try files.map { try read($0, rate: rate) }
    let audioSeconds = Double(signals.reduce(0) { $0 + $1.count }) / Double(rate)
    let whole = try signals.map { try Dio(sampleRate: rate).estimate($0).f0 }
    var runs: [(String, StreamingDio.Options)] = lookAheads.map { lookAhead in
        var options = StreamingDio.Options()
        options.live = true
        options.lookAhead = lookAhead
        return ("\(rate / 1000) kHz live \(Int(lookAhead)) ms", options)
    }
    if let nonLive {
        var options = StreamingDio.Options()
        options.lookAhead = nonLive
        runs.append(("\(rate / 1000) kHz non-live \(Int(nonLive)) ms", options))
    }
    runs.append(("\(rate / 1000) kHz non-live 80 ms (anchor)", StreamingDio.Options()))
    for (label, options) in runs {
        var tally = Tally()
        let clock = ContinuousClock()
        let start = clock.now
        for (signal, reference) in zip(signals, whole) {
            let live = StreamingDio(sampleRate: rate, options: options).f0(streaming: signal, chunk: chunk)
            tally.add(live: live, whole: reference)
            if detail { tally.locate(live: live, whole: reference) }
            if dump {
                for frame in reference.indices {
                    print(String(format: "%5d %.17g %.17g%@", frame, reference[frame], live[frame],
                                 (live[frame] > 0) != (reference[frame] > 0) ? " <<" : ""))
                }
            }
        }
        let elapsed = start.duration(to: clock.now)
        tally.seconds = (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18) / audioSeconds
        let latency = Double(StreamingDio(sampleRate: rate, options: options).latency) * 1000 / Double(rate)
        print(tally.row(label, latency: String(format: "%.1f", latency)))
        if detail {
            print(tally.mismatches.sorted { $0.value > $1.value }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))
        }
    }
    for lookAhead in soFarLookAheads {
        var tally = Tally()
        let clock = ContinuousClock()
        let start = clock.now
        for (signal, reference) in zip(signals, whole) {
            tally.add(live: soFar(signal, rate: rate, lookAhead: lookAhead, frames: reference.count), whole: reference)
        }
        let elapsed = start.duration(to: clock.now)
        tally.seconds = (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18) / audioSeconds
        // The cut is where live mode at this look-ahead settles the frame: its latency.
        var options = StreamingDio.Options()
        options.live = true
        options.lookAhead = lookAhead
        let latency = Double(StreamingDio(sampleRate: rate, options: options).latency) * 1000 / Double(rate)
        print(tally.row("\(rate / 1000) kHz WORLD on the signal so far, \(Int(lookAhead)) ms (anchor)",
                        latency: String(format: "%.1f", latency)))
    }
}
