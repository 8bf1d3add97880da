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

    /// Every voice option convert has reaches koe live too: the F0 edits parse and are checked before a device
    /// is opened; an F0 file, made for one whole input, is a usage error.
    @Test func takesTheF0EditsButNotAnF0File() throws {
        let listed = try koe.run(
            "live", "--snap", "C:major", "--snap-strength", "0.5", "--vibrato", "5.5:40", "--no-limit", "--list-devices")
        #expect(listed.status == 0, "stderr: \(listed.standardError)")
        let badVibrato = try koe.run("live", "--vibrato", "50:40", "--list-devices")
        #expect(badVibrato.status == 2, "exit status \(badVibrato.status)")
        #expect(badVibrato.standardError.contains("--vibrato 50:40: vibrato's rate must be between 0 and 20 Hz"), "stderr: \(badVibrato.standardError)")
        let f0File = try koe.run("live", "--f0-file", "f0.npy", "--list-devices")
        #expect(f0File.status == 2, "exit status \(f0File.status)")
        #expect(f0File.errorLines.count == 1, "stderr: \(f0File.standardError)")
        #expect(f0File.standardError.contains("--f0-file"), "stderr: \(f0File.standardError)")
    }

    /// The virtual microphone's and `--set`'s usage, checked before PipeWire is reached (the sessions run in a
    /// private PipeWire session in Tests/VirtualMic/virtual_mic_test.py).
    @Test func virtualMicrophoneUsage() throws {
        for arguments in [["live", "--set", "koe cli test"], ["live", "pitch=1.2"],
                          ["live", "--virtual-mic", "koe cli test", "--output", "system"],
                          ["live", "--set", "koe cli test", "pitch=1.2", "--virtual-mic", "koe cli test"],
                          ["live", "--set", "koe cli test", "pitch=99"], ["live", "--set", "koe cli test", "tempo=1.2"],
                          ["live", "--virtual-mic", "!!"], ["live", "--virtual-mic", String(repeating: "k", count: 201)]] {
            let refused = try koe.run(arguments)
            #expect(refused.status == 2, "\(arguments): exit status \(refused.status)")
            #expect(refused.errorLines.count == 1, "\(arguments): stderr: \(refused.standardError)")
        }
        for (arguments, words) in [(["live", "--set", "koe cli test", "pitch=99"], "pitch must be between 0.0625 and 16 (got 99)"),
                                   (["live", "--set", "koe cli test", "tempo=1.2"], "'tempo=1.2'"),
                                   (["live", "--set", "koe cli test", "gain=99"], "gain must be between -60 and 60 dB (got 99)"),
                                   (["live", "--set", "koe cli test", "gain=loud"], "gain must be a number"),
                                   (["live", "--set", "koe cli test", "semitones=60"], "semitones must be between -48 and 48 semitones (got 60)"),
                                   (["live", "--virtual-mic", "!!"], "a letter or a digit"),
                                   (["live", "pitch=1.2"], "unexpected argument 'pitch=1.2': settings such as pitch=1.2 go with --set NAME"),
                                   (["live", "--device", "system"], "unexpected argument 'system'"),
                                   (["live", "--set", "koe cli test", "pitch=1.2", "--formant", "1.1"], "not voice options")] {
            let refused = try koe.run(arguments)
            #expect(refused.standardError.contains(words), "\(arguments): stderr: \(refused.standardError)")
        }
    }

    /// The panel's options, checked before any device or PipeWire is reached.
    @Test func panelUsage() throws {
        for (arguments, words) in [(["live", "--panel-port", "8765"], "--panel-port and --open go with --panel"),
                                   (["live", "--open"], "--panel-port and --open go with --panel"),
                                   (["live", "--panel", "--panel-port", "0"], "--panel-port must be between 1 and 65535 (got 0)"),
                                   (["live", "--panel", "--list-devices"], "--list-devices lists and exits: it takes no --panel"),
                                   (["live", "--set", "koe cli test", "pitch=1.2", "--panel"], "it takes no device or panel option")] {
            let refused = try koe.run(arguments)
            #expect(refused.status == 2, "\(arguments): exit status \(refused.status)")
            #expect(refused.errorLines.count == 1 && refused.standardError.contains(words), "\(arguments): stderr: \(refused.standardError)")
        }
    }
}
