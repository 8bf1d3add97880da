// swift-tools-version:6.0
import Foundation
import PackageDescription

// Live F0 (issues 12 and 23): StreamingDio's live mode against whole-signal DIO, frame by frame, on real speech.
// A package of its own, so koe carries no benchmark code. Run with `make bench-live-f0`.

/// StreamingDio is a `package` declaration of koe, which a module sees when it is built with koe's package
/// name: SwiftPM's name for the folder koe is in ("koe" gives koe, "wt-f0" gives wt_f0).
let koePackageName: String = {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.lastPathComponent.lowercased()
    let name = String(folder.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    return name.first?.isNumber == true ? "_" + name : name
}()
let package = Package(
    name: "koe-live-f0",
    dependencies: [
        .package(name: "koe", path: "../.."),
    ],
    targets: [
        .target(name: "SpeechFiles", path: "Sources/SpeechFiles"),
        .executableTarget(
            name: "live-f0",
            dependencies: [.product(name: "KoeWorld", package: "koe"), "SpeechFiles"],
            path: "Sources/LiveF0",
            // Not in this package's own package access, but in koe's.
            packageAccess: false,
            swiftSettings: [.unsafeFlags(["-package-name", koePackageName])]
        ),
        // Issue 23's voicing bars, through the public API `koe analyze` uses.
        .executableTarget(
            name: "live-voicing",
            dependencies: [.product(name: "KoeWorld", package: "koe"), "SpeechFiles"],
            path: "Sources/LiveVoicing"
        ),
    ]
)
