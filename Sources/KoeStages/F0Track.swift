/// F0 given frame by frame that replaces the analysed F0, as `koe analyze` writes it (`f0.npy`): one value in
/// Hz for each analysis frame of the input, 0 for an unvoiced frame.
///
/// Only the F0 is replaced: the spectral envelope and the aperiodicity are still analysed from the input, so a
/// frame the track calls voiced where the input has no voice is excited through the input's aperiodicity.
/// The ratio, median and range settings, the pitch curve, snapping and vibrato apply to the given F0.
public struct F0Track: Sendable, Equatable {
    /// F0 in Hz for frames 0, 1, 2, …; 0 where unvoiced.
    public let values: [Double]
    /// Names the track in messages: the file it came from, or "the F0 track".
    package let name: String

    /// Throws for no values, or a value that is not finite or is negative; the message names the frame.
    public init(values: [Double], name: String = "the F0 track") throws(KoeError) {
        if let problem = Self.firstProblem(in: values) {
            throw KoeError.invalidArgument("\(name): " + (problem.index.map { "frame \($0): \(problem.reason)" } ?? problem.reason))
        }
        self.values = values
        self.name = name
    }

    /// What is wrong with a list of values, and at which index; nil when they make a track.
    package static func firstProblem(in values: [Double]) -> (index: Int?, reason: String)? {
        guard !values.isEmpty else { return (nil, "holds no F0 values") }
        if let index = values.firstIndex(where: { !($0.isFinite && $0 >= 0) }) {
            return (index, "\(values[index]) is not an F0 in Hz (0 or more)")
        }
        return nil
    }

    /// The given F0 of `frame`; nil past the end of the track.
    func f0(atFrame frame: Int) -> Double? {
        values.indices.contains(frame) ? values[frame] : nil
    }

    /// The median of the voiced values, in Hz; nil when none is voiced.
    package var medianVoicedF0: Double? {
        let voiced = values.filter { $0 > 0 }.sorted()
        return voiced.isEmpty ? nil : voiced[voiced.count / 2]
    }
}
