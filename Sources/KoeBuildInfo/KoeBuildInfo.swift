import Foundation
import PackagePlugin

/// Gives the `koe` target a `BuildInfo.commit`: the git commit the sources were built from, for `koe --version`.
///
/// A build command: a short shell script around git (a tool already on the machine) writes `BuildInfo.swift`.
/// SwiftPM keeps a plugin's commands in its cached build plan, so the command says what it reads and the build
/// system reruns it when any of that changes: git's `HEAD`, its log (a commit, checkout, reset or pull appends
/// to it) and index, and the sources it compares with the commit (`Sources/` and `Package.swift`).
/// The script rewrites the file only when its text changes, so a rerun that finds the same commit recompiles
/// nothing. A build works without make and without git: outside a git checkout, or inside one that is not
/// koe's own (a tarball unpacked into another repository), the commit is `unknown`; sources that differ from
/// the commit add `-dirty`.
@main
struct KoeBuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift")
        return [
            .buildCommand(
                displayName: "Reading the git commit koe is built from",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", Self.script, "koe-build-info", package.path(percentEncoded: false),
                            output.path(percentEncoded: false)] + Self.comparedPaths,
                inputFiles: Self.gitFiles(package) + Self.sourceFiles(package),
                outputFiles: [output]
            )
        ]
    }

    /// What the script compares with the commit to tell a dirty build: what the binary is made of.
    static let comparedPaths = ["Sources", "Package.swift"]

    /// `$1` the package's folder, `$2` the Swift file to write, then the paths to compare with the commit.
    static let script = #"""
        set -u
        package=$(cd "$1" && pwd -P) || exit 1
        output=$2
        shift 2
        commit=unknown
        top=$(git -C "$package" rev-parse --show-toplevel 2>/dev/null) &&
            [ "$(cd "$top" && pwd -P)" = "$package" ] &&
            head=$(git -C "$package" rev-parse --short=7 HEAD 2>/dev/null) &&
            commit=$head &&
            { git --no-optional-locks -C "$package" diff --quiet HEAD -- "$@" 2>/dev/null || commit="$commit-dirty"; }
        printf '%s\n' \
            '// Generated at build time by Sources/KoeBuildInfo; not in git.' \
            'enum BuildInfo {' \
            '    /// The git commit koe was built from (`-dirty`: its sources differ from it), or `unknown`.' \
            "    static let commit = \"$commit\"" \
            '}' > "$output.new" || exit 1
        if cmp -s "$output.new" "$output"; then rm -f "$output.new"; else mv -f "$output.new" "$output"; fi
        """#

    /// The files of the package's git checkout that change when its commit or its index does; none outside one.
    static func gitFiles(_ package: URL) -> [URL] {
        guard let gitDirectory = git(["rev-parse", "--absolute-git-dir"], in: package) else { return [] }
        let directory = URL(filePath: gitDirectory, directoryHint: .isDirectory)
        return ["HEAD", "logs/HEAD", "index"].map { directory.appending(path: $0) }.filter(exists)
    }

    /// Every file under the compared paths, so an edit reruns the dirty check.
    static func sourceFiles(_ package: URL) -> [URL] {
        comparedPaths.flatMap { path -> [URL] in
            let url = package.appending(path: path)
            guard let files = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
            else { return exists(url) ? [url] : [] }
            return files.compactMap { $0 as? URL }.filter {
                (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
            }
        }
    }

    static func exists(_ url: URL) -> Bool {
        FileManager.default.fileExists(atPath: url.path(percentEncoded: false))
    }

    /// git's answer on one line, or nil when git is missing or says no.
    static func git(_ arguments: [String], in directory: URL) -> String? {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = ["git", "-C", directory.path(percentEncoded: false)] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
