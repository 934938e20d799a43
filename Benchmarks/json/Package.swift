// swift-tools-version:6.0
// The JSON benchmark program: not part of the main build or its tests. Run ./run.sh.
import PackageDescription

let package = Package(
    name: "TrawlJSONBench",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Trawl", path: "../..")],
    targets: [
        .executableTarget(
            name: "json-bench",
            dependencies: [.product(name: "TrawlJSON", package: "Trawl")]
        ),
        // The paginated walk (c) of Benchmarks/peers/compare.sh, through Trawl's public API.
        .executableTarget(
            name: "walk-bench",
            dependencies: [
                .product(name: "Trawl", package: "Trawl"), .product(name: "TrawlJSON", package: "Trawl"),
                .product(name: "TrawlMacros", package: "Trawl"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
