// swift-tools-version:6.1
// The JSON benchmark program: not part of the main build or its tests. Run ./run.sh.
import PackageDescription

let package = Package(
    name: "TrawlJSONBench",
    platforms: [.macOS(.v15)],
    // walk-bench measures @JSONFieldsDecodable: the trait "Macros" turns it on.
    dependencies: [.package(name: "Trawl", path: "../..", traits: ["Macros"])],
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
