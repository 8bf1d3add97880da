import Testing
@testable import KoePlot

@Suite struct TicksTests {
    @Test func linearTicksTakeRoundSteps() {
        #expect(Ticks.linear(0...3.43).map(\.label) == ["0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"])
        #expect(Ticks.linear(0...10).map(\.label) == (0...10).map(String.init))
        #expect(Ticks.linear(1.23...1.31).map(\.label) == ["1.23", "1.24", "1.25", "1.26", "1.27", "1.28", "1.29", "1.30", "1.31"])
        #expect(Ticks.linear(0...125).map(\.value) == [0, 20, 40, 60, 80, 100, 120])
        #expect(Ticks.linear(2...2).isEmpty)
    }

    @Test func logarithmicTicksLabelOneTwoAndFive() {
        let (major, minor) = Ticks.logarithmic(50...10_000)
        #expect(major.map(\.label) == ["50", "100", "200", "500", "1k", "2k", "5k", "10k"])
        #expect(minor.prefix(5) == [60, 70, 80, 90, 300])
        #expect(minor.count == 4 + 6 + 6, "none in the decade above 10k")
        #expect(Ticks.frequencyLabel(2500) == "2.5k")
    }
}
