import Testing

/// `koe live`'s argument checks, which run before any device is opened (the sessions themselves run on a real
/// JACK server in Tests/Plugins/live_test.py).
@Suite struct LiveTests {
    let koe = CommandRunner()

    @Test func harvestNeedsLiveAnalysisTurnedOff() throws {
        let refused = try koe.run("live", "--f0-method", "harvest")
        #expect(refused.status == 2, "exit status \(refused.status)")
        #expect(refused.errorLines.count == 1, "stderr: \(refused.standardError)")
        #expect(refused.standardError.contains("--no-live"), "stderr: \(refused.standardError)")
        let listed = try koe.run("live", "--f0-method", "harvest", "--no-live", "--list-devices")
        #expect(listed.status == 0, "stderr: \(listed.standardError)")
    }
}
