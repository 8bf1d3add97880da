import Foundation
@testable import KoeDSP
@testable import KoeWorld
import Testing

@Suite struct StreamingSynthesizerTests {
    /// A reproducible uniform source (64-bit LCG, top 53 bits).
    private struct Uniform {
        var state: UInt64

        mutating func next(in range: ClosedRange<Double> = 0...1) -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Double(state >> 11) / Double(1 << 53)
            return range.lowerBound + unit * (range.upperBound - range.lowerBound)
        }
    }

    private struct Parameters {
        var f0: [Double]
        var spectrogram: Matrix
        var aperiodicity: Matrix
    }

    /// Voiced and unvoiced runs with a wandering F0, a few F0 values below what WORLD renders,
    /// a random envelope and aperiodicity with some values outside [0, 1].
    private func randomParameters(frames: Int, fftSize: Int, seed: UInt64, f0Range: ClosedRange<Double> = 80...400)
        throws -> Parameters
    {
        var uniform = Uniform(state: seed)
        let bins = fftSize / 2 + 1
        var parameters = Parameters(
            f0: [Double](repeating: 0, count: frames),
            spectrogram: try Matrix(rows: frames, columns: bins),
            aperiodicity: try Matrix(rows: frames, columns: bins))
        var voiced = uniform.next() < 0.5
        var f0 = uniform.next(in: f0Range)
        for frame in 0..<frames {
            if uniform.next() < 0.1 { voiced.toggle() }
            f0 = min(f0Range.upperBound, max(f0Range.lowerBound, f0 * uniform.next(in: 0.95...1.05)))
            parameters.f0[frame] = voiced ? f0 : 0
            if uniform.next() < 0.03 { parameters.f0[frame] = uniform.next(in: 1...20) }
            for bin in 0..<bins {
                parameters.spectrogram[frame, bin] = exp(uniform.next(in: -14...(-6)))
                parameters.aperiodicity[frame, bin] = uniform.next(in: -0.05...1.05)
            }
        }
        return parameters
    }

    private func offline(_ parameters: Parameters, sampleRate: Int, framePeriod: Double) throws -> [Double] {
        try Synthesis(sampleRate: sampleRate, framePeriod: framePeriod).synthesize(
            f0: parameters.f0, spectrogram: parameters.spectrogram, aperiodicity: parameters.aperiodicity)
    }

    /// Feeds the frames in groups of the given sizes (cycled), draining after each group, then finishes.
    /// Records, after every drain, how many samples the frames so far span but are not drained yet.
    private func streamed(
        _ parameters: Parameters, sampleRate: Int, framePeriod: Double, fftSize: Int, groups: [Int],
        isCausal: Bool = false, heldBack: ((Int, Int) -> Void)? = nil
    ) throws -> [Double] {
        let synthesizer = try StreamingSynthesizer(
            sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize, isCausal: isCausal)
        var output: [Double] = []
        var frame = 0
        var group = 0
        while frame < parameters.f0.count {
            let end = min(parameters.f0.count, frame + groups[group % groups.count])
            for row in frame..<end {
                append(row, of: parameters, to: synthesizer)
            }
            frame = end
            group += 1
            let drained = synthesizer.drain(into: &output)
            #expect(drained >= 0)
            let spanned = Synthesis.outputLength(frameCount: frame, sampleRate: sampleRate, framePeriod: framePeriod)
            heldBack?(spanned - output.count, synthesizer.latency)
        }
        let before = output.count
        #expect(synthesizer.finish(into: &output) == output.count - before)
        return output
    }

    private func append(_ row: Int, of parameters: Parameters, to synthesizer: StreamingSynthesizer) {
        parameters.spectrogram.withRow(row) { spectrum in
            parameters.aperiodicity.withRow(row) { aperiodicity in
                synthesizer.push(f0: parameters.f0[row], spectrum: spectrum, aperiodicity: aperiodicity)
            }
        }
    }

    @Test(arguments: [16000, 48000], [1.0, 5.0, 7.3])
    func anyGroupingOfFramesGivesTheWholeSignalSamples(sampleRate: Int, framePeriod: Double) throws {
        let fftSize = sampleRate == 16000 ? 1024 : 2048
        let frames = Int(150 / framePeriod)
        let seed = UInt64(sampleRate) + UInt64(framePeriod * 10)
        let parameters = try randomParameters(frames: frames, fftSize: fftSize, seed: seed)
        let whole = try offline(parameters, sampleRate: sampleRate, framePeriod: framePeriod)
        let length = Synthesis.outputLength(frameCount: frames, sampleRate: sampleRate, framePeriod: framePeriod)
        #expect(whole.count == length)
        #expect(whole.contains { $0 != 0 })

        for groups in [[1], [7], [100], [frames], [3, 1, 11, 2]] {
            let output = try streamed(
                parameters, sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize, groups: groups)
            #expect(output == whole, "groups of \(groups)")
        }
    }

    /// A causal synthesizer holds back one frame and two samples of rounding, and needs them.
    @Test(arguments: [(8000, 1.0, 256), (16000, 5.0, 1024), (48000, 7.3, 2048)], [false, true])
    func heldBackSamplesStayWithinTheLatency(format: (Int, Double, Int), isCausal: Bool) throws {
        let (sampleRate, framePeriod, fftSize) = format
        // F0 from just above the rendered floor, where pulses are furthest apart.
        let lowest = Double(sampleRate / fftSize) + 1
        let parameters = try randomParameters(
            frames: Int(200 / framePeriod), fftSize: fftSize, seed: 3, f0Range: lowest...(4 * lowest))
        var largest = 0
        var bound = 0
        _ = try streamed(
            parameters, sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize, groups: [1], isCausal: isCausal
        ) {
            largest = max(largest, $0)
            bound = $1
        }
        #expect(largest > 0)
        #expect(largest <= bound)
        if isCausal {
            let frame = Int((framePeriod * Double(sampleRate) / 1000).rounded(.up))
            #expect(bound == frame + 2)
            #expect(largest >= frame - 1)
        }
    }

    @Test(arguments: [(16000, 5.0, 1024), (48000, 7.3, 2048)])
    func causalSynthesisIsTheSameForAnyGrouping(sampleRate: Int, framePeriod: Double, fftSize: Int) throws {
        let frames = Int(150 / framePeriod)
        let parameters = try randomParameters(frames: frames, fftSize: fftSize, seed: 11)
        let whole = try streamed(
            parameters, sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize, groups: [frames], isCausal: true)
        #expect(whole.count == Synthesis.outputLength(frameCount: frames, sampleRate: sampleRate, framePeriod: framePeriod))
        #expect(whole.allSatisfy { $0.isFinite })
        for groups in [[1], [7], [3, 1, 11, 2]] {
            let output = try streamed(
                parameters, sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize, groups: groups, isCausal: true)
            #expect(output == whole, "groups of \(groups)")
        }
    }

    /// A gliding voice: the causal waveform differs from WORLD's only in the DC correction's place and in noise
    /// that lasts a period rather than until the next pulse. Without noise the two are nearly the same signal;
    /// with it, as loud.
    @Test(arguments: [false, true])
    func causalSynthesisSoundsLikeWorlds(withNoise: Bool) throws {
        let (sampleRate, framePeriod, fftSize, frames) = (16000, 5.0, 1024, 200)
        let bins = fftSize / 2 + 1
        var parameters = Parameters(
            f0: (0..<frames).map { 120 + 30 * sin(Double($0) / 20) },
            spectrogram: try Matrix(rows: frames, columns: bins), aperiodicity: try Matrix(rows: frames, columns: bins))
        for frame in 0..<frames {
            for bin in 0..<bins {
                let hertz = Double(bin) * Double(sampleRate) / Double(fftSize)
                parameters.spectrogram[frame, bin] = 1e-6 * exp(-hertz / 1500) * (1 + 0.8 * cos(hertz / 300))
                parameters.aperiodicity[frame, bin] = withNoise ? min(0.9, hertz / 4000) : 0
            }
        }
        let world = try offline(parameters, sampleRate: sampleRate, framePeriod: framePeriod)
        let causal = try streamed(
            parameters, sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize, groups: [1], isCausal: true)
        #expect(causal.count == world.count)
        let middle = fftSize..<(world.count - fftSize)
        let cross = middle.reduce(0.0) { $0 + world[$1] * causal[$1] }
        let worldPower = middle.reduce(0.0) { $0 + world[$1] * world[$1] }
        let causalPower = middle.reduce(0.0) { $0 + causal[$1] * causal[$1] }
        let correlation = cross / (worldPower * causalPower).squareRoot()
        #expect(correlation > (withNoise ? 0.5 : 0.99), "correlation \(correlation)")
        #expect(abs(10 * log10(causalPower / worldPower)) < 0.5, "power ratio \(causalPower / worldPower)")
    }

    @Test func storageStaysBoundedOverALongStream() throws {
        let sampleRate = 8000
        let fftSize = 32
        let synthesizer = StreamingSynthesizer(unchecked: sampleRate, framePeriod: 1, fftSize: fftSize)
        let parameters = try randomParameters(frames: 500, fftSize: fftSize, seed: 9, f0Range: 260...1000)
        var output: [Double] = []
        var drained = 0
        var early = synthesizer.storage
        for frame in 0..<20_000 {
            append(frame % 500, of: parameters, to: synthesizer)
            drained += synthesizer.drain(into: &output)
            output.removeAll(keepingCapacity: true)
            if frame == 999 { early = synthesizer.storage }
        }
        #expect(synthesizer.storage == early)
        #expect(synthesizer.storage.frames <= 8)
        #expect(synthesizer.storage.samples <= 2 * fftSize)
        drained += synthesizer.finish(into: &output)
        #expect(drained == Synthesis.outputLength(frameCount: 20_000, sampleRate: sampleRate, framePeriod: 1))
    }

    @Test func noFramesGiveNoSamples() throws {
        let synthesizer = try StreamingSynthesizer(sampleRate: 16000, framePeriod: 5, fftSize: 1024)
        var output: [Double] = []
        #expect(synthesizer.drain(into: &output) == 0)
        #expect(synthesizer.finish(into: &output) == 0)
        #expect(output.isEmpty)
    }

    @Test(arguments: [
        (16000, 5.0, 1024, 150.0), (8000, 2.5, 256, 0.0), (48000, 1.0, 2048, 300.0), (8000, 0.1, 256, 200.0),
    ])
    func aSingleFrameIsHeldUntilFinishAndMatchesTheOfflineSamples(
        sampleRate: Int, framePeriod: Double, fftSize: Int, f0: Double
    ) throws {
        var parameters = try randomParameters(frames: 1, fftSize: fftSize, seed: 5)
        parameters.f0[0] = f0
        let synthesizer = try StreamingSynthesizer(sampleRate: sampleRate, framePeriod: framePeriod, fftSize: fftSize)
        var output: [Double] = []
        append(0, of: parameters, to: synthesizer)
        #expect(synthesizer.drain(into: &output) == 0)
        _ = synthesizer.finish(into: &output)
        #expect(try output == offline(parameters, sampleRate: sampleRate, framePeriod: framePeriod))
        #expect(output.count == Synthesis.outputLength(frameCount: 1, sampleRate: sampleRate, framePeriod: framePeriod))
    }

    @Test func finishingTwiceAddsNothing() throws {
        let parameters = try randomParameters(frames: 20, fftSize: 256, seed: 2)
        let synthesizer = try StreamingSynthesizer(sampleRate: 8000, framePeriod: 5, fftSize: 256)
        var output: [Double] = []
        for row in 0..<20 { append(row, of: parameters, to: synthesizer) }
        #expect(synthesizer.finish(into: &output) == 800)
        #expect(synthesizer.finish(into: &output) == 0)
        #expect(synthesizer.drain(into: &output) == 0)
        #expect(output.count == 800)
    }

    /// A long frame period lets F0 near the rendered floor, half-voiced at a voicing edge, space pulses
    /// further apart than the FFT size; their noise is longer than the transform and must not overrun it.
    @Test func pulsesFurtherApartThanTheFFTSizeRenderFinite() throws {
        let sampleRate = 16000
        let fftSize = 1024
        var parameters = try randomParameters(frames: 12, fftSize: fftSize, seed: 4)
        parameters.f0 = [0, 0, 17, 17, 17, 17, 0, 0, 17, 17, 0, 0]
        let whole = try offline(parameters, sampleRate: sampleRate, framePeriod: 100)
        #expect(whole.count == 19_200)
        #expect(whole.allSatisfy { $0.isFinite })
        let output = try streamed(parameters, sampleRate: sampleRate, framePeriod: 100, fftSize: fftSize, groups: [1])
        #expect(output == whole)
    }
}

@Suite struct PhaseWrapTests {
    @Test func wrapsExactlyAsFmod() {
        var randn = Randn()
        let turn = 2.0 * Double.pi
        var values: [Double] = [0, 1e-300, turn.nextDown, turn, turn.nextUp, 3 * turn, 1e6 * turn, 4.2e8, -1, -7 * turn]
        for _ in 0..<20_000 {
            values.append(abs(randn.next()) * 1e5)
        }
        for scale in [1.0, 2, 3, 1_000_003] {
            values.append(turn * scale)
            values.append((turn * scale).nextDown)
            values.append((turn * scale).nextUp)
        }
        for x in values {
            #expect(PhaseWrap.remainder(x) == x.truncatingRemainder(dividingBy: turn), "\(x)")
        }
    }
}
