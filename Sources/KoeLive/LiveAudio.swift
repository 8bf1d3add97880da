import CPortAudio
import Glibc
import Koe

/// PortAudio, initialised for as long as this object lives: the devices, and the streams opened through it.
package final class PortAudioLibrary {
    package struct Device {
        package let index: PaDeviceIndex
        package let name: String
        package let hostAPI: String
        package let inputs: Int
        package let outputs: Int
        package let defaultSampleRate: Double
        let lowInputLatency: Double
        let lowOutputLatency: Double
    }

    /// ALSA and JACK print their probing failures (cards that are not there, a JACK server that is not running)
    /// straight to stderr; those lines are not koe's to show, so stderr goes to /dev/null for the probe, and a
    /// failure is told by PortAudio's status instead.
    package init() throws {
        let saved = dup(STDERR_FILENO)
        let null = open("/dev/null", O_WRONLY)
        if saved >= 0 && null >= 0 { dup2(null, STDERR_FILENO) }
        let status = Pa_Initialize()
        if saved >= 0 && null >= 0 { dup2(saved, STDERR_FILENO) }
        if saved >= 0 { close(saved) }
        if null >= 0 { close(null) }
        try Self.check(status, "cannot start PortAudio")
    }

    deinit {
        Pa_Terminate()
    }

    package var devices: [Device] {
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
    package func device(_ name: String?, input: Bool) throws -> Device {
        let direction = input ? "input" : "output"
        let usable = devices.filter { (input ? $0.inputs : $0.outputs) > 0 }
        guard let name else {
            let index = input ? Pa_GetDefaultInputDevice() : Pa_GetDefaultOutputDevice()
            guard index != koe_paNoDevice, let device = usable.first(where: { $0.index == index }) else {
                throw KoeError.invalidArgument("no default \(direction) device")
            }
            return device
        }
        if let number = Int32(name), let device = usable.first(where: { $0.index == number }) { return device }
        if let device = usable.first(where: { $0.name == name }) ?? usable.first(where: { $0.name.hasPrefix(name) }) {
            return device
        }
        throw KoeError.invalidArgument("no \(direction) device named '\(name)'")
    }

    static func check(_ status: PaError, _ what: String) throws {
        guard status != paNoError.rawValue else { return }
        throw KoeError.io("\(what): \(String(cString: Pa_GetErrorText(status)))")
    }
}

/// One open full-duplex stream in callback mode, mono in and mono out, 32-bit float. (PortAudio's blocking
/// I/O on JACK crashes on mono streams, PortAudio issue #81.)
package final class LiveStream {
    private let library: PortAudioLibrary
    private var stream: UnsafeMutableRawPointer?
    private let engine: Unmanaged<LiveEngine>

    package init(
        library: PortAudioLibrary, engine: LiveEngine, input: PortAudioLibrary.Device, output: PortAudioLibrary.Device,
        sampleRate: Double
    ) throws {
        self.library = library
        self.engine = Unmanaged.passRetained(engine)
        var inputParameters = PaStreamParameters(
            device: input.index, channelCount: 1, sampleFormat: koe_paFloat32,
            suggestedLatency: input.lowInputLatency, hostApiSpecificStreamInfo: nil)
        var outputParameters = PaStreamParameters(
            device: output.index, channelCount: 1, sampleFormat: koe_paFloat32,
            suggestedLatency: output.lowOutputLatency, hostApiSpecificStreamInfo: nil)
        do {
            try PortAudioLibrary.check(
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

    package func start() throws {
        try PortAudioLibrary.check(Pa_StartStream(stream), "cannot start the stream")
    }

    /// Waits for the callback in progress, then stops.
    package func stop() {
        Pa_StopStream(stream)
    }

    package var isActive: Bool { Pa_IsStreamActive(stream) == 1 }

    /// Input plus output latency of the devices, in seconds, as PortAudio reports them.
    package var deviceLatency: Double {
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
        xrun: flags & koe_paXrunFlags != 0)
    return Int32(paContinue.rawValue)
}
