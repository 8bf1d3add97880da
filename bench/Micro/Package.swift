// swift-tools-version:6.1
import Foundation
import PackageDescription

// Micro benchmarks of one frame's work per WORLD stage, in steady state, with allocation counts
// (ordo-one/benchmark), and the live F0 and voicing benchmarks (issues 12 and 23): live analysis against
// whole-signal DIO, frame by frame, on real speech. A package of their own, so neither koe nor its tests depend
// on the benchmark framework. Run with `make bench-micro` (`Thresholds/` holds the allocation bars it checks),
// `make bench-live-f0` and `make bench-live`.

/// The stages and StreamingDio are measured through koe's `package` declarations, which a module sees when it is
/// built with koe's package name: SwiftPM's name for the folder koe is in ("koe" gives koe, "wt-no-trap" gives
/// wt_no_trap).
let koePackageName: String = {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.lastPathComponent.lowercased()
    let name = String(folder.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    return name.first?.isNumber == true ? "_" + name : name
}()
let package = Package(
    name: "koe-micro",
    dependencies: [
        .package(name: "koe", path: "../.."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "KoeWorldMicro",
            dependencies: [
                .product(name: "Koe", package: "koe"),
                .product(name: "KoeWorld", package: "koe"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/KoeWorldMicro",
            // Not in this package's own package access, but in koe's.
            packageAccess: false,
            swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-package-name", koePackageName])],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
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
