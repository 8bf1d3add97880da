import Foundation
import KoeStages
import TestSupport
import Testing

/// sox from PATH, run on headerless little-endian float64 files so no audio I/O code stands between the two.
enum Sox {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let executable: URL? = ProcessInfo.processInfo.environment["PATH"]?
        .split(separator: ":")
        .map { URL(fileURLWithPath: String($0)).appendingPathComponent("sox") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    static var isInstalled: Bool { executable != nil }

    /// `signal` through sox's effect chain `effects` (no dither: the output is float64).
    static func apply(_ effects: [String], to signal: [Double], sampleRate: Int) throws -> [Double] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("koe-sox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.f64")
        let output = directory.appendingPathComponent("out.f64")
        try Data(signal.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian, Array.init) }).write(to: input)

        let process = Process()
        process.executableURL = executable
        let raw = ["-t", "f64", "-L", "-c", "1"]
        process.arguments = ["-D", "-V1"] + raw + ["-r", "\(sampleRate)", input.path] + raw + [output.path] + effects
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure(description: "sox \(effects): \(message)") }

        let bytes = [UInt8](try Data(contentsOf: output))
        return stride(from: 0, to: bytes.count - 7, by: 8).map { offset in
            let bits = bytes[offset..<offset + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return Double(bitPattern: bits)
        }
    }

    /// White noise plus an exponential chirp from 20 Hz to 0.45 × the rate, half a second, peak below 0.2.
    static func testSignal(sampleRate: Int) -> [Double] {
        let count = sampleRate / 2
        let rate = Double(sampleRate)
        let duration = Double(count) / rate
        let (start, end) = (20.0, 0.45 * rate)
        let growth = log(end / start)
        let noise = Signals.whiteNoise(count: count, amplitude: 0.1, seed: 7)
        return (0..<count).map { index in
            let time = Double(index) / rate
            let phase = 2 * Double.pi * start * duration / growth * (exp(growth * time / duration) - 1)
            return noise[index] + 0.1 * sin(phase)
        }
    }

    /// Signal-to-noise ratio of `candidate` against `reference`, in dB.
    static func snr(_ candidate: [Double], reference: [Double]) -> Double {
        let signal = reference.reduce(0) { $0 + $1 * $1 }
        let noise = zip(reference, candidate).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }
        return 10 * log10(signal / noise)
    }
}

/// One row of the map from koe's EQ options to the sox effects that must give the same output.
struct SoxEquivalent: Sendable, CustomTestStringConvertible {
    let eq: [String]
    let geq: String?
    let sox: [String]

    init(eq: [String] = [], geq: String? = nil, sox: String) {
        self.eq = eq
        self.geq = geq
        self.sox = sox.split(separator: " ").map(String.init)
    }

    var testDescription: String { (eq + (geq.map { ["geq \($0)"] } ?? [])).joined(separator: " ") }

    func bands() throws -> [EqualizerBand] {
        let parametric = try eq.map { try EqualizerBand(parsing: $0) }
        return try parametric + (geq.map { try GraphicEqualizer(parsing: $0).bands } ?? [])
    }
}

private let graphicGains = "3,-2,4,0,-6,2,5,-3,0,0"

/// sox's equalizer at the graphic EQ's frequencies and Q, the bands at 0 dB left out.
private let graphicInSox = zip(GraphicEqualizer.frequencies, graphicGains.split(separator: ","))
    .filter { $0.1 != "0" }
    .map { "equalizer \($0.0) \(GraphicEqualizer.q)q \($0.1)" }
    .joined(separator: " ")

private let soxEquivalents: [SoxEquivalent] = [
    SoxEquivalent(eq: ["peak:1000:6:1.4"], sox: "equalizer 1000 1.4q 6"),
    SoxEquivalent(eq: ["peak:3000:-9"], sox: "equalizer 3000 1q -9"),
    SoxEquivalent(eq: ["lowshelf:100:6"], sox: "bass 6 100"),
    SoxEquivalent(eq: ["lowshelf:300:-6:0.8"], sox: "bass -6 300 0.8q"),
    SoxEquivalent(eq: ["highshelf:3000:4"], sox: "treble 4 3000"),
    SoxEquivalent(eq: ["highshelf:5k:-8:1"], sox: "treble -8 5000 1q"),
    SoxEquivalent(eq: ["lowpass:4000"], sox: "lowpass 4000"),
    SoxEquivalent(eq: ["lowpass:2000:0:2"], sox: "lowpass 2000 2q"),
    SoxEquivalent(eq: ["highpass:200"], sox: "highpass 200"),
    SoxEquivalent(eq: ["highpass:500:0:0.5"], sox: "highpass 500 0.5q"),
    SoxEquivalent(
        eq: ["highpass:80", "peak:1000:6", "highshelf:5000:-3"],
        sox: "highpass 80 equalizer 1000 1q 6 treble -3 5000"),
    SoxEquivalent(geq: graphicGains, sox: graphicInSox),
]

@Suite struct EqualizerTests {
    @Test(.enabled(if: Sox.isInstalled, "sox is not installed"), arguments: soxEquivalents, [16000, 48000])
    func matchesSox(_ equivalent: SoxEquivalent, sampleRate: Int) throws {
        let signal = Sox.testSignal(sampleRate: sampleRate)
        let equalizer = try #require(try Equalizer.make(bands: equivalent.bands(), sampleRate: sampleRate))
        let ours = try equalizer.process(signal)
        let theirs = try Sox.apply(equivalent.sox, to: signal, sampleRate: sampleRate)
        let snr = Sox.snr(ours, reference: theirs)
        let figure = String(format: "%.1f", snr)
        print("EQ \(equivalent.testDescription) at \(sampleRate) Hz vs sox \(equivalent.sox.joined(separator: " ")): SNR \(figure) dB")
        #expect(theirs.count == signal.count)
        #expect(ours.count == signal.count)
        #expect(snr >= 60)
        #expect(Sox.snr(signal, reference: theirs) < 20, "the effect must change the signal for the match to mean something")
    }

    @Test(arguments: [1, 17, 4096])
    func chunkedEqualsWhole(chunkSize: Int) throws {
        let bands = try ["highpass:80", "peak:1000:6:1.4", "lowshelf:150:-4", "highshelf:6k:3", "lowpass:15000"]
            .map { try EqualizerBand(parsing: $0) }
        let signal = Sox.testSignal(sampleRate: 48000)
        let whole = try #require(try Equalizer.make(bands: bands, sampleRate: 48000)).process(signal)
        let streamed = try #require(try Equalizer.make(bands: bands, sampleRate: 48000))
        var output: [Double] = []
        for start in stride(from: 0, to: signal.count, by: chunkSize) {
            output += try streamed.process(Array(signal[start..<min(start + chunkSize, signal.count)]))
        }
        output += try streamed.finish()
        #expect(output == whole)
        #expect(streamed.latency == 0 && streamed.lengthRatio == 1)
    }

    @Test func parsesBands() throws {
        #expect(try EqualizerBand(parsing: "peak:1000:6:1.4") == EqualizerBand(kind: .peak, frequency: 1000, gainDB: 6, q: 1.4))
        #expect(try EqualizerBand(parsing: "HighShelf:8k:-3") == EqualizerBand(kind: .highshelf, frequency: 8000, gainDB: -3))
        #expect(try EqualizerBand(parsing: "lowpass:2500.5") == EqualizerBand(kind: .lowpass, frequency: 2500.5))
        for spec in ["peak:1000:6:1.4", "lowshelf:120:4", "highpass:80", "lowpass:2000:0:2", "peak:31.25:-1.5"] {
            #expect(try EqualizerBand(parsing: spec).description == spec)
        }
    }

    /// Spaces and tabs around a band or a graphic gain are ignored, Unicode's spaces too; a newline is not a space.
    @Test func trimsSpacesButNotNewlines() throws {
        #expect(try EqualizerBand(parsing: " \tpeak:1000:6\u{00A0}") == EqualizerBand(kind: .peak, frequency: 1000, gainDB: 6))
        #expect(try GraphicEqualizer(parsing: " 1,\t-2 ,0,0,0,0,0,0,0,0").gains.prefix(2) == [1, -2])
        #expect(throws: KoeError.self) { try EqualizerBand(parsing: "peak:1000:6\n") }
        #expect(throws: KoeError.self) { try GraphicEqualizer(parsing: "1\n,0,0,0,0,0,0,0,0,0") }
    }

    @Test(arguments: [
        ("", "malformed"), ("peak", "malformed"), ("peak:1000:6:1:2", "malformed"), ("peak::6", "malformed"),
        ("notch:1000:6", "unknown EQ type 'notch'"), ("peak:abc:6", "frequency 'abc' is not a number"),
        ("peak:1000:loud", "gain 'loud' is not a number"), ("peak:1000:6:wide", "Q 'wide' is not a number"),
        ("peak:nan:6", "frequency 'nan' is not a number"), ("peak:0:6", "frequency must be greater than 0"),
        ("peak:-100:6", "frequency must be greater than 0"), ("peak:1000:6:0", "Q must be greater than 0"),
        ("lowshelf:100:6:-1", "Q must be greater than 0"), ("lowpass:1000:6", "lowpass takes no gain"),
    ])
    func rejectsMalformedBands(spec: String, problem: String) {
        do {
            _ = try EqualizerBand(parsing: spec)
            Issue.record("'\(spec)' was accepted")
        } catch {
            #expect(error.description.contains(problem), "\(error)")
            #expect(error.description.contains("'\(spec)'"), "\(error)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func rejectsGraphicGainLists() {
        #expect(throws: KoeError.self) { try GraphicEqualizer(parsing: "1,2,3") }
        #expect(throws: KoeError.self) { try GraphicEqualizer(parsing: "0,0,0,0,0,0,0,0,0,x") }
        #expect(throws: KoeError.self) { try GraphicEqualizer(parsing: "0,0,0,0,0,0,0,0,0,0,0") }
    }

    @Test(arguments: ["peak:8000:6", "lowpass:8k", "highshelf:9000:-3", "peak:8000:0"])
    func rejectsBandsAtOrAboveNyquist(spec: String) throws {
        let band = try EqualizerBand(parsing: spec)
        do {
            _ = try Equalizer.make(bands: [band], sampleRate: 16000)
            Issue.record("'\(spec)' was accepted at 16 kHz")
        } catch {
            #expect(error.description.contains("'\(band)'") && error.description.contains("Nyquist"), "\(error)")
        }
        #expect(try Equalizer.make(bands: [EqualizerBand(parsing: "lowpass:7999")], sampleRate: 16000) != nil)
    }

    @Test func graphicBandAboveNyquistIsRefusedUnlessFlat() throws {
        let loudTop = try GraphicEqualizer(parsing: "0,0,0,0,0,0,0,0,0,3")
        do {
            _ = try Equalizer.make(bands: loudTop.bands, sampleRate: 32000)
            Issue.record("a 3 dB graphic band at 16 kHz was accepted at 32 kHz")
        } catch {
            // Named as the user gave it, not as a band spec they never wrote.
            #expect(error.description.hasPrefix("graphic EQ band 10 (16000 Hz, 3 dB)"), "\(error)")
        }
        let flatTop = try GraphicEqualizer(parsing: "0,0,0,0,0,3,0,0,0,0")
        #expect(try Equalizer.make(bands: flatTop.bands, sampleRate: 16000)?.bands.count == 1)
    }

    @Test func flatBandsMakeNoStage() throws {
        let flat = try ["peak:1000:0", "lowshelf:100:0:0.7", "highshelf:5000"].map { try EqualizerBand(parsing: $0) }
        #expect(try Equalizer.make(bands: flat, sampleRate: 48000) == nil)
        #expect(try Equalizer.make(bands: [], sampleRate: 48000) == nil)
        let flatGraphic = try GraphicEqualizer(gains: Array(repeating: 0, count: 10))
        #expect(try Equalizer.make(bands: flatGraphic.bands, sampleRate: 48000) == nil)
        let mixed = try Equalizer.make(bands: flat + [EqualizerBand(parsing: "highpass:80")], sampleRate: 48000)
        #expect(mixed?.bands.map(\.description) == ["highpass:80"])
    }

    @Test func graphicBandsAreOctavesThatCrossAtHalfGain() throws {
        #expect(GraphicEqualizer.frequencies.first == 31.25 && GraphicEqualizer.frequencies.last == 16000)
        let bands = try GraphicEqualizer(parsing: "0,0,0,0,0,6,0,0,0,0").bands
        #expect(bands.map(\.description) == ["peak:1000:6:\(GraphicEqualizer.q)"])
        let level = { (frequency: Double) throws -> Double in
            let equalizer = try #require(try Equalizer.make(bands: bands, sampleRate: 48000))
            let tone = (0..<48000).map { sin(2 * Double.pi * frequency * Double($0) / 48000) }
            let settled = try equalizer.process(tone)[24000...]
            return 10 * log10(2 * settled.map { $0 * $0 }.reduce(0, +) / Double(settled.count))
        }
        #expect(abs(try level(1000) - 6) < 0.01)
        #expect(abs(try level(1000 * 2.0.squareRoot()) - 3) < 0.1)
        #expect(abs(try level(1000 / 2.0.squareRoot()) - 3) < 0.1)
    }

    /// A design taken between two blocks (koe live's audio thread) glides as `set(bands:)` does, sample for sample,
    /// and hands back the bands it replaced, to be freed where the design was made.
    @Test func takingADesignGlidesAsSettingTheBands() throws {
        let input = Signals.whiteNoise(count: 4800)
        let before = [try EqualizerBand(parsing: "peak:1000:6")]
        let after = try ["lowshelf:200:-4", "highpass:80", "peak:3000:3:2"].map { try EqualizerBand(parsing: $0) }
        func run(taking: Bool) throws -> (output: [Double], replaced: [EqualizerBand]) {
            let equalizer = try Equalizer(bands: before, sampleRate: 16000, glideSamples: 480)
            equalizer.reserveRealTimeBands()
            var output = input
            var replaced: [EqualizerBand] = []
            output.withUnsafeMutableBufferPointer { equalizer.apply(UnsafeMutableBufferPointer(rebasing: $0[..<1000])) }
            if taking {
                var design = try Equalizer.Design(bands: after, sampleRate: 16000)
                equalizer.take(&design, gliding: true)
                replaced = design.bands
            } else {
                try equalizer.set(bands: after)
            }
            output.withUnsafeMutableBufferPointer { equalizer.apply(UnsafeMutableBufferPointer(rebasing: $0[1000...])) }
            #expect(equalizer.bands == after)
            return (output, replaced)
        }
        let taken = try run(taking: true), set = try run(taking: false)
        #expect(taken.output == set.output, "largest difference \(largestDifference(taken.output, set.output))")
        #expect(taken.replaced == before)
        let many = (1...(Equalizer.realTimeBands + 1)).map { EqualizerBand(kind: .peak, frequency: Double(100 * $0), gainDB: 1) }
        #expect(throws: KoeError.self) { _ = try Equalizer.Design(bands: many, sampleRate: 16000) }
    }
}
