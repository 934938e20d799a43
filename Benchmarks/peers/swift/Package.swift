// swift-tools-version:6.0
// Peer HTTP clients for Benchmarks/peers/compare.sh: the same workload as `trawl bench`, written with
// swift-server/async-http-client and with Foundation's URLSession (FoundationNetworking on Linux).
// Built separately from the Trawl package so that its dependencies never reach Trawl's graph.
import PackageDescription

let package = Package(
    name: "TrawlPeers",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
    ],
    targets: [
        .executableTarget(
            name: "ahc-bench",
            dependencies: [.product(name: "AsyncHTTPClient", package: "async-http-client")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(name: "urlsession-bench", swiftSettings: [.swiftLanguageMode(.v5)]),
    ]
)
