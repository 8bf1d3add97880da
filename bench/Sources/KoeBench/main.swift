// Times each WORLD stage of KoeWorld once, in process, on a raw float64 signal written by numpy.
// Usage: koe-bench SIGNAL.f64 SAMPLE_RATE [THREADS]   → one JSON object on stdout: wall-clock seconds per
// stage ("stages") and the process's CPU seconds per stage ("cpu"). THREADS (default 1) is how many threads
// CheapTrick and D4C share their frames among; every other stage runs on one.
// Reading the file and building the stage values is setup and is not timed.

import Foundation
import KoeWorld

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

func readSignal(path: String) throws -> [Double] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw BenchError(description: "cannot read \(path)")
    }
    guard data.count % MemoryLayout<Double>.size == 0 else {
        throw BenchError(description: "\(path) is not a whole number of float64 samples")
    }
    return data.withUnsafeBytes { bytes in
        bytes.bindMemory(to: Double.self).map { Double(bitPattern: $0.bitPattern.littleEndian) }
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// CPU seconds this process has used so far, all threads together.
func processorSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

struct Timing {
    let stage: String
    let wall: Double
    let cpu: Double
}

/// Runs `body`, records its wall-clock and CPU time under `name`, and returns its result.
func timed<Result>(_ name: String, into timings: inout [Timing], _ body: () throws -> Result) rethrows -> Result {
    let clock = ContinuousClock()
    let start = clock.now
    let startCPU = processorSeconds()
    let result = try body()
    timings.append(Timing(stage: name, wall: seconds(start.duration(to: clock.now)), cpu: processorSeconds() - startCPU))
    return result
}

func main() throws {
    let arguments = CommandLine.arguments
    guard (3...4).contains(arguments.count), let sampleRate = Int(arguments[2]),
          let threads = arguments.count == 4 ? Int(arguments[3]) : 1, threads > 0 else {
        throw BenchError(description: "usage: koe-bench SIGNAL.f64 SAMPLE_RATE [THREADS]")
    }
    let signal = try readSignal(path: arguments[1])
    try SignalRequirements.validate(signal, sampleRate: sampleRate, f0Floor: Dio.Options().f0Floor)

    let dio = try Dio(sampleRate: sampleRate)
    let stoneMask = try StoneMask(sampleRate: sampleRate)
    let harvest = try Harvest(sampleRate: sampleRate)
    let cheapTrick = try CheapTrick(sampleRate: sampleRate)
    let d4c = try D4C(sampleRate: sampleRate, fftSize: cheapTrick.fftSize)
    let synthesis = try Synthesis(sampleRate: sampleRate, framePeriod: Dio.Options().framePeriod)

    var timings: [Timing] = []
    let dioContour = try timed("dio", into: &timings) { try dio.estimate(signal) }
    let refined = try timed("stonemask", into: &timings) { try stoneMask.refine(signal, contour: dioContour) }
    let contour = try timed("harvest", into: &timings) { try harvest.estimate(signal) }
    let spectrogram = try timed("cheaptrick", into: &timings) { try cheapTrick.estimate(signal, contour: contour, threads: threads) }
    let aperiodicity = try timed("d4c", into: &timings) { try d4c.estimate(signal, contour: contour, threads: threads) }
    let output = try timed("synthesis", into: &timings) {
        try synthesis.synthesize(f0: contour.f0, spectrogram: spectrogram, aperiodicity: aperiodicity)
    }

    // Reported so the results are used, and so a broken stage shows up as an odd count.
    let voiced = contour.f0.filter { $0 > 0 }.count
    let stages = timings.map { "\"\($0.stage)\": \($0.wall)" }.joined(separator: ", ")
    let cpu = timings.map { "\"\($0.stage)\": \($0.cpu)" }.joined(separator: ", ")
    print("""
        {"sample_rate": \(sampleRate), "samples": \(signal.count), "frames": \(contour.frameCount), \
        "voiced_frames": \(voiced), "dio_voiced_frames": \(refined.f0.filter { $0 > 0 }.count), \
        "output_samples": \(output.count), "threads": \(threads), "stages": {\(stages)}, "cpu": {\(cpu)}}
        """)
}

do {
    try main()
} catch {
    FileHandle.standardError.write(Data("koe-bench: \(error)\n".utf8))
    exit(1)
}
