import ArgumentParser
import Glibc
import Koe
import KoeLive
import KoePanel
import Synchronization

/// `koe live`: capture, change, play (or offer as a virtual microphone). Parses, validates, wires the devices to
/// a VoiceChanger and reports.
struct Live: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change your voice live: from an input device, through koe, to an output device (PortAudio) or a virtual microphone (PipeWire).",
        discussion: """
            Mono in, mono out, at the output device's default sample rate. On a terminal a status line shows \
            the levels, the pitch and formant ratios, the latency (koe's plus the devices') and the xruns; \
            up/down move the pitch a semitone, left/right the formants by 5 %, q stops (exit status 0). \
            Ctrl-C stops too (exit status 130). A summary line goes to stderr at the end.

            With --virtual-mic NAME, koe captures from PipeWire's default source (or --input, a PipeWire node) \
            and offers the changed voice as a PipeWire source described as NAME (node name: NAME lowercased, \
            other characters as _), mono at the graph's rate, which every PipeWire and PulseAudio program can \
            pick as its microphone. The latency printed is koe's plus the graph's quantum. While it runs, \
            `koe live --set NAME pitch=R gain=DB snap=C:major ...` changes its voice from any shell (any setting \
            `koe settings` marks live, through a socket in $XDG_RUNTIME_DIR). SIGINT ends it with exit status 130, \
            SIGTERM with 0; the source goes with it.

            With --panel, koe serves a page on 127.0.0.1 with a control for every live setting, the presets, a \
            bypass switch, level meters and a chart of F0 in and out, and prints its address (with a token no \
            other page knows) on one line of standard output; --open hands it to xdg-open.
            """)

    @Option(help: ArgumentHelp("Capture device: a name (or its start) or a number from --list-devices (default: the system's); with --virtual-mic, a PipeWire node's name or description.", valueName: "dev"))
    var input: String?

    @Option(name: .customLong("virtual-mic"), help: ArgumentHelp("Offer the changed voice as a PipeWire source described as NAME, instead of playing it.", valueName: "name"))
    var virtualMic: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("Change the voice of the running koe live --virtual-mic NAME to the settings that follow (pitch=R, gain=DB, snap=C:major, ...), then exit.", valueName: "name"))
    var setTarget: String?

    @Argument(help: ArgumentHelp("With --set: NAME=VALUE for any setting koe settings marks live (pitch, formant, gain, eq, geq, snap, vibrato_rate, preset, bypass, ...), as the options take them; off unsets snap, pitch_median, vibrato, eq and geq.", valueName: "setting"))
    var settings: [String] = []

    @Flag(help: "Serve a control page on 127.0.0.1 and print its address (see --panel-port, --open).")
    var panel = false

    @Option(name: .customLong("panel-port"), help: ArgumentHelp("The panel's port (default: a free one).", valueName: "port"))
    var panelPort: Int?

    @Flag(help: "Open the panel in the desktop's browser (xdg-open).")
    var open = false

    @Option(help: ArgumentHelp("Playback device: a name (or its start) or a number from --list-devices (default: the system's).", valueName: "dev"))
    var output: String?

    @Flag(name: .customLong("list-devices"), help: "List the audio devices (number, name, host API, channels, rate) and exit.")
    var listDevices = false

    @OptionGroup(title: "Voice") var voice: VoiceOptions
    @OptionGroup(title: "F0 edits and output limiter") var curves: VoiceCurveOptions
    @OptionGroup(title: "Equalizer") var equalizer: EqualizerOptions
    @OptionGroup(title: "Analysis") var analysis: AnalysisFlags

    /// The analysis options checked as koe live runs them, live by default.
    func validate() throws {
        if setTarget != nil {
            if settings.isEmpty { throw ValidationError("--set NAME needs settings: \(LiveControl.usage)") }
            if virtualMic != nil || input != nil || output != nil || listDevices || panel {
                throw ValidationError("--set changes a running virtual microphone: it takes no device or panel option")
            }
            var options = try ConversionSettings(voice: voice, equalizer: equalizer, analysis: analysis)
            try curves.apply(to: &options)
            if !options.changedParts.isEmpty {
                throw ValidationError("--set takes its settings as \(LiveControl.usage), not \(options.changedParts.joined(separator: ", "))")
            }
        }
        do {
            if let name = setTarget ?? virtualMic { _ = try VirtualMicrophone.nodeName(for: name) }
            if setTarget != nil { _ = try LiveControl.parse(settings.joined(separator: " ")) }
        } catch {
            throw ValidationError(error.description)
        }
        if setTarget != nil { return }
        // A stray word is a setting without --set, or the value of an option koe live does not have.
        if let word = settings.first {
            throw ValidationError("unexpected argument '\(word)': settings such as pitch=1.2 go with --set NAME (see koe live --help)")
        }
        if (panelPort != nil || open) && !panel {
            throw ValidationError("--panel-port and --open go with --panel")
        }
        if let panelPort, !(1...65535).contains(panelPort) {
            throw ValidationError("--panel-port must be between 1 and 65535 (got \(panelPort))")
        }
        if panel && listDevices {
            throw ValidationError("--list-devices lists and exits: it takes no --panel")
        }
        if virtualMic != nil && (output != nil || listDevices) {
            throw ValidationError("--virtual-mic offers the voice as a source: it takes no --output or --list-devices")
        }
        if curves.f0File != nil {
            throw ValidationError("--f0-file is made for one whole input: koe live cannot take one")
        }
        let name: (AnalysisOptions.Setting) -> String = {
            $0 == .live ? "koe live's --live (the default; --no-live turns it off)" : AnalysisFlags.flag($0)
        }
        if let problem = analysis.streamingOptions(liveByDefault: true).problem(sampleRate: nil, name: name) {
            throw ValidationError(problem)
        }
    }

    func run() throws {
        if let setTarget {
            print(try LiveControl.request(description: setTarget, assignments: settings))
            return
        }
        LiveSignals.install()
        if let virtualMic { return try runVirtualMicrophone(virtualMic) }
        let library = try PortAudioLibrary()
        if listDevices {
            let devices = library.devices
            if devices.isEmpty { Report.note("no audio devices (is a sound server running?)") }
            for device in devices {
                print("\(device.index)\t\(device.name)\t[\(device.hostAPI)]\tin \(device.inputs), out \(device.outputs)\t\(Int(device.defaultSampleRate)) Hz")
            }
            return
        }
        let (inputDevice, outputDevice) = try withDeviceHint {
            (try library.device(input, input: true), try library.device(output, input: false))
        }
        let sampleRate = outputDevice.defaultSampleRate
        let engine = LiveEngine(changer: try makeChanger(sampleRate: Int(sampleRate)))
        let voice = try liveSettings(engine)
        let panel = try makePanel(voice, engine)
        let stream = try LiveStream(
            library: library, engine: engine, input: inputDevice, output: outputDevice, sampleRate: sampleRate)
        let latency = Double(engine.changer.latency) / sampleRate + stream.deviceLatency
        engine.report(latency: latency)

        let keys = LiveKeys()
        defer { keys.restore() }
        LiveMemory.prefault()
        try stream.start()
        start(panel)
        let status = LiveStatus(engine: engine, voice: voice, latency: { latency }, onTerminal: isatty(STDERR_FILENO) != 0)
        var quit = false
        while !quit && LiveSignals.received == 0 && stream.isActive {
            usleep(50_000)
            quit = keys.steer(voice)
            voice.collect()
            status.show()
        }
        stream.stop()
        status.finish()
        if LiveSignals.received != 0 { throw ExitCode(128 + LiveSignals.received) }
        if !quit { throw KoeError.io("the audio stream stopped: the device went away") }
    }

    /// The virtual microphone's session: the engine at the graph's rate, the source offered, the control socket
    /// and the keys served until a signal, q, or a failure of PipeWire.
    private func runVirtualMicrophone(_ name: String) throws {
        let microphone = try VirtualMicrophone(description: name, input: input)
        let sampleRate = microphone.sampleRate
        let engine = LiveEngine(changer: try makeChanger(sampleRate: sampleRate))
        let voice = try liveSettings(engine)
        let panel = try makePanel(voice, engine)
        let changerLatency = engine.changer.latency
        var control: LiveControl?
        do {
            control = try LiveControl(nodeName: VirtualMicrophone.nodeName(for: name))
        } catch {
            Report.warning("\(error); koe live --set cannot reach this microphone")
        }
        LiveMemory.prefault()
        try microphone.start(engine: engine)
        // The quantum is known from the first cycle, which comes within one once the capture runs.
        for _ in 0..<Int(VirtualMicrophone.timeout * 100) where microphone.quantum == 0 { usleep(10_000) }
        let latency = { Double(changerLatency + microphone.quantum) / Double(sampleRate) }
        engine.report(latency: latency())
        let breakdown = {
            " (koe \(LiveStatus.fixed(Double(changerLatency) / Double(sampleRate) * 1000, 1)) ms + quantum \(microphone.quantum) frames)"
        }
        Report.note(
            "virtual mic '\(name)' (node \(try VirtualMicrophone.nodeName(for: name))) from \(microphone.input) at "
                + "\(sampleRate) Hz, latency \(LiveStatus.fixed(latency() * 1000, 1)) ms\(breakdown()); change it with: "
                + "koe live --set '\(name)' pitch=R formant=R")
        start(panel)

        let keys = LiveKeys()
        defer { keys.restore() }
        let status = LiveStatus(engine: engine, voice: voice, latency: latency, breakdown: breakdown, onTerminal: isatty(STDERR_FILENO) != 0)
        var quit = false
        var failure: String?
        while !quit && LiveSignals.received == 0 {
            usleep(50_000)
            quit = keys.steer(voice)
            control?.serve(voice)
            voice.collect()
            engine.report(latency: latency())
            failure = microphone.failure
            if failure != nil { break }
            status.show()
        }
        status.finish()
        if let failure { throw KoeError.io(failure) }
        // Ctrl-C is an interruption; SIGTERM and SIGHUP are how a session or a service manager stops it.
        if LiveSignals.received == SIGINT { throw ExitCode(128 + SIGINT) }
    }

    /// A device that cannot be found is reported with where to look.
    private func withDeviceHint<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch KoeError.invalidArgument(let message) {
            throw KoeError.invalidArgument(message + " (see koe live --list-devices)")
        }
    }

    /// A changer with the analysis asked for.
    private func makeChanger(sampleRate: Int) throws -> VoiceChanger {
        var options = VoiceChanger.Options()
        options.analysis = analysis.streamingOptions(liveByDefault: true)
        return try VoiceChanger(sampleRate: sampleRate, channels: 1, options: options)
    }

    /// The voice the stream starts with, taken by `engine`'s changer: the preset's voice and EQ, the explicit
    /// options over them; `--set`, the keys and the panel change it from there.
    private func liveSettings(_ engine: LiveEngine) throws -> LiveSettings {
        var settings = try ConversionSettings(voice: voice, equalizer: equalizer, analysis: analysis)
        try curves.apply(to: &settings)
        settings.equalizer = equalizer.explicitBands
        return try LiveSettings(engine: engine, settings: settings, graphicEQ: equalizer.graphicEQ)
    }

    /// The panel, listening from now on when asked for (a port that is taken is an error before any audio runs).
    private func makePanel(_ voice: LiveSettings, _ engine: LiveEngine) throws -> LivePanel? {
        guard panel else { return nil }
        return try LivePanel(settings: voice, engine: engine, port: panelPort)
    }

    /// Serves the panel, prints its address on one line of standard output, and opens it when asked.
    private func start(_ panel: LivePanel?) {
        guard let panel else { return }
        panel.start { Report.warning($0) }
        print("koe live panel: \(panel.url)")
        fflush(nil)
        if open { PanelBrowser.open(panel.url) { Report.warning($0) } }
    }
}

/// SIGINT, SIGTERM and SIGHUP end the session cleanly: the handler only records which came.
enum LiveSignals {
    private static let signal = Atomic<Int32>(0)

    static var received: Int32 { signal.load(ordering: .relaxed) }

    static func install() {
        // Touched here first, so the handler never runs the global's one-time initialisation.
        signal.store(0, ordering: .relaxed)
        for number in [SIGINT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { LiveSignals.signal.store($0, ordering: .relaxed) }
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
    }
}

/// Keys from a terminal on stdin, read without waiting for Return and without echo; none when stdin is not
/// a terminal.
final class LiveKeys {
    enum Key { case quit, pitch(Int), formant(Int) }

    private var saved: termios?
    /// Bytes read from the terminal and not yet taken as keys.
    private var typed: [UInt8] = []

    init() {
        guard isatty(STDIN_FILENO) != 0 else { return }
        var settings = termios()
        tcgetattr(STDIN_FILENO, &settings)
        saved = settings
        settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // VMIN and VTIME 0: a read returns at once, with what has been typed.
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }

    func restore() {
        if var saved { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
    }

    /// Applies the keys pressed since the last call to the voice (the arrows nudge the pitch and formants);
    /// true once q was pressed.
    func steer(_ voice: LiveSettings) -> Bool {
        var quit = false
        while let key = next() {
            switch key {
            case .quit: quit = true
            case .pitch(let steps): voice.nudge(pitch: steps)
            case .formant(let steps): voice.nudge(formant: steps)
            }
        }
        return quit
    }

    /// The next key pressed, if any: q, or an arrow (ESC [ A/B/C/D); other keys are skipped. Bytes are kept
    /// across calls, so keys typed together, or an arrow's sequence split between reads, are all seen.
    func next() -> Key? {
        guard saved != nil else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = read(STDIN_FILENO, &bytes, bytes.count)
        if count > 0 { typed += bytes[..<count] }
        while let first = typed.first {
            guard first == 0x1B else {
                typed.removeFirst()
                if first == UInt8(ascii: "q") || first == UInt8(ascii: "Q") { return .quit }
                continue
            }
            guard typed.count >= 2 else { return nil }
            guard typed[1] == UInt8(ascii: "[") else {
                typed.removeFirst()
                continue
            }
            guard typed.count >= 3 else { return nil }
            let final = typed[2]
            typed.removeFirst(3)
            switch final {
            case UInt8(ascii: "A"): return .pitch(1)
            case UInt8(ascii: "B"): return .pitch(-1)
            case UInt8(ascii: "C"): return .formant(1)
            case UInt8(ascii: "D"): return .formant(-1)
            default: continue
            }
        }
        return nil
    }
}

/// The one-line status on a terminal, and the summary line at the end.
final class LiveStatus {
    private let engine: LiveEngine
    private let voice: LiveSettings
    /// What a listener waits, in seconds, now (a PipeWire graph's quantum can change while it runs).
    private let latency: () -> Double
    private let onTerminal: Bool
    private let start = LiveEngine.now()

    /// Where the latency comes from, for the summary (empty: nothing to add).
    private let breakdown: () -> String

    init(
        engine: LiveEngine, voice: LiveSettings, latency: @escaping () -> Double, breakdown: @escaping () -> String = { "" },
        onTerminal: Bool
    ) {
        self.engine = engine
        self.voice = voice
        self.latency = latency
        self.breakdown = breakdown
        self.onTerminal = onTerminal
    }

    func show() {
        let inLevel = Self.decibels(LiveEngine.takePeak(engine.inputPeak))
        let outLevel = Self.decibels(LiveEngine.takePeak(engine.outputPeak))
        guard onTerminal else { return }
        let now = voice.current.settings.voice
        let line = "in \(Self.meter(inLevel)) out \(Self.meter(outLevel))  pitch \(Self.fixed(now.pitch, 2))"
            + "  formant \(Self.fixed(now.formant, 2))  latency \(Int((latency() * 1000).rounded())) ms"
            + "  xruns \(engine.xruns.load(ordering: .relaxed))  [arrows, q]"
        Self.write("\r" + line + "\u{1B}[K")
    }

    func finish() {
        if onTerminal { Self.write("\r\u{1B}[K") }
        Report.note(
            "live: \(Self.fixed(LiveEngine.now() - start, 1)) s, xruns \(engine.xruns.load(ordering: .relaxed)), "
                + "refused blocks \(engine.refusedBlocks.load(ordering: .relaxed)), "
                + "busiest block \(Self.fixed(engine.busiestShare * 100, 1)) % of its time "
                + "(\(Self.fixed(engine.busiestSecond, 2)) s in), "
                + "most work \(Self.fixed(engine.mostWorkShare * 100, 1)) %, "
                + "blocks waited \(engine.waitedBlocks.load(ordering: .relaxed)), "
                + "latency \(Self.fixed(latency() * 1000, 1)) ms\(breakdown())")
    }

    /// A status line goes out in one write, or not at all: a terminal that cannot take it now gets the next one.
    private static func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    private static func decibels(_ peak: Float) -> Double {
        peak > 0 ? max(-60, 20 * log10(Double(peak))) : -60
    }

    /// Twelve cells from -60 to 0 dBFS, and the figure.
    private static func meter(_ decibels: Double) -> String {
        let cells = max(0, min(12, Int(((decibels + 60) / 5).rounded(.down))))
        let figure = String(Int(decibels.rounded()))
        return "[" + String(repeating: "#", count: cells) + String(repeating: "-", count: 12 - cells) + "] "
            + String(repeating: " ", count: max(0, 3 - figure.count)) + figure + " dB"
    }

    static func fixed(_ value: Double, _ digits: Int) -> String {
        let scale = pow(10, Double(digits))
        return String((value * scale).rounded() / scale)
    }
}
