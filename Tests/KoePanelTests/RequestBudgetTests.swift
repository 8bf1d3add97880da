@testable import KoePanel
import Testing

/// The server's budget: connections at once, requests a second.
@Suite struct RequestBudgetTests {
    @Test func connectionsAreCounted() {
        let budget = RequestBudget()
        for _ in 0..<RequestBudget.connections { #expect(budget.openConnection()) }
        #expect(!budget.openConnection())
        budget.closeConnection()
        #expect(budget.openConnection())
    }

    @Test func requestsComeInABurstThenAtTheRate() {
        let budget = RequestBudget()
        let start = ContinuousClock.now
        var taken = 0
        while budget.takeRequest(at: start) { taken += 1 }
        #expect(taken == Int(RequestBudget.burst))
        #expect(!budget.takeRequest(at: start + .milliseconds(1)))
        #expect(budget.takeRequest(at: start + .milliseconds(10)), "two requests' worth refilled")
        var later = 0
        while budget.takeRequest(at: start + .seconds(1)) { later += 1 }
        #expect(abs(Double(later) - RequestBudget.perSecond) <= 2, "\(later) in the next second")
    }
}
