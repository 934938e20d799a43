import ArgumentParser
import Foundation
import Synchronization
import TrawlEngine
import TrawlTestServer

/// `trawl bench`: a closed-model load generator on the engine.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load-generate with the engine: requests/s, MB/s, errors by kind, latency percentiles.",
        discussion: """
            With no URL, starts the embedded test server on 127.0.0.1 and benchmarks its small JSON
            endpoint (client and server then share this machine's cores). -n counts requests across all
            URLs, which are used round-robin.
            """)

    @Argument(help: "URLs to request, round-robin. None: the embedded test server.")
    var urls: [String] = []

    @Option(name: .shortAndLong, help: "Requests in flight at once.")
    var concurrency: Int = 64

    @Option(name: [.customShort("n"), .customLong("requests")], help: "Total requests (default 20000).")
    var requests: Int?

    @Option(name: [.customShort("d"), .customLong("duration")], help: "Run for this many seconds instead of -n.")
    var duration: Double?

    @Flag(help: "Print one JSON object instead of the table.")
    var json = false

    @Flag(name: .customLong("http2"), help: "Negotiate HTTP/2 (https URLs only).")
    var http2 = false

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Skip TLS certificate verification.")
    var insecure = false

    func validate() throws {
        if requests != nil, duration != nil { throw ValidationError("give either -n or -d, not both") }
        if let requests, requests < 1 { throw ValidationError("-n must be at least 1") }
        if let duration, duration <= 0 { throw ValidationError("-d must be positive") }
        if concurrency < 1 { throw ValidationError("-c must be at least 1") }
    }

    func run() async throws {
        var server: TestServer?
        var targets = urls
        if targets.isEmpty {
            let started = try await TestServer.start(threads: 1)
            server = started
            targets = [started.url("/json/small")]
        }
        var config = Client.Configuration()
        config.maxConcurrentTransfers = concurrency
        if http2 { config.httpVersion = .http2 }
        if insecure { config.tls = .insecureSkipVerification }
        let client = Client(configuration: config)

        let limit: BenchRunner.Limit = duration.map { .duration(.milliseconds(Int64($0 * 1000))) }
            ?? .requests(requests ?? 20_000)
        let report = await BenchRunner(client: client, urls: targets, concurrency: concurrency, limit: limit).run()
        try await server?.shutdown()
        if json {
            print(report.json())
        } else {
            print(report.table(embeddedServer: server != nil))
        }
        if report.completed == 0 { throw CLIFailure("error: no request succeeded") }
    }
}

/// Runs the load and gathers what `trawl bench` prints.
struct BenchRunner: Sendable {
    enum Limit: Sendable {
        case requests(Int)
        case duration(Duration)
    }

    let client: Client
    let urls: [String]
    let concurrency: Int
    let limit: Limit

    private final class Ticket: Sendable {
        let next = Atomic<Int>(0)
    }

    struct WorkerResult: Sendable {
        var latencies: [UInt64] = []  // nanoseconds
        var bytes = 0
        var errors: [String: Int] = [:]
        var statuses: [Int: Int] = [:]
    }

    func run() async -> BenchReport {
        let ticket = Ticket()
        let requests = urls.map { Request(url: $0) }
        let clock = ContinuousClock()
        let start = clock.now
        let deadline: ContinuousClock.Instant? = if case .duration(let span) = limit { start + span } else { nil }
        let maxRequests: Int = if case .requests(let count) = limit { count } else { Int.max }
        let cpuBefore = BenchReport.cpuTime()

        // The workers run on the engine's loop thread: a finished transfer resumes its worker there,
        // with no thread hand-off (the worker's own work per request is a few counters).
        let results = await withTaskExecutorPreference(client.executor) {
            await collectResults(ticket: ticket, requests: requests, clock: clock, deadline: deadline,
                                 maxRequests: maxRequests)
        }
        let elapsed = start.duration(to: clock.now)
        let cpu = BenchReport.cpuTime() - cpuBefore
        return BenchReport(
            urls: urls, concurrency: concurrency, elapsed: elapsed, latencies: results.latencies.sorted(),
            bytes: results.bytes, errors: results.errors, statuses: results.statuses, cpuSeconds: cpu)
    }

    private func collectResults(
        ticket: Ticket, requests: [Request], clock: ContinuousClock, deadline: ContinuousClock.Instant?,
        maxRequests: Int
    ) async -> WorkerResult {
        await withTaskGroup(of: WorkerResult.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var result = WorkerResult()
                    while true {
                        let index = ticket.next.add(1, ordering: .relaxed).oldValue
                        if index >= maxRequests { break }
                        if let deadline, clock.now >= deadline { break }
                        let began = clock.now
                        do {
                            let response = try await client.send(requests[index % requests.count])
                            let elapsed = began.duration(to: clock.now)
                            result.latencies.append(UInt64(elapsed.components.seconds) * 1_000_000_000
                                + UInt64(elapsed.components.attoseconds / 1_000_000_000))
                            result.bytes += response.body.count
                            result.statuses[response.status, default: 0] += 1
                        } catch let error as TrawlError {
                            result.errors[error.code.description, default: 0] += 1
                        } catch {
                            result.errors["other", default: 0] += 1
                        }
                    }
                    return result
                }
            }
            var merged = WorkerResult()
            for await part in group {
                merged.latencies.append(contentsOf: part.latencies)
                merged.bytes += part.bytes
                merged.errors.merge(part.errors, uniquingKeysWith: +)
                merged.statuses.merge(part.statuses, uniquingKeysWith: +)
            }
            return merged
        }
    }
}
