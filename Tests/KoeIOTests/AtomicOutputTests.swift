import Foundation
import Testing
@testable import KoeIO
import TestSupport

@Suite struct AtomicOutputTests {
    let folder = TemporaryFolder()

    private struct Interrupted: Error {}

    private func contentsOf(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func destinationAppearsOnlyOnCommit() throws {
        let destination = folder.file("out.txt")
        let output = try AtomicOutput(destination: destination)
        #expect(output.temporaryPath.hasPrefix(folder.path + "/.koe-"))
        #expect(output.temporaryPath.hasSuffix(".out.txt"))
        try Files.write(Array("done".utf8), to: output.temporaryPath)
        #expect(!FileManager.default.fileExists(atPath: destination))
        try output.commit()
        #expect(contentsOf(destination) == "done")
        #expect(folder.contents() == ["out.txt"])
    }

    @Test func failedWriteLeavesNothingAndKeepsTheOldFile() throws {
        let destination = folder.file("out.txt")
        try Files.write(Array("old".utf8), to: destination)
        #expect(throws: Interrupted.self) {
            try AtomicOutput.write(to: destination) { temporary in
                try Files.write(Array("half".utf8), to: temporary)
                throw Interrupted()
            }
        }
        #expect(contentsOf(destination) == "old")
        #expect(folder.contents() == ["out.txt"])
    }

    @Test func abandonedOutputIsRemoved() throws {
        do {
            let output = try AtomicOutput(destination: folder.file("out.txt"))
            try Files.write(Array("half".utf8), to: output.temporaryPath)
        }
        #expect(folder.contents().isEmpty)
    }

    @Test func writeErrorsNameTheDestinationNotTheTemporaryFile() throws {
        let destination = folder.file("out.wav")
        #expect(throws: IOError.writeFailed(path: destination, reason: "disk full")) {
            try AtomicOutput.write(to: destination) { temporary in
                throw IOError.writeFailed(path: temporary, reason: "disk full")
            }
        }
        #expect(folder.contents().isEmpty)
    }

    @Test func audioFormatFollowsTheDestinationExtension() throws {
        let destination = folder.file("tone.flac")
        try AtomicOutput.write(to: destination) { temporary in
            let file = try AudioFile(writing: temporary, sampleRate: 8000, channels: 1)
            try file.write(channels: [[0.1, 0.2, 0.3]])
            try file.close()
        }
        #expect(try AudioFile(reading: destination).format.description.hasPrefix("FLAC"))
    }

    @Test func missingFolderIsReported() {
        let missing = folder.file("missing")
        #expect(throws: IOError.folderNotFound(path: missing)) { try AtomicOutput(destination: missing + "/out.wav") }
    }

    @Test func folderDestinationIsRefused() {
        #expect(throws: IOError.notARegularFile(path: folder.path)) { try AtomicOutput(destination: folder.path) }
    }

    @Test func unwritableFolderIsReported() throws {
        guard let locked = folder.unwritableFolder() else { return }
        #expect { try AtomicOutput(destination: locked + "/out.wav") } throws: { error in
            guard case IOError.unwritableFolder(locked, _)? = error as? IOError else { return false }
            return true
        }
    }

    @Test func bareNamesLiveInTheCurrentFolder() {
        #expect(AtomicOutput.folder(of: "out.wav") == ".")
        #expect(AtomicOutput.folder(of: "/out.wav") == "/")
        #expect(AtomicOutput.folder(of: "a/b/out.wav") == "a/b")
    }

    // MARK: Sets

    @Test func setAppearsWholeOnCommit() throws {
        let outputs = try AtomicOutputSet(folder: folder.file("a/b") + "/", names: ["one.txt", "two.txt"])
        try outputs.fill("one.txt") { try Files.write(Array("1".utf8), to: $0) }
        try outputs.fill("two.txt") { try Files.write(Array("2".utf8), to: $0) }
        #expect(folder.contents(of: "a/b").allSatisfy { $0.hasPrefix(".koe-") })
        try outputs.commit()
        #expect(folder.contents(of: "a/b") == ["one.txt", "two.txt"])
        #expect(contentsOf(folder.file("a/b/two.txt")) == "2")
    }

    @Test func failedSetLeavesNothingAndRemovesTheFoldersItMade() throws {
        let outputs = try AtomicOutputSet(folder: folder.file("a/b"), names: ["one.txt", "two.txt"])
        try outputs.fill("one.txt") { try Files.write(Array("1".utf8), to: $0) }
        #expect(throws: Interrupted.self) { try outputs.fill("two.txt") { _ in throw Interrupted() } }
        #expect(folder.contents().isEmpty)
    }

    @Test func abandonedSetKeepsAFolderThatExisted() throws {
        try Files.write(Array("keep".utf8), to: folder.file("old.txt"))
        do {
            let outputs = try AtomicOutputSet(folder: folder.path, names: ["one.txt"])
            try outputs.fill("one.txt") { try Files.write(Array("1".utf8), to: $0) }
        }
        #expect(folder.contents() == ["old.txt"])
    }

    @Test func setFolderThatIsAFileIsRefused() throws {
        try Files.write(Array("x".utf8), to: folder.file("file"))
        #expect(throws: IOError.notAFolder(path: folder.file("file"))) {
            try AtomicOutputSet(folder: folder.file("file"), names: ["one.txt"])
        }
        #expect(throws: IOError.notAFolder(path: folder.file("file"))) {
            try AtomicOutputSet(folder: folder.file("file/sub"), names: ["one.txt"])
        }
        #expect(folder.contents() == ["file"])
    }
}
