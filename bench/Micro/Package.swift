// swift-tools-version:6.1
import PackageDescription

// Micro benchmarks of one frame's work per WORLD stage, in steady state, with allocation counts
// (ordo-one/benchmark). A package of their own, so neither koe nor its tests depend on the benchmark
// framework. Run with `make bench-micro`; `Thresholds/` holds the allocation bars it checks.
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
                .product(name: "KoeWorld", package: "koe"),
                .product(name: "KoeStages", package: "koe"),
                .product(name: "KoeIO", package: "koe"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/KoeWorldMicro",
            swiftSettings: [.swiftLanguageMode(.v5)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
