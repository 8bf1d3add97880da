import CSndFile
import Glibc

/// What a RIFF WAVE header promises. libsndfile quietly shortens a WAV whose data chunk runs past the end
/// of the file; reading the promise ourselves lets a cut-off file be reported as truncated.
enum WaveHeader {
    /// Data sizes written by streaming tools that did not know the length yet; they promise nothing.
    private static let placeholderSizes: Set<UInt32> = [0, 0xFFFF_FFFF]

    /// Frames the data chunk announces, for a little-endian RIFF WAVE file; nil for other files
    /// or when the header cannot be walked.
    static func announcedFrames(path: String, format: AudioFormat) -> Int? {
        let waveContainers = [Int32(SF_FORMAT_WAV), Int32(SF_FORMAT_WAVEX)]
        guard waveContainers.contains(format.container), let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        guard readTag(file) == "RIFF", readUInt32(file) != nil, readTag(file) == "WAVE" else { return nil }
        var blockAlign: UInt16?
        while let tag = readTag(file), let size = readUInt32(file) {
            if tag == "data" {
                guard let blockAlign, blockAlign > 0, !placeholderSizes.contains(size) else { return nil }
                return Int(size) / Int(blockAlign)
            }
            let start = ftell(file)
            if tag == "fmt " {
                guard fseek(file, 12, SEEK_CUR) == 0, let align = readUInt16(file) else { return nil }
                blockAlign = align
            }
            let paddedSize = Int(size) + Int(size & 1)
            guard fseek(file, start + paddedSize, SEEK_SET) == 0 else { return nil }
        }
        return nil
    }

    private static func readTag(_ file: UnsafeMutablePointer<FILE>) -> String? {
        readBytes(file, count: 4).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func readUInt32(_ file: UnsafeMutablePointer<FILE>) -> UInt32? {
        readBytes(file, count: 4).map { $0.reversed().reduce(0) { $0 << 8 | UInt32($1) } }
    }

    private static func readUInt16(_ file: UnsafeMutablePointer<FILE>) -> UInt16? {
        readBytes(file, count: 2).map { UInt16($0[0]) | UInt16($0[1]) << 8 }
    }

    private static func readBytes(_ file: UnsafeMutablePointer<FILE>, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        return fread(&bytes, 1, count, file) == count ? bytes : nil
    }
}
