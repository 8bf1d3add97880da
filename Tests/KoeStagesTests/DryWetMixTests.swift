import KoeStages
import Testing

@Suite struct DryWetMixTests {
    /// Runs `wet` through a mix fed `dry`, in blocks of `block`, changing to `change` before block `changeBlock`.
    private func mixed(
        dry: [Double], wet: [Double], startWet: Bool, change: Bool? = nil, changeBlock: Int = 0, block: Int = 7,
        glide: Int = 10
    ) throws -> [Double] {
        let mix = DryWetMix(wet: startWet, glideSamples: glide)
        var output: [Double] = []
        for (number, start) in stride(from: 0, to: dry.count, by: block).enumerated() {
            if let change, number == changeBlock { mix.set(wet: change) }
            let end = min(start + block, dry.count)
            dry[start..<end].withUnsafeBufferPointer { mix.feedDry($0) }
            output += try mix.process(Array(wet[start..<end]))
        }
        return output
    }

    private let dry = (0..<100).map { Double($0) }
    private let wet = (0..<100).map { -Double($0) - 0.5 }

    @Test func fullyWetOrDryIsExactlyOneOfThem() throws {
        #expect(try mixed(dry: dry, wet: wet, startWet: true) == wet)
        #expect(try mixed(dry: dry, wet: wet, startWet: false) == dry)
    }

    @Test func aChangeCrossfadesFromTheSampleOfTheNextInputOn() throws {
        let output = try mixed(dry: dry, wet: wet, startWet: false, change: true, changeBlock: 3, block: 7, glide: 10)
        #expect(Array(output[..<21]) == Array(dry[..<21]))
        #expect(Array(output[31...]) == Array(wet[31...]))
        let shares = (21..<31).map { (output[$0] - dry[$0]) / (wet[$0] - dry[$0]) }
        #expect(zip(shares, shares.dropFirst()).allSatisfy { $0 < $1 }, "the wet share rises sample by sample")
        #expect(abs(shares[0] - 0.1) < 1e-12 && abs(shares[9] - 1) < 1e-12)
    }

    @Test func andBackToDry() throws {
        let mix = DryWetMix(wet: true, glideSamples: 4)
        dry[..<10].withUnsafeBufferPointer { mix.feedDry($0) }
        mix.set(wet: false)
        dry[10...].withUnsafeBufferPointer { mix.feedDry($0) }
        let output = try mix.process(Array(wet[..<10])) + mix.process(Array(wet[10...]))
        #expect(Array(output[..<10]) == Array(wet[..<10]))
        #expect(Array(output[14...]) == Array(dry[14...]))
    }
}
