// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "koe",
    products: [
        .library(name: "Koe", targets: ["Koe"]),
        .library(name: "KoeWorld", targets: ["KoeWorld"]),
        .executable(name: "koe", targets: ["koe"]),
        // The C ABI (Sources/KoeC/include/koe.h) as one archive with everything below it: the plugins link it.
        .library(name: "KoeC", type: .static, targets: ["KoeC"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `koe live --panel`'s server: FlyingFox's HTTP and WebSocket types over its epoll socket layer, plain
        // Swift without SwiftNIO (a release build takes far less time).
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CFFTW",
            pkgConfig: "fftw3",
            providers: [.apt(["libfftw3-dev"])]
        ),
        .systemLibrary(
            name: "CSndFile",
            pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]
        ),
        // `koe plot`'s PNG: librsvg rasterises the SVG koe writes, cairo encodes the PNG.
        .systemLibrary(
            name: "CRsvg",
            pkgConfig: "librsvg-2.0",
            providers: [.apt(["librsvg2-dev"])]
        ),
        // No pkgConfig: portaudio-2.0.pc's Cflags carry -pthread, a flag SwiftPM refuses; the header is in
        // /usr/include and the module map links libportaudio (Debian portaudio19-dev, `make deps`).
        .systemLibrary(name: "CPortAudio"),
        // `koe live --virtual-mic`: libpipewire (Debian libpipewire-0.3-dev, `make deps`), through CKoePipeWire's
        // few plain C functions, since PipeWire's API is mostly macros and inline functions Swift cannot call.
        // SwiftPM drops the -D_REENTRANT of its pkg-config flags with a warning; glibc needs no such macro.
        .systemLibrary(
            name: "CPipeWire",
            pkgConfig: "libpipewire-0.3",
            providers: [.apt(["libpipewire-0.3-dev"])]
        ),
        .target(name: "CKoePipeWire", dependencies: ["CPipeWire"]),
        // Present to `#if canImport(CAVX512)` only when compiling for a CPU with AVX-512F (Sources/CAVX512).
        .systemLibrary(name: "CAVX512"),
        // Present to `#if canImport(CAVX2)` only when compiling for a CPU with AVX2 (Sources/CAVX2).
        .systemLibrary(name: "CAVX2"),
        .target(name: "KoeDSP", dependencies: ["CFFTW", "CAVX512", "CAVX2"]),
        .target(name: "KoeWorld", dependencies: ["KoeDSP"]),
        .target(name: "KoeIO", dependencies: ["CSndFile", "KoeDSP"]),
        .target(name: "KoeStages", dependencies: ["KoeWorld", "KoeDSP"]),
        .target(name: "Koe", dependencies: ["KoeDSP", "KoeStages", "KoeWorld", "KoeIO"]),
        .target(name: "KoeC", dependencies: ["Koe", "KoeWorld"], exclude: ["include"]),
        .target(name: "KoeBatch", dependencies: ["Koe", "KoeDSP", "KoeIO", "KoeWorld"]),
        .target(name: "KoeLive", dependencies: ["Koe", "CPortAudio", "CKoePipeWire"]),
        .target(name: "KoePlot", dependencies: ["KoeWorld", "KoeDSP", "KoeIO", "CRsvg"]),
        // The live panel's server and page; linked by the command line only. The page's files are compiled into
        // the binary, so an installed koe needs no resource folder.
        .target(
            name: "KoePanel",
            dependencies: [
                "Koe", "KoeLive", .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "FlyingSocks", package: "FlyingFox"),
            ],
            resources: [.embedInCode("Page/panel.html"), .embedInCode("Page/panel.css"), .embedInCode("Page/panel.js")]
        ),
        .executableTarget(
            name: "koe",
            dependencies: [
                "Koe",
                "KoeBatch",
                "KoeIO",
                "KoeLive",
                "KoePanel",
                "KoePlot",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            plugins: ["KoeBuildInfo"]
        ),
        // `BuildInfo.commit` for `koe --version`: the git commit of the sources, read at every build.
        .plugin(name: "KoeBuildInfo", capability: .buildTool(), path: "Sources/KoeBuildInfo"),
        .target(name: "TestSupport", dependencies: ["KoeDSP"], path: "Tests/TestSupport"),
        .testTarget(name: "KoeDSPTests", dependencies: ["KoeDSP", "TestSupport"]),
        .testTarget(name: "KoeWorldTests", dependencies: ["KoeWorld", "KoeDSP", "TestSupport"]),
        .testTarget(name: "KoeIOTests", dependencies: ["KoeIO", "TestSupport"]),
        .testTarget(name: "KoeStagesTests", dependencies: ["KoeStages", "TestSupport"]),
        .testTarget(name: "KoeTests", dependencies: ["Koe", "KoeIO", "KoeStages", "KoeWorld", "TestSupport"]),
        .testTarget(name: "KoePlotTests", dependencies: ["KoePlot", "CRsvg", "TestSupport"]),
        .testTarget(name: "KoeCTests", dependencies: ["KoeC", "Koe", "KoeIO", "KoeWorld", "TestSupport"]),
        .testTarget(name: "KoeLiveTests", dependencies: ["KoeLive", "Koe"]),
        .testTarget(
            name: "KoePanelTests", dependencies: ["KoePanel", "KoeLive", "Koe", .product(name: "FlyingFox", package: "FlyingFox")]),
        // Runs the built `koe` binary; depending on the executable makes the test build produce it first.
        .testTarget(name: "KoeCLITests", dependencies: ["koe", "KoeIO", "KoeWorld", "TestSupport"]),
    ]
)

// The tests drive koe's optimised modules. Built without optimisation themselves, they take a fifth off the test
// build and a few seconds onto the run; references too slow for that live in TestSupport, which is optimised.
for target in package.targets where target.type == .test {
    target.swiftSettings = [.unsafeFlags(["-Onone"])]
}
