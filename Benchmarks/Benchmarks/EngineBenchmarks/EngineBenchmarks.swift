// Engine round trips: `Client.send` of a small GET against a keep-alive HTTP/1.1 server on
// 127.0.0.1 started inside this process (LoopbackServer), so the numbers are the engine's own
// overhead (libcurl multi loop, hand-offs, buffering) plus loopback TCP, not a network.
//
// mallocCountTotal counts every thread's mallocs during the measurement, the server's threads
// included (the server allocates nothing per request in its loop, apart from the kernel).
import Benchmark
import TrawlEngine
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tolerance (percent) on time-based metrics: `TRAWL_BENCH_TIME_TOLERANCE`, else `fallback`.
/// `micro.sh --check-mallocs` sets it very high so that only malloc counts are checked (busy machine).
func timeTolerance(_ fallback: Double) -> Double {
    guard let raw = getenv("TRAWL_BENCH_TIME_TOLERANCE"), let value = Double(String(cString: raw)) else {
        return fallback
    }
    return value
}

enum Loopback {
    static let server: LoopbackServer = {
        do { return try LoopbackServer() } catch { fatalError("loopback server: \(error)") }
    }()

    static let client: Client = {
        var configuration = Client.Configuration()
        configuration.maxConcurrentTransfers = 64
        configuration.maxConnectionsPerHost = 16
        return Client(configuration: configuration)
    }()

    static func get() async throws {
        let response = try await client.send(Request(url: server.url))
        precondition(response.status == 200 && response.body.count == LoopbackServer.body.count)
    }
}

let benchmarks: @Sendable () -> Void = {
    // p90 is what `thresholds check` compares. Loopback round trips on a shared 2-core machine are
    // the noisiest numbers here (scheduling of three threads): 50%. Mallocs involve the engine's
    // thread and the async runtime: 10%. (Relative only: an absolute tolerance is checked as well,
    // not instead.)
    let timing = BenchmarkThresholds(relative: [.p90: timeTolerance(50)])
    let mallocs = BenchmarkThresholds(relative: [.p90: 10.0])

    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 20,
        maxDuration: .seconds(3),
        maxIterations: 20_000,
        thresholds: [.throughput: timing, .wallClock: timing, .mallocCountTotal: mallocs]
    )

    // (5) One request at a time on a kept-alive connection: pure round-trip latency.
    Benchmark(
        "send-GET-sequential",
        configuration: .init(setup: { try await Loopback.get() })
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            try await Loopback.get()
        }
    }

    // 64 requests, 16 connections: what the multi loop does with concurrency (one iteration = 64 requests).
    Benchmark(
        "send-GET-64-concurrent",
        configuration: .init(timeUnits: .milliseconds, maxIterations: 2_000, setup: { try await Loopback.get() })
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<64 { group.addTask { try await Loopback.get() } }
                try await group.waitForAll()
            }
        }
    }
}
