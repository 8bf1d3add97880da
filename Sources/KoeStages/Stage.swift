/// A streaming processor of one channel: the unit a conversion chain is made of.
///
/// The contract every stage keeps:
/// - Push the channel's samples in order, in chunks of any size (empty chunks included), with
///   `process(_:isFinal:)`; each call returns whatever output is ready, possibly nothing.
/// - Stages are self-aligning: the concatenation of all outputs is exactly the aligned result. A stage with
///   internal delay trims its own start, and drains its tail on the call whose `isFinal` is true.
/// - The outputs of one stream total `(input length × lengthRatio).rounded()` samples, and they do not
///   depend on how the input was chunked.
/// - The call with `isFinal: true` ends the stream; a stage serves one stream of one channel.
public protocol Stage: AnyObject {
    /// How many input samples past sample n must arrive before output sample n is available.
    var latency: Int { get }

    /// Output length over input length: 1 unless the stage changes the duration.
    var lengthRatio: Double { get }

    /// Takes the next chunk of input and returns the output that is ready; throws when the input cannot be
    /// processed (the vocoder refuses non-finite samples and streams shorter than one analysis frame).
    func process(_ input: [Double], isFinal: Bool) throws -> [Double]
}

extension Stage {
    public var lengthRatio: Double { 1 }
}

/// Why a stage could not be built from the options it was given. Messages are written for the person at the shell.
public struct StageError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
