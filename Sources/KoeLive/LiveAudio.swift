import CPortAudio
import Glibc
import Koe
import Synchronization

/// PortAudio, initialised for as long as this object lives: the devices, and the streams opened through it.
package final class PortAudioLibrary {
    package struct Device {
        package let index: PaDeviceIndex
        package let name: String
        package let hostAPI: String
        package let inputs: Int
        package let outputs: Int
        package let defaultSampleRate: Double
        package let lowInputLatency: Double
        package let lowOutputLatency: Double
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

    package static func check(_ status: PaError, _ what: String) throws {
        guard status != paNoError.rawValue else { return }
        throw KoeError.io("\(what): \(String(cString: Pa_GetErrorText(status)))")
    }
}

/// What the audio callback and the main thread share: the changer, which only the callback touches once the
/// stream runs, the settings the main thread asks for, and the meters. The callback neither allocates nor
/// locks here; the changer's own real-time behaviour is `VoiceChanger`'s (see its documentation).
package final class LiveEngine {
    package let changer: VoiceChanger
    /// The pitch and formant ratios asked for, as Double bit patterns; the callback hands them to the changer.
    package let requestedPitch: Atomic<UInt64>
    package let requestedFormant: Atomic<UInt64>
    /// Peak magnitudes since the main thread last took them, as Float bit patterns (ordered like the values).
    package let inputPeak = Atomic<UInt32>(0)
    package let outputPeak = Atomic<UInt32>(0)
    /// Callbacks PortAudio flagged with an over- or underflow, and blocks the changer refused.
    package let xruns = Atomic<Int>(0)
    package let refusedBlocks = Atomic<Int>(0)

    private let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 1)
    private let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)

    package init(changer: VoiceChanger) {
        self.changer = changer
        requestedPitch = Atomic(changer.voice.pitch.bitPattern)
        requestedFormant = Atomic(changer.voice.formant.bitPattern)
    }

    deinit {
        inputs.deallocate()
        outputs.deallocate()
    }

    package var pitch: Double { Double(bitPattern: requestedPitch.load(ordering: .relaxed)) }
    package var formant: Double { Double(bitPattern: requestedFormant.load(ordering: .relaxed)) }

    /// Moves the pitch by semitones; from the main thread.
    package func nudge(pitch semitones: Int) {
        let pitch = min(max(pitch * exp2(Double(semitones) / 12), VoiceSettings.ratioRange.lowerBound), VoiceSettings.ratioRange.upperBound)
        requestedPitch.store(pitch.bitPattern, ordering: .relaxed)
    }

    /// Moves the formants by steps of 5 %; from the main thread.
    package func nudge(formant steps: Int) {
        let formant = min(max(formant * pow(1.05, Double(steps)), VoiceSettings.ratioRange.lowerBound), VoiceSettings.ratioRange.upperBound)
        requestedFormant.store(formant.bitPattern, ordering: .relaxed)
    }

    /// The callback's work: settings, the block through the changer, the meters.
    package func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, frames: Int, flags: PaStreamCallbackFlags) {
        if flags & koe_paXrunFlags != 0 { xruns.add(1, ordering: .relaxed) }
        let pitch = self.pitch, formant = self.formant
        if pitch != changer.voice.pitch { changer.voice.pitch = pitch }
        if formant != changer.voice.formant { changer.voice.formant = formant }
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
    package static func takePeak(_ peak: borrowing Atomic<UInt32>) -> Float {
        Float(bitPattern: peak.exchange(0, ordering: .relaxed))
    }

    /// Only the callback raises a peak and only the main thread resets it, so a load and a store lose nothing
    /// worse than one block's peak at the moment of a reset.
    private static func raise(_ peak: borrowing Atomic<UInt32>, to samples: UnsafeBufferPointer<Float>) {
        var block: Float = 0
        for sample in samples { block = max(block, abs(sample)) }
        if block.bitPattern > peak.load(ordering: .relaxed) { peak.store(block.bitPattern, ordering: .relaxed) }
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
        flags: flags)
    return Int32(paContinue.rawValue)
}
