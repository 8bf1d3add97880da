import Glibc
import Koe
import KoeIO

/// One input of a batch and the output it mirrors to. An input that cannot be converted, as is known before
/// trying (a folder given without --recursive, a path that climbs out with ..), has a problem and no output.
package struct BatchItem: Equatable {
    let input: String
    package let output: String?
    let problem: String?

    init(input: String, output: String) {
        self.input = input
        self.output = output
        problem = nil
    }

    init(input: String, problem: String) {
        self.input = input
        output = nil
        self.problem = problem
    }
}

/// Turns the paths a batch is given into its items, sorted by input path: a file mirrors its path as given
/// (without a leading / or ./), a file found under a folder given with --recursive mirrors its path inside
/// that folder. With an output type, the output's extension is replaced by it; an analysis writes a folder
/// named as the input without its extension.
package struct BatchInputs {
    let outputFolder: String
    let outputType: String?
    let recursive: Bool
    let writesFolders: Bool

    package init(outputFolder: String, outputType: String?, recursive: Bool, writesFolders: Bool = false) {
        self.outputFolder = outputFolder
        self.outputType = outputType
        self.recursive = recursive
        self.writesFolders = writesFolders
    }

    /// Every input the paths name, each once, sorted. Fails when two different inputs would write one output.
    package func items(for paths: [String]) throws -> [BatchItem] {
        let excluded = FileIdentity(path: outputFolder)
        var found: [BatchItem] = []
        for path in paths where !path.isEmpty {
            found += items(for: path, excluding: excluded)
        }
        return try unique(found).sorted { $0.input < $1.input }
    }

    private func items(for path: String, excluding excluded: FileIdentity?) -> [BatchItem] {
        guard FileIdentity(path: path)?.isFolder == true else { return [fileItem(path)] }
        guard recursive else {
            return [BatchItem(input: path, problem: "\(path): is a folder; add --recursive to convert the audio files under it")]
        }
        var items: [BatchItem] = []
        walk(folder: Self.trimmingTrailingSlashes(path), relative: [], excluding: excluded, into: &items)
        return items
    }

    private func fileItem(_ path: String) -> BatchItem {
        guard let components = Self.mirroredComponents(of: path) else {
            return BatchItem(input: path, problem: "\(path): climbs out of its folder with '..', so it has no place under the output folder; give its folder with --recursive, or run from a folder above it")
        }
        return BatchItem(input: path, output: output(for: components))
    }

    /// Adds the audio files under `folder`, hidden names and symbolic links to folders left out, and never
    /// the output folder itself. A folder that cannot be read becomes a failed item naming it.
    private func walk(folder: String, relative: [String], excluding excluded: FileIdentity?, into items: inout [BatchItem]) {
        let names: [String]
        do {
            names = try Self.entries(of: folder)
        } catch {
            items.append(BatchItem(input: folder, problem: "\(error)"))
            return
        }
        for name in names where !name.hasPrefix(".") {
            let path = folder == "/" ? "/" + name : folder + "/" + name
            guard let identity = FileIdentity(path: path) else { continue }
            if identity.isFolder {
                if !identity.isSymbolicLink && !identity.isSameFile(as: excluded) {
                    walk(folder: path, relative: relative + [name], excluding: excluded, into: &items)
                }
            } else if identity.isRegularFile && AudioExtensions.isAudio(name) {
                items.append(BatchItem(input: path, output: output(for: relative + [name])))
            }
        }
    }

    private func output(for components: [String]) -> String {
        var components = components
        if let name = components.popLast() {
            if writesFolders {
                components.append(Self.removingExtension(of: name))
            } else {
                components.append(outputType.map { Self.replacingExtension(of: name, with: $0) } ?? name)
            }
        }
        return ([outputFolder] + components).joined(separator: "/")
    }

    /// Drops inputs named twice (the same file by any spelling) and refuses two files sharing an output.
    private func unique(_ items: [BatchItem]) throws -> [BatchItem] {
        var byOutput: [String: BatchItem] = [:]
        var result: [BatchItem] = []
        for item in items {
            guard let output = item.output else {
                if !result.contains(item) { result.append(item) }
                continue
            }
            if let earlier = byOutput[output] {
                if earlier.input == item.input || FileIdentity(path: earlier.input)?.isSameFile(as: FileIdentity(path: item.input)) == true {
                    continue
                }
                throw KoeError.invalidArgument("\(earlier.input) and \(item.input) would both be written to \(output)")
            }
            byOutput[output] = item
            result.append(item)
        }
        return result
    }

    // MARK: Paths

    /// The path's components as mirrored under the output folder: no root, no "." and each ".." resolved
    /// against the component before it; nil if a ".." would climb above where the path starts.
    static func mirroredComponents(of path: String) -> [String]? {
        var components: [String] = []
        for component in path.split(separator: "/") where component != "." {
            if component == ".." {
                guard components.popLast() != nil else { return nil }
            } else {
                components.append(String(component))
            }
        }
        return components.isEmpty ? nil : components
    }

    static func replacingExtension(of name: String, with newExtension: String) -> String {
        removingExtension(of: name) + "." + newExtension
    }

    static func removingExtension(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    package static func trimmingTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    /// The names in `folder`, sorted.
    static func entries(of folder: String) throws -> [String] {
        guard let stream = opendir(folder) else {
            throw KoeError.badInput(source: folder, reason: "cannot list this folder (\(String(cString: strerror(errno))))")
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// What `stat` says about a path, following symbolic links, and whether the path itself is one.
struct FileIdentity {
    let device: UInt64
    let inode: UInt64
    let isFolder: Bool
    let isRegularFile: Bool
    let isSymbolicLink: Bool

    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        var link = stat()
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        isFolder = status.st_mode & S_IFMT == S_IFDIR
        isRegularFile = status.st_mode & S_IFMT == S_IFREG
        isSymbolicLink = lstat(path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
    }

    func isSameFile(as other: FileIdentity?) -> Bool {
        device == other?.device && inode == other?.inode
    }
}

/// File name extensions that name an audio format libsndfile knows.
package enum AudioExtensions {
    /// Whether `name` ends in such an extension.
    static func isAudio(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: ".") else { return false }
        return isKnown(name[name.index(after: dot)...].lowercased())
    }

    /// Whether libsndfile can write a file with this extension (the test `--out-type` must pass too).
    package static func isKnown(_ fileExtension: String) -> Bool {
        (try? AudioFormat.forWriting("x." + fileExtension, sampleRate: 48000, channels: 1)) != nil
    }
}
