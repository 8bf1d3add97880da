import Dispatch
import Glibc
import KoeDSP

/// A file that appears at its destination only when complete. Writers fill `temporaryPath`, a fresh file
/// in the destination's folder (so the final rename cannot cross file systems); `commit()` renames it into
/// place. Anything not committed is removed: on `discard()`, when the object goes away, and, once
/// `removeTemporaryFilesOnSignals()` has been called, when the process is interrupted or terminated.
package final class AtomicOutput {
    let destination: String
    let temporaryPath: String
    private var isPending = true

    /// Reserves a temporary file next to `destination`. Fails if the folder is missing or not writable.
    package init(destination: String) throws {
        let folder = Self.folder(of: destination)
        try Self.requireFolder(folder)
        try Self.requireNotFolder(destination)
        self.destination = destination
        temporaryPath = try Self.createTemporaryFile(near: destination, in: folder)
    }

    deinit {
        if isPending { discard() }
    }

    /// Runs `body` on the temporary path to write the content. Errors about the temporary file are
    /// reported about the destination; on any error the temporary file is removed.
    package func fill(_ body: (String) throws -> Void) throws {
        precondition(isPending, "output already committed or discarded")
        do {
            try body(temporaryPath)
        } catch let error as IOError {
            discard()
            throw error.reported(as: destination, insteadOf: temporaryPath)
        } catch {
            discard()
            throw error
        }
    }

    /// Moves the finished file into place, replacing any file already there.
    package func commit() throws {
        precondition(isPending, "output already committed or discarded")
        try PendingFiles.shared.withdraw(temporaryPath) {
            guard rename(temporaryPath, destination) == 0 else {
                throw IOError.writeFailed(path: destination, reason: Files.systemMessage(errno))
            }
        }
        isPending = false
    }

    /// Removes the temporary file; the destination is left as it was.
    func discard() {
        guard isPending else { return }
        PendingFiles.shared.withdraw(temporaryPath) { _ = unlink(temporaryPath) }
        isPending = false
    }

    /// Writes `destination` through `body`, which fills the temporary path it is given;
    /// the destination appears only if `body` returns normally.
    package static func write(to destination: String, _ body: (String) throws -> Void) throws {
        let output = try AtomicOutput(destination: destination)
        try output.fill(body)
        try output.commit()
    }

    /// From now on SIGINT, SIGTERM and SIGHUP remove every pending temporary file, then end the process
    /// the way the signal would have. Call once, early, from a command-line program.
    package static func removeTemporaryFilesOnSignals() {
        PendingFiles.shared.installSignalHandlers()
    }

    // MARK: Steps

    /// The folder a path names a file in: "." for a bare name, "/" for one at the root.
    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static let temporaryPrefix = ".koe-"

    /// The output name a folder's `entry` is the temporary file of (`.koe-<base 36>.<name>`), or nil when it
    /// is none.
    package static func destinationName(ofTemporaryFile entry: String) -> String? {
        guard entry.hasPrefix(temporaryPrefix) else { return nil }
        let rest = entry.dropFirst(temporaryPrefix.count)
        guard let dot = rest.firstIndex(of: "."),
              rest[..<dot].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return String(rest[rest.index(after: dot)...])
    }

    private static func requireFolder(_ folder: String) throws {
        var status = stat()
        guard stat(folder, &status) == 0 else {
            throw errno == ENOENT ? IOError.folderNotFound(path: folder) : IOError.notAFolder(path: folder)
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw IOError.notAFolder(path: folder) }
    }

    private static func requireNotFolder(_ destination: String) throws {
        var status = stat()
        if stat(destination, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw IOError.notARegularFile(path: destination)
        }
    }

    /// A new hidden file named after the destination behind a random prefix (keeping its extension, which
    /// may choose its format); created exclusively so no other file is ever overwritten, with the
    /// permissions an ordinary new file would get.
    private static func createTemporaryFile(near destination: String, in folder: String) throws -> String {
        let name = destination.split(separator: "/").last.map(String.init) ?? destination
        while true {
            let prefix = temporaryPrefix + String(UInt32.random(in: 0...UInt32.max), radix: 36) + "."
            let candidate = (folder == "/" ? "/" : folder + "/") + prefix + name
            let error = PendingFiles.shared.create(candidate)
            if error == 0 { return candidate }
            if error != EEXIST {
                throw IOError.unwritableFolder(path: folder, reason: Files.systemMessage(error))
            }
        }
    }
}

/// Files written together into one folder: none appears until every one is complete, so a failure leaves
/// no partial set behind. The folder is created if missing, and removed again if the set is abandoned.
package final class AtomicOutputSet {
    let folder: String
    private var outputs: [String: AtomicOutput] = [:]
    /// Folders this set made, outermost first.
    private let createdFolders: [String]
    private var isPending = true

    /// Creates `folder` (and missing parents) if needed and reserves a temporary file for each name in it.
    package init(folder: String, names: [String]) throws {
        let folder = Self.withoutTrailingSlashes(folder)
        self.folder = folder
        var created: [String] = []
        do {
            try Self.createFolderIfMissing(folder, recordingIn: &created)
            for name in names { outputs[name] = try AtomicOutput(destination: folder + "/" + name) }
        } catch {
            outputs.removeAll()
            PendingFiles.shared.withdrawFolders(created, remove: true)
            throw error
        }
        createdFolders = created
    }

    deinit {
        if isPending { discard() }
    }

    /// Writes the file `name` (one of the names given at creation) through its temporary path.
    package func fill(_ name: String, _ body: (String) throws -> Void) throws {
        guard let output = outputs[name] else { preconditionFailure("\(name) was not reserved in \(folder)") }
        do {
            try output.fill(body)
        } catch {
            discard()
            throw error
        }
    }

    /// Moves every file into place.
    package func commit() throws {
        precondition(isPending, "outputs already committed or discarded")
        for output in outputs.values.sorted(by: { $0.destination < $1.destination }) { try output.commit() }
        PendingFiles.shared.withdrawFolders(createdFolders, remove: false)
        isPending = false
    }

    /// Removes every temporary file, and the folders this set created.
    func discard() {
        guard isPending else { return }
        for output in outputs.values { output.discard() }
        PendingFiles.shared.withdrawFolders(createdFolders, remove: true)
        isPending = false
    }

    private static func createFolderIfMissing(_ folder: String, recordingIn created: inout [String]) throws {
        var status = stat()
        if stat(folder, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { throw IOError.notAFolder(path: folder) }
            return
        }
        let parent = AtomicOutput.folder(of: folder)
        if parent != folder { try createFolderIfMissing(parent, recordingIn: &created) }
        let error = PendingFiles.shared.makeFolder(folder)
        guard error == 0 else {
            throw error == ENOTDIR ? IOError.notAFolder(path: parent)
                : IOError.unwritableFolder(path: parent, reason: Files.systemMessage(error))
        }
        created.append(folder)
    }

    private static func withoutTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }
}

/// Temporary files not yet committed and folders made for them, shared with the signal handlers. Dispatch
/// delivers a signal to a handler on a thread of its own, so the handler takes the lock as any thread does.
private final class PendingFiles: @unchecked Sendable {
    static let shared = PendingFiles()

    private struct Pending {
        var files: Set<String> = []
        /// Outermost first, so they can be removed innermost first.
        var folders: [String] = []
    }

    /// Guards `pending`.
    private let lock = Lock()
    private var pending = Pending()
    /// Guards `signalSources`.
    private let sourcesLock = Lock()
    private var signalSources: [DispatchSourceSignal] = []

    /// Creates `path` exclusively and records it, under the lock so that a signal cannot miss the new file.
    /// Returns 0, or the errno of the failure.
    func create(_ path: String) -> Int32 {
        lock.withLock {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else { return errno }
            close(descriptor)
            pending.files.insert(path)
            return 0
        }
    }

    /// Makes the folder `path` and records it, as `create` does for files. Returns 0, or the errno of the failure.
    func makeFolder(_ path: String) -> Int32 {
        lock.withLock {
            guard mkdir(path, 0o777) == 0 else { return errno }
            pending.folders.append(path)
            return 0
        }
    }

    /// Runs `body` (a rename or removal of `path`) and forgets the file if it succeeds.
    func withdraw<Result>(_ path: String, _ body: () throws -> Result) rethrows -> Result {
        try lock.withLock {
            let result = try body()
            pending.files.remove(path)
            return result
        }
    }

    /// Forgets `folders`, after removing them (innermost first; only empty ones go) if `remove` is set.
    func withdrawFolders(_ folders: [String], remove: Bool) {
        lock.withLock {
            for folder in folders.reversed() {
                if remove { rmdir(folder) }
                pending.folders.removeAll { $0 == folder }
            }
        }
    }

    func installSignalHandlers() {
        sourcesLock.withLock {
            guard signalSources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { [self] in removeAllAndDie(of: signalNumber) }
                source.resume()
                signalSources.append(source)
            }
        }
    }

    /// Holds the lock to the end so no commit can slip in after the files are gone. Dispatch delivers the
    /// signal with it blocked, so it is unblocked here before being raised again with its default action.
    private func removeAllAndDie(of signalNumber: Int32) {
        lock.withLock {
            for path in pending.files { unlink(path) }
            for folder in pending.folders.reversed() { rmdir(folder) }
            signal(signalNumber, SIG_DFL)
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, signalNumber)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            raise(signalNumber)
            _exit(128 + signalNumber)
        }
    }
}
