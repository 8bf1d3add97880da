import Foundation
import Koe
import KoeIO
import KoeWorld

extension WorldParameters {
    /// Reads and cross-checks a folder written by `koe analyze` (or laid out the same way by other tools): f0.npy,
    /// sp.npy, ap.npy, meta.json, and time.npy when present.
    package init(folder: String) throws(KoeError) {
        self = try KoeError.wrapping { try AnalysisFolder.read(folder) }
    }
}

/// The files of an analysis folder, which `koe analyze` and `koe batch --analyze` write and `koe synth` reads.
/// Here rather than in Koe: meta.json goes through Foundation's JSON, and Koe links no Foundation, so that the
/// plugins built on it stay small.
package enum AnalysisFolder {
    static let f0Name = "f0.npy"
    static let timeName = "time.npy"
    static let spectrogramName = "sp.npy"
    static let aperiodicityName = "ap.npy"
    static let metaName = "meta.json"
    package static let names = [f0Name, timeName, spectrogramName, aperiodicityName, metaName]

    /// Temporary files for the folder's, which `write` fills and moves into place: taken before a long analysis,
    /// so a folder that cannot be written fails first.
    package static func outputs(in folder: String) throws -> AtomicOutputSet {
        try AtomicOutputSet(folder: folder, names: names)
    }

    // MARK: Writing

    /// Writes every file through `outputs` (from `outputs(in:)`), then moves them all into place.
    package static func write(_ parameters: WorldParameters, to outputs: AtomicOutputSet) throws {
        let arrays = [
            f0Name: Npy(vector: parameters.contour.f0),
            timeName: Npy(vector: parameters.contour.time),
            spectrogramName: npy(parameters.spectrogram),
            aperiodicityName: npy(parameters.aperiodicity),
        ]
        for (name, array) in arrays {
            try outputs.fill(name) { try array.write(to: $0) }
        }
        let json = try encoder.encode(parameters.meta) + Data("\n".utf8)
        // Written in place: `path` is already the set's temporary file, and FileManager's createFile would add a
        // temporary of its own (`.dat.nosync…`), left behind when the process is killed mid-write.
        try outputs.fill(metaName) { path in
            do {
                try json.write(to: URL(fileURLWithPath: path))
            } catch {
                throw IOError.writeFailed(path: path, reason: "could not write JSON")
            }
        }
        try outputs.commit()
    }
    private static func npy(_ matrix: Matrix) -> Npy {
        Npy(rows: matrix.rows, columns: matrix.columns, values: matrix.storage)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    // MARK: Reading

    /// Reads and cross-checks a folder written by `koe analyze` (or laid out the same way by other tools).
    static func read(_ folder: String) throws -> WorldParameters {
        try requireFolder(folder)
        let path = { (name: String) in folder.hasSuffix("/") ? folder + name : folder + "/" + name }
        let meta = try readMeta(path(metaName))
        let f0 = try Npy.read(from: path(f0Name))
        let spectrogram = try Npy.read(from: path(spectrogramName))
        let aperiodicity = try Npy.read(from: path(aperiodicityName))

        let frames = try requireVector(f0, path: path(f0Name))
        try requireFrames(spectrogram, frames: frames, path: path(spectrogramName))
        try requireFrames(aperiodicity, frames: frames, path: path(aperiodicityName))
        guard aperiodicity.columns == spectrogram.columns else {
            throw KoeError.badInput(source: path(aperiodicityName), reason:
                "has \(aperiodicity.columns) bins a frame but sp.npy has \(spectrogram.columns)")
        }
        try requireConsistent(meta, frames: frames, bins: spectrogram.columns, metaPath: path(metaName),
                              spectrogramPath: path(spectrogramName))
        if FileManager.default.fileExists(atPath: path(timeName)) {
            let time = try Npy.read(from: path(timeName))
            guard try requireVector(time, path: path(timeName)) == frames else {
                throw KoeError.badInput(source: path(timeName), reason: "has \(time.rows) values but f0.npy has \(frames)")
            }
        }
        try requireValues(f0, path: path(f0Name), what: "an F0 in Hz (0 or more)") { $0.isFinite && $0 >= 0 }
        try requireValues(spectrogram, path: path(spectrogramName), what: "a power above 0") { $0.isFinite && $0 > 0 }
        try requireValues(aperiodicity, path: path(aperiodicityName), what: "a finite number") { $0.isFinite }

        return WorldParameters(
            contour: F0Contour(f0: f0.values, framePeriod: meta.framePeriod),
            spectrogram: try Matrix(rows: frames, columns: spectrogram.columns, storage: spectrogram.values),
            aperiodicity: try Matrix(rows: frames, columns: aperiodicity.columns, storage: aperiodicity.values),
            meta: meta)
    }

    private static func requireFolder(_ folder: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw IOError.folderNotFound(path: folder)
        }
        guard isFolder.boolValue else { throw IOError.notAFolder(path: folder) }
    }

    private static func readMeta(_ path: String) throws -> AnalysisMeta {
        guard FileManager.default.fileExists(atPath: path) else { throw IOError.fileNotFound(path: path) }
        guard let data = FileManager.default.contents(atPath: path) else { throw IOError.permissionDenied(path: path) }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let meta: AnalysisMeta
        do {
            meta = try decoder.decode(AnalysisMeta.self, from: data)
        } catch let error as DecodingError {
            throw KoeError.badInput(source: path, reason: explain(error))
        }
        guard SignalRequirements.sampleRates.contains(meta.sampleRate) else {
            throw KoeError.badInput(source: path, reason: "sample_rate \(meta.sampleRate) Hz is outside 8000 to 192000 Hz")
        }
        guard meta.framePeriod.isFinite && meta.framePeriod > 0 else {
            throw KoeError.badInput(source: path, reason: "frame_period must be a positive number of milliseconds")
        }
        return meta
    }

    private static func explain(_ error: DecodingError) -> String {
        func name(_ path: [CodingKey], _ key: CodingKey? = nil) -> String {
            let keys = (path + (key.map { [$0] } ?? [])).map(\.stringValue)
            return "\"" + keys.map(snakeCase).joined(separator: ".") + "\""
        }
        switch error {
        case .keyNotFound(let key, let context): return "lacks \(name(context.codingPath, key))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(name(context.codingPath)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "is not valid JSON" : "\(name(context.codingPath)) is not valid"
        @unknown default: return "cannot be read"
        }
    }

    /// `sampleRate` as meta.json spells it: `sample_rate`.
    private static func snakeCase(_ key: String) -> String {
        key.reduce(into: "") { result, character in
            if character.isUppercase { result += "_" + character.lowercased() } else { result.append(character) }
        }
    }

    /// The number of values in a 1-D array with at least one.
    @discardableResult
    private static func requireVector(_ array: Npy, path: String) throws -> Int {
        guard array.isVector else {
            throw KoeError.badInput(source: path, reason: "expected a 1-D array (one value a frame), found shape \(array.shapeText)")
        }
        guard array.rows > 0 else { throw KoeError.badInput(source: path, reason: "holds no frames") }
        return array.rows
    }

    private static func requireFrames(_ array: Npy, frames: Int, path: String) throws {
        guard array.shape.count == 2 else {
            throw KoeError.badInput(source: path, reason: "expected a 2-D array (frames x bins), found shape \(array.shapeText)")
        }
        guard array.rows == frames else {
            throw KoeError.badInput(source: path, reason: "has \(array.rows) frames but f0.npy has \(frames)")
        }
        let fftSize = (array.columns - 1) * 2
        guard array.columns >= 2, fftSize & (fftSize - 1) == 0 else {
            throw KoeError.badInput(source: path, reason:
                "has \(array.columns) bins a frame; expected fft_size / 2 + 1 for a power-of-two fft_size")
        }
    }

    private static func requireConsistent(
        _ meta: AnalysisMeta, frames: Int, bins: Int, metaPath: String, spectrogramPath: String
    ) throws {
        if let fftSize = meta.fftSize, fftSize / 2 + 1 != bins || fftSize % 2 != 0 {
            throw KoeError.badInput(source: spectrogramPath, reason:
                "has \(bins) bins a frame but meta.json's fft_size \(fftSize) needs \(fftSize / 2 + 1)")
        }
        let outputSamples = Double(frames) * meta.framePeriod * Double(meta.sampleRate) / 1000
        guard outputSamples <= Double(Synthesis.longestOutput) else {
            throw KoeError.badInput(source: metaPath, reason:
                "frame_period \(meta.framePeriod) ms over \(frames) frames makes a waveform too long to hold")
        }
        if let metaFrames = meta.frames, metaFrames != frames {
            throw KoeError.badInput(source: metaPath, reason: "announces \(metaFrames) frames but f0.npy has \(frames)")
        }
    }

    private static func requireValues(_ array: Npy, path: String, what: String, _ isValid: (Double) -> Bool) throws {
        guard let index = array.values.firstIndex(where: { !isValid($0) }) else { return }
        let place = array.isVector ? "frame \(index)" : "frame \(index / array.columns), bin \(index % array.columns)"
        throw KoeError.badInput(source: path, reason: "value \(array.values[index]) at \(place) is not \(what)")
    }
}
