import Dispatch
import Glibc
import Synchronization

/// A file that appears at its destination only when complete. Writers fill `temporaryPath`, a fresh file
/// in the destination's folder (so the final rename cannot cross file systems); `commit()` renames it into
/// place. Anything not committed is removed: on `discard()`, when the object goes away, and, once
/// `removeTemporaryFilesOnSignals()` has been called, when the process is interrupted or terminated.
public final class AtomicOutput {
    public let destination: String
    public let temporaryPath: String
    private var isPending = true

    /// Reserves a temporary file next to `destination`. Fails if the folder is missing or not writable.
    public init(destination: String) throws {
        let folder = Self.folder(of: destination)
        try Self.requireFolder(folder)
        try Self.requireNotFolder(destination)
        self.destination = destination
        temporaryPath = try Self.createTemporaryFile(near: destination, in: folder)
    }

    deinit {
        if isPending { discard() }
    }

    /// Moves the finished file into place, replacing any file already there.
    public func commit() throws {
        precondition(isPending, "output already committed or discarded")
        try PendingFiles.shared.withdraw(temporaryPath) {
            guard rename(temporaryPath, destination) == 0 else {
                throw IOError.writeFailed(path: destination, reason: Files.systemMessage(errno))
            }
        }
        isPending = false
    }

    /// Removes the temporary file; the destination is left as it was.
    public func discard() {
        guard isPending else { return }
        PendingFiles.shared.withdraw(temporaryPath) { _ = unlink(temporaryPath) }
        isPending = false
    }

    /// Writes `destination` through `body`, which fills the temporary path it is given;
    /// the destination appears only if `body` returns normally.
    public static func write(to destination: String, _ body: (String) throws -> Void) throws {
        let output = try AtomicOutput(destination: destination)
        do {
            try body(output.temporaryPath)
        } catch let error as IOError {
            throw error.reported(as: destination, insteadOf: output.temporaryPath)
        }
        try output.commit()
    }

    /// From now on SIGINT, SIGTERM and SIGHUP remove every pending temporary file, then end the process
    /// the way the signal would have. Call once, early, from a command-line program.
    public static func removeTemporaryFilesOnSignals() {
        PendingFiles.shared.installSignalHandlers()
    }

    // MARK: Steps

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
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
            let prefix = ".koe-" + String(UInt32.random(in: 0...UInt32.max), radix: 36) + "."
            let candidate = (folder == "/" ? "/" : folder + "/") + prefix + name
            let error = PendingFiles.shared.create(candidate)
            if error == 0 { return candidate }
            if error != EEXIST {
                throw IOError.unwritableFolder(path: folder, reason: Files.systemMessage(error))
            }
        }
    }
}

/// Temporary files not yet committed, shared with the signal handlers.
private final class PendingFiles: Sendable {
    static let shared = PendingFiles()

    private let paths = Mutex<Set<String>>([])
    private let signalSources = Mutex<[DispatchSourceSignal]>([])

    /// Creates `path` exclusively and records it, under the lock so that a signal cannot miss the new file.
    /// Returns 0, or the errno of the failure.
    func create(_ path: String) -> Int32 {
        paths.withLock { paths in
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else { return errno }
            close(descriptor)
            paths.insert(path)
            return 0
        }
    }

    func withdraw<Result>(_ path: String, _ body: () throws -> Result) rethrows -> Result {
        try paths.withLock { paths in
            let result = try body()
            paths.remove(path)
            return result
        }
    }

    func installSignalHandlers() {
        signalSources.withLock { sources in
            guard sources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { [self] in removeAllAndDie(of: signalNumber) }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Holds the lock to the end so no commit can slip in after the files are gone.
    private func removeAllAndDie(of signalNumber: Int32) {
        paths.withLock { paths in
            for path in paths { unlink(path) }
            signal(signalNumber, SIG_DFL)
            raise(signalNumber)
        }
    }
}
