// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for Trawl's parsers of hostile input. A package of its own, so that the main package's
// builds (debug, release, tests) never carry a fuzzing target or its flags: `scripts/fuzz` builds this one with
// `-sanitize=fuzzer,address` applied to every Swift module (coverage for the parsers, not only the harness) and
// `-enable-testing` (the targets reach TrawlEngine internals through `@testable import`).
// One executable holds every target; TRAWL_FUZZ_TARGET picks the one a run exercises.
let package = Package(
    name: "TrawlFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Trawl", path: "..")],
    targets: [
        .executableTarget(
            name: "TrawlFuzz",
            dependencies: [
                .product(name: "TrawlEngine", package: "Trawl"),
                .product(name: "TrawlJSON", package: "Trawl"),
                .product(name: "Trawl", package: "Trawl"),
                .product(name: "TrawlJobs", package: "Trawl"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
