import Foundation
import Glibc
import KoeIO

/// One line of the manifest: what became of one input.
package struct BatchRecord: Codable, Equatable {
    package enum Status: String, Codable {
        case ok, failed, skipped
    }

    var input: String
    /// Nil when the input has no place in the output folder.
    var output: String?
    package var status: Status
    /// Why the input failed; nil otherwise.
    var error: String?
    /// Length of the input; nil when it could not be read.
    package var audioSeconds: Double?
    /// Wall-clock time spent on the input, opening and writing included.
    var processingSeconds: Double
    var realTimeFactor: Double?
    /// Output samples clipped at full scale.
    var clippedSamples: Int?

    package init(item: BatchItem, status: Status, error: String? = nil, audioSeconds: Double? = nil, processingSeconds: Double = 0,
         clippedSamples: Int? = nil) {
        input = item.input
        output = item.output
        self.status = status
        self.error = error
        self.audioSeconds = audioSeconds
        self.processingSeconds = processingSeconds
        realTimeFactor = status == .ok ? audioSeconds.map { $0 > 0 ? processingSeconds / $0 : 0 } : nil
        self.clippedSamples = clippedSamples
    }

    private enum CodingKeys: String, CodingKey {
        case input, output, status, error, audioSeconds = "audio_seconds", processingSeconds = "processing_seconds"
        case realTimeFactor = "real_time_factor", clippedSamples = "clipped_samples"
    }

    /// Every key on every line, null where there is no value, so each line reads the same.
    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(input, forKey: .input)
        try container.encode(output, forKey: .output)
        try container.encode(status, forKey: .status)
        try container.encode(error, forKey: .error)
        try container.encode(audioSeconds, forKey: .audioSeconds)
        try container.encode(processingSeconds, forKey: .processingSeconds)
        try container.encode(realTimeFactor, forKey: .realTimeFactor)
        try container.encode(clippedSamples, forKey: .clippedSamples)
    }
}

/// The manifest of a batch, a JSON Lines file: one record is appended and flushed to disk as each input
/// completes, so a crash loses at most the inputs in flight. Only the batch's main process writes it.
package final class BatchManifest {
    let path: String
    private let descriptor: Int32
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The manifest a batch keeps in its output folder; each shard keeps its own, so shards running at once
    /// (on a cluster's shared file system, too) never write to the same file.
    package static func defaultPath(in folder: String, shard: BatchShard?) -> String {
        let name = shard.map { "koe-manifest.shard-\($0.index)-of-\($0.count).jsonl" } ?? "koe-manifest.jsonl"
        return folder + "/" + name
    }

    /// Every manifest a batch may have left in `folder`, sharded or not.
    package static func defaultPaths(in folder: String) -> [String] {
        let names = (try? BatchInputs.entries(of: folder)) ?? []
        return names.filter { $0.hasPrefix("koe-manifest") && $0.hasSuffix(".jsonl") }.map { folder + "/" + $0 }
    }

    /// Opens `path` for appending, creating it if needed. A last line cut short by a crash is ended first,
    /// so the next record starts on a line of its own.
    package init(path: String) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw IOError.writeFailed(path: path, reason: String(cString: strerror(errno)))
        }
        if !endsWithNewline() { try write(Array("\n".utf8)) }
    }

    deinit {
        close(descriptor)
    }

    /// Appends `record` as one line in one write; `durable` waits until it is on disk.
    package func append(_ record: BatchRecord, durable: Bool) throws {
        try write(Array(try encoder.encode(record)) + Array("\n".utf8))
        if durable { try synchronize() }
    }

    /// Waits until everything appended is on disk.
    package func synchronize() throws {
        guard fsync(descriptor) == 0 else {
            throw IOError.writeFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// The last record about each output in the manifests at `paths`. Lines that are not records (one cut
    /// short by a crash, or being written by another shard right now) are passed over.
    package static func lastRecords(in paths: [String]) -> [String: BatchRecord] {
        let decoder = JSONDecoder()
        var records: [String: BatchRecord] = [:]
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            for line in data.split(separator: UInt8(ascii: "\n")) {
                guard let record = try? decoder.decode(BatchRecord.self, from: line), let output = record.output else { continue }
                records[output] = record
            }
        }
        return records
    }

    private func endsWithNewline() -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size > 0 else { return true }
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { return true }
        defer { close(reader) }
        var last: UInt8 = 0
        return pread(reader, &last, 1, status.st_size - 1) != 1 || last == UInt8(ascii: "\n")
    }

    private func write(_ bytes: [UInt8]) throws {
        do {
            try Descriptors.writeAll(bytes, to: descriptor)
        } catch {
            throw IOError.writeFailed(path: path, reason: error.message)
        }
    }
}
