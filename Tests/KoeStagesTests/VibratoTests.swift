import Foundation
import Testing
@testable import KoeStages

@Suite struct VibratoTests {
    @Test func factorSwingsByTheDepthAtTheRate() {
        let vibrato = Vibrato.Options(rate: 5, depth: 50)
        #expect(vibrato.factor(atOutputTime: 0) == 1)
        #expect(abs(vibrato.factor(atOutputTime: 0.05) - exp2(50.0 / 1200)) < 1e-12, "a quarter period: the peak")
        #expect(abs(vibrato.factor(atOutputTime: 0.15) - exp2(-50.0 / 1200)) < 1e-12, "three quarters: the trough")
        #expect(abs(vibrato.factor(atOutputTime: 0.2) - 1) < 1e-12, "a whole period")
    }

    @Test func optionsOutOfRangeAreNamed() {
        #expect(Vibrato.Options().problem == nil)
        #expect(Vibrato.Options(rate: -1).problem?.contains("rate") == true)
        #expect(Vibrato.Options(rate: 0).problem == nil, "rate 0 is no vibrato, as the plugins' port has it")
        #expect(Vibrato.Options(rate: 0).factor(atOutputTime: 0.123) == 1)
        #expect(Vibrato.Options(rate: .infinity).problem?.contains("rate") == true)
        #expect(Vibrato.Options(depth: -3).problem?.contains("depth") == true)
    }
}
