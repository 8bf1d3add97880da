import Foundation

/// A fresh folder under the system's temporary directory, removed with everything in it when released.
public final class TemporaryFolder {
    public let path: String

    /// `prefix` names the folder, so a leftover one tells which tests made it.
    public init(prefix: String = "koe-test") {
        var template = Array((NSTemporaryDirectory() + prefix + "-XXXXXX").utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    public func file(_ name: String) -> String { path + "/" + name }

    /// Names in the folder, hidden ones included, so that leftover temporary files show.
    public func contents(of subfolder: String? = nil) -> [String] {
        let folder = subfolder.map(file) ?? path
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    public func write(_ bytes: [UInt8], to name: String) -> String {
        _ = FileManager.default.createFile(atPath: file(name), contents: Data(bytes))
        return file(name)
    }

    /// A folder this process cannot create files in, or nil if there is none (root ignores permissions,
    /// so then a read-only system folder stands in).
    public func unwritableFolder() -> String? {
        let locked = file("locked")
        try? FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        chmod(locked, 0o555)
        for candidate in [locked, "/sys/kernel"] where !Self.canCreateFile(in: candidate) {
            return candidate
        }
        return nil
    }

    private static func canCreateFile(in folder: String) -> Bool {
        let probe = folder + "/.koe-probe"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        unlink(probe)
        return true
    }
}
