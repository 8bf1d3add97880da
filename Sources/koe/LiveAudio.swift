import CPortAudio
import Glibc
import Koe
import Synchronization

/// PortAudio for `koe live`: the devices, and one full-duplex mono stream whose callback runs a VoiceChanger.
enum PortAudio {
    struct Device {
        let index: PaDeviceIndex
        let name: String
        let hostAPI: String
        let inputs: Int
        let outputs: Int
        let defaultSampleRate: Double
        let lowInputLatency: Double
        let lowOutputLatency: Double
    }

    /// Initialises the library. ALSA and JACK print their probing failures (cards that are not there, a JACK
    /// server that is not running) straight to stderr; those lines are not koe's to show, so stderr is closed
    /// to them for the probe, and a failure is told by PortAudio's status instead.
    static func initialize() throws {
        let saved = dup(STDERR_FILENO)
        let null = open("/dev/null", O_WRONLY)
        if saved >= 0 && null >= 0 { dup2(null, STDERR_FILENO) }
        let status = Pa_Initialize()
        if saved >= 0 && null >= 0 { dup2(saved, STDERR_FILENO) }
        if saved >= 0 { close(saved) }
        if null >= 0 { close(null) }
        try check(status, "cannot start PortAudio")
    }

    static func terminate() {
        Pa_Terminate()
    }

    static func devices() -> [Device] {
        (0..<max(0, Pa_GetDeviceCount())).compactMap { index in
            guard let info = Pa_GetDeviceInfo(index)?.pointee else { return nil }
            return Device(
                index: index, name: String(cString: info.name),
                hostAPI: Pa_GetHostApiInfo(info.hostApi).map { String(cString: $0.pointee.name) } ?? "?",
                inputs: Int(info.maxInputChannels), outputs: Int(info.maxOutputChannels),
                defaultSampleRate: info.defaultSampleRate,
                lowInputLatency: info.defaultLowInputLatency, lowOutputLatency: info.defaultLowOutputLatency)
        }
    }

    /// The device called `name` (or numbered so, as --list-devices shows) with channels for that direction;
    /// nil `name` is PortAudio's default. Names are matched exactly first, then as the start of a name.
    static func device(_ name: String?, input: Bool) throws -> Device {
        let direction = input ? "input" : "output"
        let usable = devices().filter { (input ? $0.inputs : $0.outputs) > 0 }
        guard let name else {
            let index = input ? Pa_GetDefaultInputDevice() : Pa_GetDefaultOutputDevice()
            guard index != koe_paNoDevice, let device = usable.first(where: { $0.index == index }) else {
                throw CommandError.badOption("no default \(direction) device (see koe live --list-devices)")
            }
            return device
        }
        if let number = Int32(name), let device = usable.first(where: { $0.index == number }) { return device }
        if let device = usable.first(where: { $0.name == name }) ?? usable.first(where: { $0.name.hasPrefix(name) }) {
            return device
        }
        throw CommandError.badOption("no \(direction) device named '\(name)' (see koe live --list-devices)")
    }

    static func check(_ status: PaError, _ what: String) throws {
        guard status != paNoError.rawValue else { return }
        throw CommandError.badOption("\(what): \(String(cString: Pa_GetErrorText(status)))")
    }
}

/// What the audio callback and the main thread share: the changer, which only the callback touches once the
/// stream runs, the settings the main thread asks for, and the meters. No allocation or lock in the callback.
final class LiveEngine {
    let changer: VoiceChanger
    /// The pitch and formant ratios asked for, as Double bit patterns; the callback hands them to the changer.
    let requestedPitch: Atomic<UInt64>
    let requestedFormant: Atomic<UInt64>
    /// Peak magnitudes since the main thread last read them, as Float bit patterns (ordered like the values).
    let inputPeak = Atomic<UInt32>(0)
    let outputPeak = Atomic<UInt32>(0)
    /// Callbacks PortAudio flagged with an input overflow or output underflow, and blocks the changer refused.
    let xruns = Atomic<Int>(0)
    let refusedBlocks = Atomic<Int>(0)

    private let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 1)
    private let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)

    init(changer: VoiceChanger) {
        self.changer = changer
        requestedPitch = Atomic(changer.pitch.bitPattern)
        requestedFormant = Atomic(changer.formant.bitPattern)
    }

    deinit {
        inputs.deallocate()
        outputs.deallocate()
    }

    /// The callback's work: settings, the block through the changer, the meters.
    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int, flags: PaStreamCallbackFlags) {
        if flags & koe_paXrunFlags != 0 { xruns.add(1, ordering: .relaxed) }
        let pitch = Double(bitPattern: requestedPitch.load(ordering: .relaxed))
        if pitch != changer.pitch { changer.pitch = pitch }
        let formant = Double(bitPattern: requestedFormant.load(ordering: .relaxed))
        if formant != changer.formant { changer.formant = formant }
        Self.raise(inputPeak, to: UnsafeBufferPointer(start: input, count: frames))
        inputs[0] = input
        outputs[0] = output
        do {
            try changer.process(UnsafePointer(inputs), into: UnsafePointer(outputs), frames: frames)
        } catch {
            output.update(repeating: 0, count: frames)
            refusedBlocks.add(1, ordering: .relaxed)
        }
        Self.raise(outputPeak, to: UnsafeBufferPointer(start: output, count: frames))
    }

    /// The peak since the last call, as a linear magnitude; resets it.
    static func takePeak(_ peak: borrowing Atomic<UInt32>) -> Float {
        Float(bitPattern: peak.exchange(0, ordering: .relaxed))
    }

    private static func raise(_ peak: borrowing Atomic<UInt32>, to samples: UnsafeBufferPointer<Float>) {
        var block: Float = 0
        for sample in samples { block = max(block, abs(sample)) }
        if block.bitPattern > peak.load(ordering: .relaxed) { peak.store(block.bitPattern, ordering: .relaxed) }
    }
}

/// One open full-duplex stream, mono in and mono out, 32-bit float, at the output device's rate.
final class LiveStream {
    let sampleRate: Double
    private var stream: UnsafeMutableRawPointer?
    private let engine: Unmanaged<LiveEngine>

    init(engine: LiveEngine, input: PortAudio.Device, output: PortAudio.Device, sampleRate: Double) throws {
        self.sampleRate = sampleRate
        self.engine = Unmanaged.passRetained(engine)
        var inputParameters = PaStreamParameters(
            device: input.index, channelCount: 1, sampleFormat: koe_paFloat32,
            suggestedLatency: input.lowInputLatency, hostApiSpecificStreamInfo: nil)
        var outputParameters = PaStreamParameters(
            device: output.index, channelCount: 1, sampleFormat: koe_paFloat32,
            suggestedLatency: output.lowOutputLatency, hostApiSpecificStreamInfo: nil)
        do {
            try PortAudio.check(
                Pa_OpenStream(
                    &stream, &inputParameters, &outputParameters, sampleRate, UInt(paFramesPerBufferUnspecified),
                    koe_paNoFlag, liveCallback, self.engine.toOpaque()),
                "cannot open '\(input.name)' -> '\(output.name)' at \(Int(sampleRate)) Hz")
        } catch {
            self.engine.release()
            throw error
        }
    }

    deinit {
        if let stream { Pa_CloseStream(stream) }
        engine.release()
    }

    func start() throws {
        try PortAudio.check(Pa_StartStream(stream), "cannot start the stream")
    }

    /// Waits for the callback in progress, then stops.
    func stop() {
        Pa_StopStream(stream)
    }

    var isActive: Bool { Pa_IsStreamActive(stream) == 1 }

    /// Input plus output latency of the devices, in seconds, as PortAudio reports them.
    var deviceLatency: Double {
        guard let info = Pa_GetStreamInfo(stream)?.pointee else { return 0 }
        return info.inputLatency + info.outputLatency
    }
}

private func liveCallback(
    input: UnsafeRawPointer?, output: UnsafeMutableRawPointer?, frames: UInt, time: UnsafePointer<PaStreamCallbackTimeInfo>?,
    flags: PaStreamCallbackFlags, user: UnsafeMutableRawPointer?
) -> Int32 {
    guard let input, let output, let user else { return Int32(paContinue.rawValue) }
    Unmanaged<LiveEngine>.fromOpaque(user).takeUnretainedValue().process(
        input.assumingMemoryBound(to: Float.self), output.assumingMemoryBound(to: Float.self), frames: Int(frames),
        flags: flags)
    return Int32(paContinue.rawValue)
}
