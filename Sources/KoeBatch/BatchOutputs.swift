import Foundation
import Glibc
import Koe
import KoeIO

/// `--shard I/N`: the inputs at positions I-1, I-1+N, I-1+2N, ... of the sorted list.
package struct BatchShard: Sendable {
    let index: Int
    let count: Int

    /// `I/N`, with N at least 1 and I from 1 to N; throws naming what is wrong.
    package init(parsing argument: String) throws(KoeError) {
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw .invalidArgument("malformed share '\(argument)': expected I/N, the I-th of N shares, such as 2/8")
        }
        guard count >= 1, (1...count).contains(index) else {
            throw .invalidArgument("share \(argument) does not exist: N must be at least 1 and I from 1 to N")
        }
        self.index = index
        self.count = count
    }

    package func share(of items: [BatchItem]) -> [BatchItem] {
        stride(from: index - 1, to: items.count, by: count).map { items[$0] }
    }
}

/// `--list FILE`: one path a line; blank lines are passed over, a carriage return before the newline dropped.
package enum BatchListFile {
    package static func paths(in path: String) throws -> [String] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard FileIdentity(path: path)?.isRegularFile == true, let contents = FileManager.default.contents(atPath: path) else {
                throw IOError.fileNotFound(path: path)
            }
            data = contents
        }
        return data.split(separator: UInt8(ascii: "\n")).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }.filter { !$0.isEmpty }
    }
}

/// The batch's outputs on disk.
package enum BatchOutputs {
    /// The earlier record saying `item`'s output was completed, if there is one and the output is still there.
    static func completedRecord(of item: BatchItem, in records: [String: BatchRecord]) -> BatchRecord? {
        guard let output = item.output, let record = records[output], record.status != .failed,
              let identity = FileIdentity(path: output), identity.isRegularFile || identity.isFolder else { return nil }
        return record
    }

    /// Why `item`'s output cannot be written, when that shows before converting.
    static func problem(writing item: BatchItem) -> String? {
        guard let output = item.output else { return nil }
        if let existing = FileIdentity(path: output), existing.isSameFile(as: FileIdentity(path: item.input)) {
            return "\(item.input): input and output are the same file"
        }
        return makeFolder(AtomicOutput.folder(of: output))
    }

    /// Creates `folder` and its missing parents; nil when done, else why not.
    package static func makeFolder(_ folder: String) -> String? {
        if FileIdentity(path: folder)?.isFolder == true { return nil }
        let parent = AtomicOutput.folder(of: folder)
        if parent != folder, let problem = makeFolder(parent) { return problem }
        guard mkdir(folder, 0o777) == 0 || (errno == EEXIST && FileIdentity(path: folder)?.isFolder == true) else {
            return "\(folder): cannot create this folder (\(String(cString: strerror(errno))))"
        }
        return nil
    }

    /// Removes the temporary files a killed run left beside these outputs: `.koe-<random>.<name>`, as
    /// `AtomicOutput` names them. Only names of this batch's own outputs are touched, so a shard running at
    /// the same time in the same folder keeps its files.
    package static func removeStaleTemporaryFiles(besides outputs: [String]) {
        let namesByFolder = Dictionary(grouping: outputs, by: AtomicOutput.folder(of:))
            .mapValues { Set($0.map { $0.split(separator: "/").last.map(String.init) ?? $0 }) }
        for (folder, names) in namesByFolder {
            for entry in (try? BatchInputs.entries(of: folder)) ?? [] {
                guard let name = AtomicOutput.destinationName(ofTemporaryFile: entry), names.contains(name) else { continue }
                unlink(folder + "/" + entry)
            }
        }
    }
}

extension BatchOutputs {
    /// Records the items whose fate is known without converting: an output recorded done in `earlier` and still
    /// there is skipped, an item that cannot be converted (no output, an output that cannot be written) fails.
    /// Returns the rest, to convert.
    package static func recordKnownOutcomes(
        of items: [BatchItem], earlier: [String: BatchRecord], record: (BatchRecord) throws -> Void
    ) throws -> [BatchItem] {
        var toConvert: [BatchItem] = []
        for item in items {
            if let done = completedRecord(of: item, in: earlier) {
                try record(BatchRecord(item: item, status: .skipped, audioSeconds: done.audioSeconds))
            } else if let problem = item.problem ?? problem(writing: item) {
                try record(BatchRecord(item: item, status: .failed, error: problem))
            } else {
                toConvert.append(item)
            }
        }
        return toConvert
    }
}
