import CKoePipeWire
import Koe

/// A virtual microphone on PipeWire for as long as this object lives: a capture stream from a source and an
/// `Audio/Source` node that PipeWire and PulseAudio clients list, offering the engine's output. Connecting reads
/// the graph's rate (to build the engine at) and checks the names; `start` opens the streams.
package final class VirtualMicrophone {
    /// Seconds to wait for each answer of the server, so that a server that does not answer is an error, not a hang.
    package static let timeout = 5.0

    private let microphone: OpaquePointer
    private var engine: Unmanaged<LiveEngine>?

    /// The longest description, in UTF-8 bytes: PipeWire's node names and descriptions are kept that short here.
    static let maximumNameBytes = 200

    /// The node.name a description gives: its ASCII letters and digits lowercased, runs of anything else as one
    /// `_` ("koe voice" → "koe_voice"). Throws for a name with neither, or longer than `maximumNameBytes`.
    package static func nodeName(for description: String) throws(KoeError) -> String {
        guard description.utf8.count <= maximumNameBytes else {
            throw KoeError.invalidArgument("a virtual microphone's name is at most \(maximumNameBytes) bytes long")
        }
        var name = ""
        for character in description.lowercased().unicodeScalars {
            if character.isASCII && (("a"..."z").contains(character) || ("0"..."9").contains(character)) {
                name.unicodeScalars.append(character)
            } else if !name.isEmpty && !name.hasSuffix("_") {
                name += "_"
            }
        }
        while name.hasSuffix("_") { name.removeLast() }
        guard !name.isEmpty else {
            throw KoeError.invalidArgument("a virtual microphone's name needs a letter or a digit: '\(description)'")
        }
        return name
    }

    /// Connects and checks: no node called `description` (or its node name) yet, the capture source there
    /// (`input`: a node's name or description, or its start; nil: the default source).
    package init(description: String, input: String?) throws(KoeError) {
        let nodeName = try Self.nodeName(for: description)
        var error = [CChar](repeating: 0, count: 512)
        guard let microphone = koe_virtual_microphone_connect(description, nodeName, input, Self.timeout, &error, error.count) else {
            throw KoeError.io(Self.text(error))
        }
        self.microphone = microphone
    }

    deinit {
        koe_virtual_microphone_close(microphone)
        engine?.release()
    }

    /// The graph's sample rate, which both streams run at.
    package var sampleRate: Int { Int(koe_virtual_microphone_rate(microphone)) }

    /// The capture source's node name.
    package var input: String { String(cString: koe_virtual_microphone_input(microphone)) }

    /// Frames of the last graph cycle (the quantum); 0 before the first.
    package var quantum: Int { Int(koe_virtual_microphone_quantum(microphone)) }

    /// Opens the streams with `engine` as the callback's work; returns once the capture runs and the source is
    /// in the graph.
    package func start(engine: LiveEngine) throws(KoeError) {
        precondition(self.engine == nil, "a virtual microphone starts once")
        let retained = Unmanaged.passRetained(engine)
        self.engine = retained
        var error = [CChar](repeating: 0, count: 512)
        guard koe_virtual_microphone_start(microphone, virtualMicrophoneCallback, retained.toOpaque(), &error, error.count) == 0 else {
            throw KoeError.io(Self.text(error))
        }
    }

    /// What went wrong since the start (the server gone, a stream failed), or nil.
    package var failure: String? {
        var error = [CChar](repeating: 0, count: 512)
        return koe_virtual_microphone_failed(microphone, &error, error.count) != 0 ? Self.text(error) : nil
    }

    private static func text(_ error: [CChar]) -> String {
        String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

private func virtualMicrophoneCallback(
    user: UnsafeMutableRawPointer?, input: UnsafePointer<Float>?, output: UnsafeMutablePointer<Float>?, frames: UInt32,
    xrun: Int32
) {
    guard let user, let output else { return }
    Unmanaged<LiveEngine>.fromOpaque(user).takeUnretainedValue().process(input, output, frames: Int(frames), xrun: xrun != 0)
}
