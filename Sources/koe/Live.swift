import ArgumentParser
import Glibc
import Koe
import Synchronization

/// `koe live`: capture, change, play. Parses, validates, wires the devices to a VoiceChanger and reports.
struct Live: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change your voice live: from an input device, through koe, to an output device (PortAudio).",
        discussion: """
            Mono in, mono out, at the output device's sample rate. On a terminal a status line shows the levels, \
            the latency and xruns; up/down move the pitch a semitone, left/right the formants by 5 %, q stops. \
            Ctrl-C stops too (exit status 130).
            """)

    @Option(help: ArgumentHelp("Capture device: a name (or its start) or a number from --list-devices (default: the system's).", valueName: "dev"))
    var input: String?

    @Option(help: ArgumentHelp("Playback device: a name (or its start) or a number from --list-devices (default: the system's).", valueName: "dev"))
    var output: String?

    @Flag(name: .customLong("list-devices"), help: "List the audio devices and exit.")
    var listDevices = false

    @OptionGroup var voice: VoiceOptions
    @OptionGroup var equalizer: EqualizerOptions

    func validate() throws {
        if voice.tempo != nil { throw ValidationError("--tempo cannot change the duration of live sound") }
        for (flag, given) in [
            ("--pitch-median", voice.pitchMedian != nil), ("--pitch-range", voice.pitchRange != nil),
            ("--eq", !equalizer.bandSpecs.isEmpty), ("--geq", equalizer.graphic != nil),
        ] where given {
            throw ValidationError("\(flag) is not available in koe live")
        }
    }

    func run() throws {
        LiveSignals.install()
        try PortAudio.initialize()
        defer { PortAudio.terminate() }
        if listDevices {
            let devices = PortAudio.devices()
            if devices.isEmpty { Report.note("no audio devices (is a sound server running?)") }
            for device in devices {
                print("\(device.index)\t\(device.name)\t[\(device.hostAPI)]\tin \(device.inputs), out \(device.outputs)\t\(Int(device.defaultSampleRate)) Hz")
            }
            return
        }
        let inputDevice = try PortAudio.device(input, input: true)
        let outputDevice = try PortAudio.device(output, input: false)
        let sampleRate = outputDevice.defaultSampleRate
        let changer = try makeChanger(sampleRate: Int(sampleRate))
        let engine = LiveEngine(changer: changer)
        let stream = try LiveStream(engine: engine, input: inputDevice, output: outputDevice, sampleRate: sampleRate)
        let latency = Double(changer.latency) / sampleRate + stream.deviceLatency

        let keys = LiveKeys()
        defer { keys.restore() }
        try stream.start()
        let status = LiveStatus(engine: engine, latency: latency, onTerminal: isatty(STDERR_FILENO) != 0)
        var quit = false
        while !quit && LiveSignals.received == 0 && stream.isActive {
            usleep(50_000)
            while let key = keys.next() {
                switch key {
                case .quit: quit = true
                case .pitch(let steps): engine.nudge(pitch: steps)
                case .formant(let steps): engine.nudge(formant: steps)
                }
            }
            status.show()
        }
        stream.stop()
        status.finish(seconds: status.elapsed)
        if !quit && LiveSignals.received == 0 {
            throw CommandError.badOption("the audio stream stopped: the device went away")
        }
        if LiveSignals.received != 0 { throw ExitCode(128 + LiveSignals.received) }
    }

    private func makeChanger(sampleRate: Int) throws -> VoiceChanger {
        let changer = try VoiceChanger(sampleRate: sampleRate, channels: 1)
        if let preset = voice.preset { try changer.apply(preset: preset) }
        if let pitch = voice.pitch { changer.pitch = pitch }
        if let semitones = voice.semitones { changer.semitones = semitones }
        if let formant = voice.formant { changer.formant = formant }
        if let gain = equalizer.gain { changer.gainDB = gain }
        return changer
    }
}

extension LiveEngine {
    /// Moves the pitch by semitones, or the formants by steps of 5 %, from the main thread.
    func nudge(pitch semitones: Int) {
        let pitch = Double(bitPattern: requestedPitch.load(ordering: .relaxed)) * exp2(Double(semitones) / 12)
        requestedPitch.store(min(max(pitch, 1.0 / 16), 16).bitPattern, ordering: .relaxed)
    }

    func nudge(formant steps: Int) {
        let formant = Double(bitPattern: requestedFormant.load(ordering: .relaxed)) * pow(1.05, Double(steps))
        requestedFormant.store(min(max(formant, 1.0 / 16), 16).bitPattern, ordering: .relaxed)
    }
}

/// SIGINT, SIGTERM and SIGHUP end the session cleanly: the handler only records which came.
enum LiveSignals {
    private static let signal = Atomic<Int32>(0)

    static var received: Int32 { signal.load(ordering: .relaxed) }

    static func install() {
        for number in [SIGINT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { LiveSignals.signal.store($0, ordering: .relaxed) }
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
    }
}

/// Keys from a terminal on stdin, read without waiting for Return and without echo; nothing when stdin is not
/// a terminal.
final class LiveKeys {
    enum Key { case quit, pitch(Int), formant(Int) }

    private var saved: termios?

    init() {
        guard isatty(STDIN_FILENO) != 0 else { return }
        var settings = termios()
        tcgetattr(STDIN_FILENO, &settings)
        saved = settings
        settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
        settings.c_cc.6 = 0  // VMIN: a read returns at once
        settings.c_cc.5 = 0  // VTIME
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }

    func restore() {
        if var saved { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
    }

    /// The next key pressed, if any: q, or an arrow (ESC [ A/B/C/D).
    func next() -> Key? {
        guard saved != nil else { return nil }
        var bytes = (UInt8(0), UInt8(0), UInt8(0))
        let count = withUnsafeMutableBytes(of: &bytes) { read(STDIN_FILENO, $0.baseAddress, 3) }
        guard count > 0 else { return nil }
        switch (count, bytes.0, bytes.1, bytes.2) {
        case (_, UInt8(ascii: "q"), _, _), (_, UInt8(ascii: "Q"), _, _): return .quit
        case (3, 0x1B, UInt8(ascii: "["), UInt8(ascii: "A")): return .pitch(1)
        case (3, 0x1B, UInt8(ascii: "["), UInt8(ascii: "B")): return .pitch(-1)
        case (3, 0x1B, UInt8(ascii: "["), UInt8(ascii: "C")): return .formant(1)
        case (3, 0x1B, UInt8(ascii: "["), UInt8(ascii: "D")): return .formant(-1)
        default: return next()
        }
    }
}

/// The one-line status on a terminal, and the summary line at the end.
final class LiveStatus {
    private let engine: LiveEngine
    private let latency: Double
    private let onTerminal: Bool
    private let start = LiveStatus.now()

    init(engine: LiveEngine, latency: Double, onTerminal: Bool) {
        self.engine = engine
        self.latency = latency
        self.onTerminal = onTerminal
    }

    var elapsed: Double { Self.now() - start }

    func show() {
        let inLevel = Self.decibels(LiveEngine.takePeak(engine.inputPeak))
        let outLevel = Self.decibels(LiveEngine.takePeak(engine.outputPeak))
        guard onTerminal else { return }
        let pitch = Double(bitPattern: engine.requestedPitch.load(ordering: .relaxed))
        let formant = Double(bitPattern: engine.requestedFormant.load(ordering: .relaxed))
        let line = "in \(Self.meter(inLevel)) out \(Self.meter(outLevel))  pitch \(Self.fixed(pitch, 2))"
            + "  formant \(Self.fixed(formant, 2))  latency \(Int((latency * 1000).rounded())) ms"
            + "  xruns \(engine.xruns.load(ordering: .relaxed))  [arrows, q]"
        Self.write("\r" + line + "\u{1B}[K")
    }

    func finish(seconds: Double) {
        if onTerminal { Self.write("\r\u{1B}[K") }
        Report.note(
            "live: \(Self.fixed(seconds, 1)) s, xruns \(engine.xruns.load(ordering: .relaxed)), "
                + "refused blocks \(engine.refusedBlocks.load(ordering: .relaxed)), latency \(Self.fixed(latency * 1000, 1)) ms")
    }

    /// A status line goes out whole or not at all: a terminal that cannot take it now gets the next one.
    private static func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    private static func decibels(_ peak: Float) -> Double {
        peak > 0 ? max(-60, 20 * log10(Double(peak))) : -60
    }

    /// Twelve cells from -60 to 0 dBFS, and the figure.
    private static func meter(_ decibels: Double) -> String {
        let cells = Int(((decibels + 60) / 5).rounded(.down))
        let bar = String(repeating: "#", count: max(0, min(12, cells))) + String(repeating: "-", count: 12 - max(0, min(12, cells)))
        return "[\(bar)] " + fixed(decibels, 0).leftPadded(to: 3) + " dB"
    }

    private static func fixed(_ value: Double, _ digits: Int) -> String {
        let scale = pow(10, Double(digits))
        let rounded = (value * scale).rounded() / scale
        return digits == 0 ? String(Int(rounded)) : String(rounded)
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
