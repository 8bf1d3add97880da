import Foundation
import PackagePlugin

/// Gives the `koe` target a `BuildInfo.commit`: the git commit the sources were built from, for `koe --version`.
///
/// A prebuild command, so it runs at the start of every build (`make`, a plain `swift build`, `swift test`) and the
/// commit is never stale. It is a short shell script around git, a tool already on the machine, as prebuild
/// commands require. Outside a git checkout, or inside one that is not koe's own (a tarball unpacked into another
/// repository), or without git, the commit is `unknown`; a checkout with uncommitted changes to tracked files
/// gets `-dirty`. The file is rewritten only when its text changes, so an unchanged commit recompiles nothing.
@main
struct KoeBuildInfo: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let outputDirectory = context.pluginWorkDirectoryURL.appending(path: "BuildInfo")
        let output = outputDirectory.appending(path: "BuildInfo.swift")
        return [
            .prebuildCommand(
                displayName: "Reading the git commit koe is built from",
                executable: URL(filePath: "/bin/sh"),
                arguments: [
                    "-c", Self.script, "koe-build-info",
                    context.package.directoryURL.path(percentEncoded: false),
                    output.path(percentEncoded: false),
                ],
                outputFilesDirectory: outputDirectory
            )
        ]
    }

    /// `$1` the package's folder, `$2` the Swift file to write.
    static let script = #"""
        set -u
        package=$(cd "$1" && pwd -P) || exit 1
        commit=unknown
        top=$(git -C "$package" rev-parse --show-toplevel 2>/dev/null) &&
            [ "$(cd "$top" && pwd -P)" = "$package" ] &&
            head=$(git -C "$package" rev-parse --short=7 HEAD 2>/dev/null) &&
            commit=$head &&
            { git --no-optional-locks -C "$package" diff --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"; }
        mkdir -p "$(dirname "$2")" || exit 1
        printf '%s\n' \
            '// Generated at build time by Plugins/KoeBuildInfo; not in git.' \
            'enum BuildInfo {' \
            '    /// The git commit koe was built from (`-dirty`: with uncommitted changes), or `unknown`.' \
            "    static let commit = \"$commit\"" \
            '}' > "$2.new" || exit 1
        if cmp -s "$2.new" "$2"; then rm -f "$2.new"; else mv -f "$2.new" "$2"; fi
        """#
}
