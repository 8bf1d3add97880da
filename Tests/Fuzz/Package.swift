// swift-tools-version:5.4
// 5.4 on purpose: from 5.5 on SwiftPM links an executable's main to a `<module>_main` entry point, which a
// libFuzzer target does not have (libFuzzer's own main drives it).
// libFuzzer targets for koe, in a package of their own so the main build never sees fuzzer flags.
// Build and run them with `make fuzz` at the top of the repository, which compiles every module
// (koe's included) with `-sanitize=fuzzer,address` so that libFuzzer sees their coverage.
import Foundation
import PackageDescription

/// libFuzzer supplies main, so the targets' own files are libraries, not top-level code.
let fuzzTarget: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

/// Targets that fuzz koe's `package` declarations are built with koe's package name: SwiftPM's name for the folder
/// koe is in ("koe" gives koe, "wt-no-trap" gives wt_no_trap).
let koePackageName: String = {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.lastPathComponent.lowercased()
    let name = String(folder.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    return name.first?.isNumber == true ? "_" + name : name
}()
let insideKoe: [SwiftSetting] = [.unsafeFlags(["-parse-as-library", "-package-name", koePackageName])]

let package = Package(
    name: "koe-fuzz",
    dependencies: [
        .package(name: "koe", path: "../.."),
    ],
    targets: [
        // The raw PCM reader fed through a pipe in fuzzed pieces, and the writer, against a reference decoder.
        // KoeIO comes with the Koe product; its reader and writer are `package` declarations of koe.
        .executableTarget(name: "FuzzRawPCM", dependencies: [.product(name: "Koe", package: "koe")],
                          swiftSettings: insideKoe),
        // EQ band and graphic EQ specs: parse, print, parse again, build the filters, run them.
        .executableTarget(name: "FuzzEqualizerSpec", dependencies: [.product(name: "Koe", package: "koe")],
                          swiftSettings: insideKoe),
        // VoiceChanger through `import Koe` alone: any rate, channels, settings, blocks and calls, in any order.
        .executableTarget(name: "FuzzVoiceChanger", dependencies: [.product(name: "Koe", package: "koe")],
                          swiftSettings: fuzzTarget),
        // `koe convert` command lines run through the built binary (its path in KOE_BINARY).
        .executableTarget(name: "FuzzConvertArguments", swiftSettings: fuzzTarget),
    ]
)
