// Issue 23's voicing bars: live mode's F0 (`koe analyze --live`) against whole-file DIO + StoneMask (`koe analyze`),
// frame by frame, per file and rate. Both come from `F0Contour(estimating:sampleRate:options:)`, the call
// `koe analyze` makes, with and without `live`.
// Usage: live-voicing [--rates 8000,16000,44100,48000] [--look-ahead MS] [--candidate live|harvest|dio@8k]
//                     [--dump NAME@RATE] FILE...
// Each file is resampled by sox to each rate (a .raw file is read as 8 kHz signed 16-bit mono, codec2's kind).
// Per file: whole-file voiced frames that live leaves unvoiced ("lost"); of those also clearly periodic (below),
// the share lost ("clear lost"); lost frames between two frames of the same whole-file voiced run that live voices
// ("holes", as a share of all whole-file voiced frames); frames voiced only live, and those of them clearly periodic
// (shares of all frames); V/UV agreement; the F0 error's 95th percentile on jointly voiced frames, and in brackets on
// those of them clearly periodic (where the input pins an F0 down; in creak the two trackers' F0 differ by chance).
// Then, per recording, the spread of the lost share over the rates, and pooled figures.
// Clearly periodic: YIN's cumulative mean normalised difference (de Cheveigné & Kawahara 2002) over a 25 ms window
// centred on the frame, each lag compared symmetrically about it (so the evidence lies within 12.5 ms plus half
// the longest lag, 8.3 ms, of the frame), has its minimum over the lags of 60 to 800 Hz at most 0.15, and the
// window's RMS is above -50 dBFS.
// Bars (exit status 1 if one fails): clear lost <= 1 % and holes <= 2 % in every file, lost shares of one recording
// within 2 points over the rates. Stretch, reported only: lost <= 4 % per file, agreement >= 97 % pooled.
// --dump prints one file's frames: whole-file F0, live F0, clearly periodic, YIN minimum, level.
// --candidate measures another F0 in live mode's place, by the same figures and bars: WORLD's own trackers as an
// anchor. `harvest` is whole-file Harvest at each rate; `dio@8k` whole-file DIO + StoneMask of the recording at
// 8 kHz, against whole-file DIO at each rate (its frames cut or padded unvoiced to that rate's count): what the
// reference itself keeps of its voicing from one rate to another.

import Foundation
import KoeWorld
import SpeechFiles

/// Per frame: whether the signal is clearly periodic there, with the CMND minimum and the level in dBFS.
func periodicity(_ signal: [Double], rate: Int, frames: Int, framePeriod: Double) -> [(clear: Bool, minimum: Double, level: Double)] {
    let window = Int((0.025 * Double(rate)).rounded())
    let half = window / 2
    let shortestLag = Int((Double(rate) / 800).rounded(.up))
    let longestLag = Int((Double(rate) / 60).rounded(.down))
    let pad = longestLag + window
    let padded = [Double](repeating: 0, count: pad) + signal + [Double](repeating: 0, count: pad)
    let centres = (0..<frames).map { Int((Double($0) * framePeriod * Double(rate) / 1000).rounded()) + pad }
    // difference[frame * longestLag + lag - 1]: the squared differences of the window's samples `lag` apart, the
    // pairs centred on the frame. Running sums over the whole signal, one lag at a time.
    var difference = [Double](repeating: 0, count: frames * longestLag)
    var running = [Double](repeating: 0, count: padded.count + 1)
    for lag in 1...longestLag {
        var sum = 0.0
        for index in 0..<(padded.count - lag) {
            running[index] = sum
            let step = padded[index] - padded[index + lag]
            sum += step * step
        }
        running[padded.count - lag] = sum
        for (frame, centre) in centres.enumerated() {
            let start = centre - half - lag / 2
            difference[frame * longestLag + lag - 1] = running[start + window] - running[start]
        }
    }
    return centres.enumerated().map { frame, centre in
        var energy = 0.0
        for index in (centre - half)..<(centre - half + window) {
            energy += padded[index] * padded[index]
        }
        let level = 10 * log10(max(energy / Double(window), 1e-30))
        var cumulative = 0.0
        var minimum = 1.0
        for lag in 1...longestLag {
            let value = difference[frame * longestLag + lag - 1]
            cumulative += value
            if lag >= shortestLag, cumulative > 0 {
                minimum = min(minimum, value * Double(lag) / cumulative)
            }
        }
        return (minimum <= 0.15 && level > -50, minimum, level)
    }
}

struct Figures {
    var frames = 0
    var voiced = 0
    var lost = 0
    var clear = 0
    var clearLost = 0
    var holes = 0
    var onlyLive = 0
    var onlyLiveClear = 0
    var agree = 0
    var errors: [Double] = []
    var clearErrors: [Double] = []
    var medianF0 = 0.0

    init() {}

    init(whole: [Double], live: [Double], clear clearFrames: [Bool]) {
        frames = whole.count
        for frame in whole.indices {
            let wholeVoiced = whole[frame] > 0
            let liveVoiced = live[frame] > 0
            agree += wholeVoiced == liveVoiced ? 1 : 0
            onlyLive += liveVoiced && !wholeVoiced ? 1 : 0
            onlyLiveClear += liveVoiced && !wholeVoiced && clearFrames[frame] ? 1 : 0
            guard wholeVoiced else { continue }
            voiced += 1
            if clearFrames[frame] { clear += 1 }
            if liveVoiced {
                let error = abs(live[frame] / whole[frame] - 1) * 100
                errors.append(error)
                if clearFrames[frame] { clearErrors.append(error) }
            } else {
                lost += 1
                if clearFrames[frame] { clearLost += 1 }
            }
        }
        // Holes: within each whole-file voiced run, the lost frames between the first and last that live voices.
        var frame = 0
        while frame < whole.count {
            guard whole[frame] > 0 else { frame += 1; continue }
            var end = frame
            while end < whole.count && whole[end] > 0 { end += 1 }
            let voicedLive = (frame..<end).filter { live[$0] > 0 }
            if let first = voicedLive.first, let last = voicedLive.last {
                holes += (first...last).filter { live[$0] <= 0 }.count
            }
            frame = end
        }
        let voicedF0 = whole.filter { $0 > 0 }.sorted()
        medianF0 = voicedF0.isEmpty ? 0 : voicedF0[voicedF0.count / 2]
    }

    mutating func pool(_ other: Figures) {
        frames += other.frames
        voiced += other.voiced
        lost += other.lost
        clear += other.clear
        clearLost += other.clearLost
        holes += other.holes
        onlyLive += other.onlyLive
        onlyLiveClear += other.onlyLiveClear
        agree += other.agree
        errors += other.errors
        clearErrors += other.clearErrors
    }

    static func percent(_ count: Int, of total: Int) -> Double { 100 * Double(count) / Double(max(total, 1)) }
    var lostShare: Double { Self.percent(lost, of: voiced) }
    var clearLostShare: Double { Self.percent(clearLost, of: clear) }
    var holeShare: Double { Self.percent(holes, of: voiced) }
    var onlyLiveShare: Double { Self.percent(onlyLive, of: frames) }
    var onlyLiveClearShare: Double { Self.percent(onlyLiveClear, of: frames) }
    var agreement: Double { Self.percent(agree, of: frames) }
    var p95Error: Double { percentile(errors, 95) }
    var p95ClearError: Double { percentile(clearErrors, 95) }

    func row(_ label: String) -> String {
        [label, String(format: "%.0f", medianF0), "\(frames)", "\(voiced)",
         String(format: "%.2f", lostShare), String(format: "%.2f (%d of %d)", clearLostShare, clearLost, clear),
         String(format: "%.2f", holeShare), String(format: "%.2f (%.2f)", onlyLiveShare, onlyLiveClearShare), String(format: "%.2f", agreement),
         String(format: "%.2f (%.2f)", p95Error, p95ClearError)].joined(separator: " | ")
    }
}

var rates = [8000, 16000, 44100, 48000]
var files: [String] = []
var dumped: String?
var lookAhead: Double?
var candidate = "live"
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--rates": rates = arguments.popFirst()!.split(separator: ",").map { Int($0)! }
    case "--dump": dumped = arguments.popFirst()!
    case "--look-ahead": lookAhead = Double(arguments.popFirst()!)!
    case "--candidate": candidate = arguments.popFirst()!
    default: files.append(argument)
    }
}
guard !files.isEmpty else {
    FileHandle.standardError.write(
        "usage: live-voicing [--rates R,...] [--look-ahead MS] [--candidate live|harvest|dio@8k] [--dump NAME@RATE] FILE...\n"
            .data(using: .utf8)!)
    exit(2)
}
guard ["live", "harvest", "dio@8k"].contains(candidate) else {
    FileHandle.standardError.write("live-voicing: --candidate \(candidate): expected live, harvest or dio@8k\n".data(using: .utf8)!)
    exit(2)
}

var options = AnalysisOptions()
var liveOptions = options
liveOptions.live = true
liveOptions.lookAhead = lookAhead
var harvestOptions = options
harvestOptions.f0Method = .harvest

/// The F0 measured in live mode's place at `rate`, with `frames` frames; `at8k` is whole-file DIO's of the
/// recording at 8 kHz, for `dio@8k`.
@MainActor func candidateF0(signal: [Double], rate: Int, frames: Int, at8k: [Double]?) throws -> [Double] {
    switch candidate {
    case "harvest":
        return try F0Contour(estimating: signal, sampleRate: rate, options: harvestOptions).f0
    case "dio@8k":
        let f0 = at8k ?? []
        return Array((f0 + [Double](repeating: 0, count: max(0, frames - f0.count))).prefix(frames))
    default:
        return try F0Contour(estimating: signal, sampleRate: rate, options: liveOptions).f0
    }
}
print("file@rate | median F0 Hz | frames | whole voiced | lost % | clear lost % | holes % | voiced only live % (clearly periodic) | V/UV agree % | p95 F0 err % (clearly periodic)")
print("---|---|---|---|---|---|---|---|---|---")
var pooled = Figures()
var lostByRecording: [(String, [Double])] = []
var failures: [String] = []
var stretchMisses: [String] = []
for file in files {
    let name = stem(file)
    var lostShares: [Double] = []
    let at8k = candidate == "dio@8k"
        ? try F0Contour(estimating: try read(file, rate: 8000), sampleRate: 8000, options: options).f0 : nil
    for rate in rates {
        let label = "\(name)@\(rate % 1000 == 0 ? "\(rate / 1000)" : String(format: "%.1f", Double(rate) / 1000))k"
        let signal = try read(file, rate: rate)
        let whole = try F0Contour(estimating: signal, sampleRate: rate, options: options).f0
        let live = try candidateF0(signal: signal, rate: rate, frames: whole.count, at8k: at8k)
        guard whole.count == live.count else { throw BenchError("\(label): \(whole.count) frames whole, \(live.count) live") }
        let frames = periodicity(signal, rate: rate, frames: whole.count, framePeriod: options.framePeriod)
        let figures = Figures(whole: whole, live: live, clear: frames.map(\.clear))
        print(figures.row(label))
        pooled.pool(figures)
        lostShares.append(figures.lostShare)
        if figures.clearLostShare > 1 { failures.append(String(format: "%@ clear lost %.2f %%", label, figures.clearLostShare)) }
        if figures.holeShare > 2 { failures.append(String(format: "%@ holes %.2f %%", label, figures.holeShare)) }
        if figures.lostShare > 4 { stretchMisses.append(String(format: "%@ lost %.2f %%", label, figures.lostShare)) }
        if dumped == label {
            for frame in whole.indices {
                let mark = (whole[frame] > 0) != (live[frame] > 0) ? (whole[frame] > 0 ? " LOST" : " EXTRA") : ""
                print(String(format: "  %5d %8.2f %8.2f %@ %.3f %6.1f%@", frame, whole[frame], live[frame],
                             frames[frame].clear ? "P" : ".", frames[frame].minimum, frames[frame].level, mark))
            }
        }
    }
    lostByRecording.append((name, lostShares))
}
print(pooled.row("pooled"))
print()
print("lost % by rate (" + rates.map(String.init).joined(separator: ", ") + " Hz) | spread, points")
for (name, shares) in lostByRecording {
    let spread = (shares.max() ?? 0) - (shares.min() ?? 0)
    print("\(name): " + shares.map { String(format: "%.2f", $0) }.joined(separator: " / ") + String(format: " | %.2f", spread))
    if spread > 2 { failures.append(String(format: "%@ lost-share spread %.2f points", name, spread)) }
}
if pooled.agreement < 97 { stretchMisses.append(String(format: "pooled agreement %.2f %%", pooled.agreement)) }
print()
print("bars (clear lost <= 1 %, holes <= 2 % per file; spread <= 2 points per recording): "
      + (failures.isEmpty ? "PASS" : "FAIL: " + failures.joined(separator: "; ")))
print("stretch (lost <= 4 % per file; agreement >= 97 % pooled): "
      + (stretchMisses.isEmpty ? "met" : "missed: " + stretchMisses.joined(separator: "; ")))
exit(failures.isEmpty ? 0 : 1)
