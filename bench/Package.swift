// swift-tools-version:6.0
import PackageDescription

// Benchmarks live in their own package so the main package carries no benchmark code or dependencies.
let package = Package(
    name: "koe-bench",
    dependencies: [
        .package(name: "koe", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "koe-bench",
            dependencies: [.product(name: "KoeWorld", package: "koe")],
            path: "Sources/KoeBench"
        ),
    ]
)
