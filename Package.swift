// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

// Layers (each depends only on those below it):
//   trawl (CLI) -> TrawlBench (the load tester) -> TrawlJobs -> Trawl -> TrawlJSON -> TrawlEngine -> CShims (CCurl, CYajl)
//   TrawlMacros (the @JSONFieldsDecodable macro; its plugin needs swift-syntax) -> TrawlJSON, with the trait "Macros"
// TrawlJobs (job files, units, the runner) owns Yams: an app that imports only `Trawl` builds no YAML parser.
// TrawlTestServer (SwiftNIO; TrawlEngine only for SHA256) is used by the CLI and the tests, never by the
// library products; TrawlTestSupport (Tests/TrawlTestSupport) by the tests alone.
/// Dependencies that only the "Macros" trait brings in.
let macros: TargetDependencyCondition? = .when(traits: ["Macros"])

let package = Package(
    name: "Trawl",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "TrawlEngine", targets: ["TrawlEngine"]),
        .library(name: "TrawlJSON", targets: ["TrawlJSON"]),
        .library(name: "Trawl", targets: ["Trawl"]),
        .library(name: "TrawlJobs", targets: ["TrawlJobs"]),
        // `@JSONFieldsDecodable`: its own product, with the trait "Macros" (see `traits`).
        .library(name: "TrawlMacros", targets: ["TrawlMacros"]),
        .executable(name: "trawl", targets: ["trawl"]),
    ],
    // "Macros" turns on `@JSONFieldsDecodable` (TrawlMacros) and with it the swift-syntax build its plugin needs
    // (1.5-2.5 minutes on two cores): an app asks for it with `traits: ["Macros"]` on its `.package` line. Off by
    // default, so that neither an app that does not use the macro nor README's test command builds swift-syntax;
    // `.ci/run` builds and tests the macro with `--traits Macros`.
    traits: [.trait(name: "Macros", description: "The @JSONFieldsDecodable macro (TrawlMacros); builds swift-syntax")],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        // `trawl fetch --metrics-listen/--metrics-push`, in the CLI target only: swift-prometheus (the backend of
        // swift-metrics; it brings CoreMetrics 2.13.0 and swift-atomics, which SwiftNIO has already).
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The `@JSONFieldsDecodable` macro's plugin (TrawlMacrosPlugin), built only for TrawlMacros.
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "600.0.0"..<"604.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            path: "CShims/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CYajl",
            path: "CShims/CYajl",
            pkgConfig: "yajl",
            providers: [.apt(["libyajl-dev"])]
        ),
        // zlib: Trawl decodes gzip and deflate bodies itself, so it bounds their size per chunk (ContentDecoder).
        .systemLibrary(name: "CZlib", path: "CShims/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "TrawlEngine",
            dependencies: [
                "CCurl", "CZlib",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "TrawlJSON", dependencies: ["CYajl", "TrawlEngine"]),
        .target(
            name: "Trawl",
            dependencies: [
                "TrawlEngine", "TrawlJSON",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .macro(
            name: "TrawlMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax", condition: macros),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax", condition: macros),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: macros),
                .product(name: "SwiftDiagnostics", package: "swift-syntax", condition: macros),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax", condition: macros),
            ]
        ),
        .target(
            name: "TrawlMacros", dependencies: ["TrawlJSON", .target(name: "TrawlMacrosPlugin", condition: macros)]),
        .target(
            name: "TrawlJobs",
            dependencies: [
                "Trawl", "TrawlEngine", "TrawlJSON",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The load tester's engine (`trawl bench`): load loops, schedules and ramps, the recorder, the latency
        // picture, reports, thresholds, the capacity search, rounds and the shared Redis schedule. Package access;
        // the CLI target keeps the command, its flags and the terminal panel.
        .target(
            name: "TrawlBench",
            dependencies: [
                "TrawlJobs", "Trawl", "TrawlEngine", "TrawlJSON",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .target(
            name: "TrawlTestServer",
            dependencies: [
                "TrawlEngine",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ]
        ),
        .executableTarget(
            name: "trawl",
            dependencies: [
                "TrawlBench",
                "TrawlJobs",
                "Trawl",
                "TrawlEngine",
                "TrawlJSON",
                "TrawlTestServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            // The CLI allocates with tcmalloc (Debian's libgoogle-perftools-dev): at ~45k small requests/s
            // glibc's malloc/free, mostly libcurl's, cost ~10% of the loop thread (Benchmarks/peers/README.md).
            // The library products leave the allocator to the application.
            linkerSettings: [.linkedLibrary("tcmalloc_minimal", .when(platforms: [.linux]))]
        ),
        // What the test targets share beyond the server (never a product): the traits every suite uses (`.endToEnd`,
        // `.hangGuard`, `.ownThread`: turns for tests that run processes, hang guards instead of wall-clock limits
        // that a busy machine would trip), and reading README.md and docs/ (their examples are tested).
        .target(name: "TrawlTestSupport", path: "Tests/TrawlTestSupport"),
        .testTarget(
            name: "TrawlEngineTests",
            dependencies: [
                "TrawlEngine", "TrawlTestServer", "TrawlTestSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // TrawlMacros, not its plugin: a test target that depends on a macro target is built for the host, with
        // everything it links, and then cannot import the `trawl` executable's module (TrawlCLITests does).
        .testTarget(
            name: "TrawlJSONTests", dependencies: ["TrawlJSON", "TrawlMacros", "TrawlTestServer", "TrawlTestSupport"]),
        .testTarget(
            name: "TrawlTests",
            dependencies: [
                "Trawl", "TrawlMacros", "TrawlTestServer", "TrawlTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TrawlJobsTests",
            dependencies: ["TrawlJobs", "Trawl", "TrawlEngine", "TrawlJSON", "TrawlTestServer", "TrawlTestSupport"]
        ),
        .testTarget(
            name: "TrawlBenchTests",
            dependencies: [
                "TrawlBench", "TrawlEngine", "TrawlTestSupport",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .testTarget(
            name: "TrawlTestServerTests", dependencies: ["TrawlTestServer", "TrawlEngine", "TrawlTestSupport"]),
        // Runs the built `trawl` binary end to end (TrawlEngine and TrawlJSON: `trawl --version` is checked against the
        // library versions the test process loads).
        .testTarget(
            name: "TrawlCLITests",
            dependencies: ["trawl", "TrawlBench", "TrawlJobs", "TrawlEngine", "TrawlJSON", "TrawlTestServer", "TrawlTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
