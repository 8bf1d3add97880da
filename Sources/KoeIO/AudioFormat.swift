import CSndFile

/// How samples are stored in an audio file: a container (libsndfile's major format, such as WAV or FLAC)
/// and the encoding of each sample in it (libsndfile's subtype, such as 16-bit PCM or Vorbis).
package struct AudioFormat: Equatable, Sendable, CustomStringConvertible {
    /// libsndfile's `SF_FORMAT_*` major format code.
    let container: Int32
    /// libsndfile's `SF_FORMAT_*` subtype code.
    let encoding: Int32

    init(container: Int32, encoding: Int32) {
        self.container = container
        self.encoding = encoding
    }

    /// libsndfile's `SF_INFO.format` value: container and encoding together.
    init(code: Int32) {
        self.init(container: code & Int32(SF_FORMAT_TYPEMASK), encoding: code & Int32(SF_FORMAT_SUBMASK))
    }

    var code: Int32 { container | encoding }

    /// libsndfile's own names, such as "WAV (Microsoft), Signed 16 bit PCM".
    package var description: String {
        let containerName = FormatTable.majors.first { $0.code == container }?.name ?? "unknown container"
        let encodingName = FormatTable.subtypes.first { $0.code == encoding }?.name ?? "unknown encoding"
        return "\(containerName), \(encodingName)"
    }

    /// Whether libsndfile can write this format with `channels` channels at `sampleRate`.
    func canWrite(sampleRate: Int, channels: Int) -> Bool {
        var info = SF_INFO()
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channels)
        info.format = code
        return sf_format_check(&info) != 0
    }

    /// Bits of an integer PCM encoding; nil for floats and compressed codecs.
    var integerBits: Int? {
        switch encoding {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8): return 8
        case Int32(SF_FORMAT_PCM_16): return 16
        case Int32(SF_FORMAT_PCM_24): return 24
        case Int32(SF_FORMAT_PCM_32): return 32
        default: return nil
        }
    }

    /// The largest sample value written without clipping: the top integer code, (2^(bits-1) - 1) / 2^(bits-1),
    /// for integer PCM (as it is quantised here, like sox), and 1 for floats and codecs.
    package var fullScale: Double {
        integerBits.map(RawPCMFormat.integerFullScale) ?? 1
    }

    /// The sample encoding of this format, when it is one a caller can ask for by name.
    package var sampleEncoding: SampleEncoding? {
        SampleEncoding.allCases.first { $0.subtypes.contains(encoding) }
    }

    /// The format for writing `path`, chosen by its extension from libsndfile's table of formats.
    /// Without an explicit `encoding`, samples are the `preferred` encoding where the container holds it,
    /// else 16-bit PCM where it holds PCM, and otherwise the container's own codec (Vorbis for .ogg).
    package static func forWriting(
        _ path: String, sampleRate: Int, channels: Int, encoding: SampleEncoding? = nil,
        preferred: SampleEncoding? = nil
    ) throws -> AudioFormat {
        guard let container = FormatTable.container(forExtension: fileExtension(of: path)) else {
            throw IOError.unknownAudioFormat(path: path)
        }
        let fallback = (preferred?.subtypes ?? []) + SampleEncoding.pcm16.subtypes + FormatTable.subtypes.map(\.code)
        let candidates = encoding.map { $0.subtypes } ?? fallback
        for subtype in candidates {
            let format = AudioFormat(container: container, encoding: subtype)
            if format.canWrite(sampleRate: sampleRate, channels: channels) { return format }
        }
        throw IOError.unsupportedEncoding(path: path, encoding: encoding?.rawValue ?? "\(channels)-channel \(sampleRate) Hz")
    }

    private static func fileExtension(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...]).lowercased()
    }
}

/// The sample encodings a caller may ask for by name.
package enum SampleEncoding: String, CaseIterable, Sendable {
    case pcm8, pcm16, pcm24, pcm32, float32, float64

    /// libsndfile subtypes for this encoding, in order of preference (WAV holds 8-bit PCM only unsigned).
    var subtypes: [Int32] {
        switch self {
        case .pcm8: return [Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8)]
        case .pcm16: return [Int32(SF_FORMAT_PCM_16)]
        case .pcm24: return [Int32(SF_FORMAT_PCM_24)]
        case .pcm32: return [Int32(SF_FORMAT_PCM_32)]
        case .float32: return [Int32(SF_FORMAT_FLOAT)]
        case .float64: return [Int32(SF_FORMAT_DOUBLE)]
        }
    }
}

/// libsndfile's tables of major formats and subtypes, read once.
private enum FormatTable {
    struct Entry {
        let code: Int32
        let name: String
        let fileExtension: String
    }

    static let majors = entries(count: SFC_GET_FORMAT_MAJOR_COUNT, entry: SFC_GET_FORMAT_MAJOR)
    static let subtypes = entries(count: SFC_GET_FORMAT_SUBTYPE_COUNT, entry: SFC_GET_FORMAT_SUBTYPE)

    /// Common extensions libsndfile's table spells differently.
    private static let aliases = ["ogg": "oga", "aif": "aiff", "aifc": "aiff", "mp3": "m1a"]

    static func container(forExtension fileExtension: String) -> Int32? {
        guard !fileExtension.isEmpty else { return nil }
        let wanted = aliases[fileExtension] ?? fileExtension
        return majors.first { $0.fileExtension == wanted }?.code
    }

    private static func entries(count countCommand: Int, entry entryCommand: Int) -> [Entry] {
        var count: Int32 = 0
        sf_command(nil, Int32(countCommand), &count, Int32(MemoryLayout<Int32>.size))
        return (0..<count).map { index in
            var info = SF_FORMAT_INFO()
            info.format = index
            sf_command(nil, Int32(entryCommand), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
            return Entry(
                code: info.format,
                name: info.name.map { String(cString: $0) } ?? "",
                fileExtension: info.extension.map { String(cString: $0) } ?? ""
            )
        }
    }
}
