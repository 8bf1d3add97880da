import Foundation
import Glibc
import Testing

/// `koe batch` killed part way: outputs are whole or absent, a rerun finishes the work, and a worker that
/// dies takes only its own file down.
@Suite struct BatchCrashTests {
    let koe = CommandRunner()
    let inputs = (0..<16).map { String(format: "in/clip%02d.wav", $0) }

    private func command(jobs: Int = 2) -> [String] {
        ["batch", "-o", "out", "-r", "in", "--pitch", "1.2", "--jobs", String(jobs), "--quiet"]
    }

    init() throws {
        for (index, name) in inputs.enumerated() {
            try koe.writeSpeechSnippet(to: name, seconds: 0.2, index: index)
        }
    }

    /// Killed midway with a few files done: what is there is whole, and a rerun finishes the rest.
    @Test func killedMidwayThenRerun() throws {
        let done = try killMidway(command())
        for name in inputs where FileManager.default.fileExists(atPath: koe.path(output(of: name))) {
            try koe.expectComplete(output(of: name), sameLengthAs: name)
        }
        // Temporary files as a killed worker leaves them: one of this batch's, and one of somebody else's.
        koe.write([1, 2, 3], to: "out/.koe-1x2y3z.clip05.wav")
        koe.write([1, 2, 3], to: "out/.koe-1x2y3z.other.wav")

        let rerun = try koe.run(command())
        #expect(rerun.status == 0, "\(rerun.standardError)")
        for name in inputs {
            try koe.expectComplete(output(of: name), sameLengthAs: name)
        }
        #expect(koe.hiddenFiles(under: "out") == [".koe-1x2y3z.other.wav"])
        let records = try koe.manifest("out/koe-manifest.jsonl")
        #expect(Set(records.map(\.input)) == Set(inputs))
        #expect(inputs.allSatisfy { ["ok", "skipped"].contains(records.last(for: $0)?.status) })
        for record in done where record.status == "ok" {
            #expect(records.last(for: record.input)?.status == "skipped", "\(record.input) was converted twice")
        }
    }

    /// The same for `--analyze`: each folder is whole or absent after the kill, and the rerun completes the rest.
    @Test func analysisKilledMidwayThenRerun() throws {
        let command = ["batch", "--analyze", "-o", "out", "-r", "in", "--jobs", "2", "--quiet"]
        let done = try killMidway(command)

        let rerun = try koe.run(command)
        #expect(rerun.status == 0, "\(rerun.standardError)")
        let files = ["f0.npy", "time.npy", "sp.npy", "ap.npy", "meta.json"]
        for name in inputs {
            let folder = String(output(of: name).dropLast(".wav".count))
            #expect(files.allSatisfy { !koe.bytes(of: folder + "/" + $0).isEmpty }, "\(folder) incomplete")
        }
        #expect(koe.hiddenFiles(under: "out").isEmpty)
        let records = try koe.manifest("out/koe-manifest.jsonl")
        for record in done where record.status == "ok" {
            #expect(records.last(for: record.input)?.status == "skipped", "\(record.input) was analyzed twice")
        }
    }

    /// Killing the batch alone: its workers notice, remove their temporary files and stop.
    @Test func killedBatchTakesItsWorkersAlong() throws {
        let batch = try koe.start(command())
        try waitForRecords(atLeast: 2, while: batch)
        let workers = childProcesses(of: batch.processIdentifier)
        #expect(!workers.isEmpty)
        kill(batch.processIdentifier, SIGKILL)
        batch.waitUntilExit()
        let deadline = Date().addingTimeInterval(10)
        while workers.contains(where: { kill($0, 0) == 0 && !isZombie($0) }) && Date() < deadline { usleep(10_000) }
        #expect(workers.allSatisfy { kill($0, 0) != 0 || isZombie($0) }, "workers outlived their batch")
        #expect(koe.hiddenFiles(under: "out").isEmpty)
    }

    /// A worker killed while converting stands for a crash on a strange file: that file fails with the
    /// reason, a new worker converts the rest.
    @Test func deadWorkerFailsOnlyItsFile() throws {
        let batch = try koe.start(command(jobs: 1))
        try waitForRecords(atLeast: 2, while: batch)
        let worker = try #require(childProcesses(of: batch.processIdentifier).first)
        kill(worker, SIGKILL)
        batch.waitUntilExit()
        #expect(batch.terminationStatus == 1)

        let records = try koe.manifest("out/koe-manifest.jsonl")
        #expect(Set(records.map(\.input)) == Set(inputs))
        let failed = records.filter { $0.status == "failed" }
        #expect(failed.count == 1)
        #expect(failed.first?.error?.contains("signal 9") == true, "\(failed.first?.error ?? "")")
        #expect(records.filter { $0.status == "ok" }.count == inputs.count - 1)
        #expect(koe.hiddenFiles(under: "out").isEmpty)
    }

    // MARK: Helpers

    /// Files found under `in` with --recursive mirror their path inside it.
    private func output(of input: String) -> String {
        "out/" + input.dropFirst("in/".count)
    }

    /// Runs a batch and, once it has recorded a few files, SIGKILLs it and its workers at once, as a power cut would:
    /// the manifest's records then, fewer than the inputs.
    private func killMidway(_ command: [String]) throws -> [ManifestRecord] {
        let batch = try koe.start(command)
        try waitForRecords(atLeast: 3, while: batch)
        kill(batch.processIdentifier, SIGSTOP)
        for worker in childProcesses(of: batch.processIdentifier) { kill(worker, SIGKILL) }
        kill(batch.processIdentifier, SIGKILL)
        batch.waitUntilExit()
        let done = try koe.manifest("out/koe-manifest.jsonl")
        #expect(done.count < inputs.count, "the batch finished before it was killed")
        return done
    }

    /// Waits until the manifest holds `count` lines; fails if the batch ends first or takes too long.
    private func waitForRecords(atLeast count: Int, while batch: Process) throws {
        let deadline = Date().addingTimeInterval(60)
        while koe.bytes(of: "out/koe-manifest.jsonl").filter({ $0 == UInt8(ascii: "\n") }).count < count {
            try #require(batch.isRunning, "the batch ended before it could be killed")
            try #require(Date() < deadline, "no progress")
            usleep(5_000)
        }
    }

    private func childProcesses(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { statusFields(of: $0)?[1] == String(parent) }
    }

    private func isZombie(_ pid: pid_t) -> Bool {
        statusFields(of: pid)?[0] == "Z"
    }

    /// State and parent pid from /proc/PID/stat (the fields after the command name, which may hold spaces).
    private func statusFields(of pid: pid_t) -> [String]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ").prefix(2).map(String.init)
    }
}
