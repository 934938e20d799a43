// swift-tools-version:6.1
import PackageDescription

// Micro-benchmarks for Trawl, run with ordo-one/package-benchmark:
//   cd Benchmarks && swift package benchmark            (or Benchmarks/micro.sh)
// A separate package so that the main package's build and CI never build it. It depends on the main
// package by path. Thresholds (regression limits) live in Thresholds/, see micro.sh.
let package = Package(
    name: "TrawlBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Trawl", path: ".."),
        .package(
            url: "https://github.com/ordo-one/package-benchmark.git",
            from: "1.38.1",
            traits: ["MallocInterposer"]
        ),
        // Read directly by JSONBenchmarks for its mallocs-per-item metric (package-benchmark uses it too).
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
    ],
    targets: [
        // JSON extraction (MB/s, mallocs per item) and decoding (items/s).
        .executableTarget(
            name: "JSONBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "TrawlJSON", package: "Trawl"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            path: "Benchmarks/JSONBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // Request building through the routes layer and Link header parsing.
        .executableTarget(
            name: "RouteBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "Trawl", package: "Trawl"),
                .product(name: "TrawlEngine", package: "Trawl"),
            ],
            path: "Benchmarks/RouteBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // Engine round trips against a loopback server started inside the benchmark.
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "TrawlEngine", package: "Trawl"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
