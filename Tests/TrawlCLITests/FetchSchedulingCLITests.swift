import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// `trawl fetch`'s scheduling settings (-c, --per-host, --rate, --max-wait, --timeout and the job file's concurrency,
// per_host, rate, max_wait_s, timeout_s), each shown where it acts: at the test server (requests in flight, when
// requests arrive) or in the failure it causes.

/// Where a scheduling setting comes from in a run.
enum SettingSource: String, CaseIterable, CustomTestStringConvertible {
    /// The command-line flag, over a job file that says something else.
    case flag = "the flag, over the job file's value"
    /// The job file's `settings`.
    case jobFile = "the job file"

    var testDescription: String { rawValue }
}

@Suite("trawl fetch scheduling settings, seen at the server", .endToEndAlone)
struct FetchSchedulingCLITests {
    /// Runs `trawl fetch` of one `page` source at `/paged/page?QUERY` (planned: each page says how many there are),
    /// quietly, with a report in `report.json`. The job file's settings hold `backoff_ms: 1` and `fileSetting`
    /// (e.g. `concurrency: 3`), or `overridden` with `flag` on the command line when `source` is `.flag`.
    func fetch(
        _ server: TestServer, query: String, source: SettingSource, flag: [String], fileSetting: String,
        overridden: String, extraFlags: [String] = [], in workspace: Workspace, timeout: Duration = .seconds(60)
    ) async throws -> RunResult {
        let setting = source == .flag ? overridden : fileSetting
        try workspace.write(
            "job.yaml",
            """
            settings: {backoff_ms: 1, \(setting)}
            sources:
              - name: items
                url: "\(server.url("/paged/page?" + query))"
                paginate: {style: page, total_pages: total_pages}
                items: items

            """)
        let arguments = ["fetch", "job.yaml", "-o", "out.jsonl", "-q", "--report", "report.json"]
            + (source == .flag ? flag : []) + extraFlags
        let child = try TrawlProcess(arguments, in: workspace, environment: [:])
        let status = try await child.wait(timeout: timeout)
        return RunResult(status: status, stdout: child.stdout, stderr: child.stderr)
    }

    @Test("concurrency (-c): that many requests in flight at the server, no more", arguments: SettingSource.allCases)
    func concurrency(source: SettingSource) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // 12 pages of 250 ms each; per_host stays at its default of 8, so only the global limit holds them.
            let result = try await fetch(
                server, query: "n=120&per_page=10&delay=250", source: source, flag: ["-c", "3"],
                fileSetting: "concurrency: 3", overridden: "concurrency: 6", in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<120))
            #expect(server.stats.requestsServed == 12)
            #expect(server.stats.maxInFlight == 3)
        }
    }

    @Test("per-host limit (--per-host): that many requests in flight to the host", arguments: SettingSource.allCases)
    func perHost(source: SettingSource) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // concurrency stays at its default of 16.
            let result = try await fetch(
                server, query: "n=120&per_page=10&delay=250", source: source, flag: ["--per-host", "2"],
                fileSetting: "per_host: 2", overridden: "per_host: 6", in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<120))
            #expect(server.stats.requestsServed == 12)
            #expect(server.stats.maxInFlight == 2)
        }
    }

    @Test(
        "rate (--rate): a burst of one second's worth, then requests 1/rate apart",
        arguments: SettingSource.allCases)
    func rate(source: SettingSource) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // 60 pages. Up to 32 in flight, so that the bucket, not the in-flight limits, holds them back, and a
            // client that was held up catches up at once. Unpaced (or at 1000/s) they arrive within milliseconds.
            let others = "per_host: 32, concurrency: 32"
            let result = try await fetch(
                server, query: "n=600&per_page=10", source: source, flag: ["--rate", "20"],
                fileSetting: "rate: 20, \(others)", overridden: "rate: 1000, \(others)", in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<600))
            let pacing = RequestPacing(server.requestLog.map(\.receivedAt))
            #expect(pacing.count == 60)
            expectPaced(pacing, rate: 20)
        }
    }

    @Test(
        "longest rate-limit pause (--max-wait): a 60 s Retry-After holds the host only that long",
        arguments: SettingSource.allCases)
    func maxWait(source: SettingSource) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Page 2 answers its first request with 429 and Retry-After: 60. Uncapped, the run would wait a minute
            // (and the test gives up after 20 s).
            let result = try await fetch(
                server, query: "n=30&per_page=10&fault_429=2&retry_after=60", source: source,
                flag: ["--max-wait", "0.5"], fileSetting: "max_wait_s: 0.5", overridden: "max_wait_s: 120",
                in: workspace, timeout: .seconds(20))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<30))
            let totals = try #require(try report(workspace, "report.json")["totals"] as? [String: Any])
            #expect(totals["rate_limit_waits"] as? Int == 1)
            #expect(totals["capped_waits"] as? Int == 1)
            #expect((totals["rate_limit_wait_seconds"] as? Double).map { abs($0 - 0.5) < 0.001 } == true, "\(totals)")
            // At the server: page 2 again no sooner than the capped pause after its 429 (the pause starts when the
            // client reads the answer), and long before the minute asked for.
            let log = server.requestLog
            let limited = try #require(log.first { $0.status == 429 })
            let again = try #require(log.first { $0.target == limited.target && $0.status == 200 })
            let pause = again.receivedAt - limited.receivedAt
            #expect(pause >= .milliseconds(500) && pause < .seconds(10), "\(pause)")
        }
    }

    @Test(
        "per-request timeout (--timeout): a slower answer fails the attempt, then the page",
        arguments: SettingSource.allCases)
    func timeout(source: SettingSource) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // One page that answers after 3 s; two attempts.
            let result = try await fetch(
                server, query: "n=5&per_page=10&delay=3000", source: source, flag: ["--timeout", "0.5"],
                fileSetting: "timeout_s: 0.5", overridden: "timeout_s: 60", extraFlags: ["--attempts", "2"],
                in: workspace)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("within the total timeout of 0.5 seconds"), "\(result.stderr)")
            let failures = try #require(try report(workspace, "report.json")["failures"] as? [[String: Any]])
            #expect(failures.count == 1)
            #expect(failures.first?["attempts"] as? Int == 2)
            // Both attempts reached the server (the second once the first had been given up).
            #expect(server.requestLog.count == 2)
        }
    }
}

/// Checks requests received under a token bucket of `rate` per second holding one second's worth (the scheduler's):
/// no window of the log holds more than the bucket lets through (with 5 requests of slack: a server thread that
/// waits a quarter of a second for a core reads the requests sent meanwhile at once), and after the first burst
/// (`rate` requests, and one more the bucket may have refilled while the first page was read) they keep to a
/// schedule of `rate` per second, within 10%.
///
/// Both hold on a loaded machine: a request held up (in the client, or in a server thread waiting for a core) only
/// arrives later, and the bucket lets the client catch up; the schedule is measured between the most punctual
/// requests early and late in the run (see `RequestPacing.punctualRate`).
func expectPaced(_ pacing: RequestPacing, rate: Double, sourceLocation: SourceLocation = #_sourceLocation) {
    let shown = pacing.offsets.map { String(format: "%.3f", $0) }.joined(separator: " ")
    let excess = pacing.excess(rate: rate, burst: rate)
    #expect(
        excess <= 5, "\(excess) requests more than the bucket allows; received at \(shown)",
        sourceLocation: sourceLocation)
    guard let measured = pacing.scheduledRate(from: Int(rate.rounded(.up)) + 2, nominal: rate) else {
        Issue.record("too few requests after the burst; received at \(shown)", sourceLocation: sourceLocation)
        return
    }
    #expect(
        abs(measured / rate - 1) <= 0.1, "\(measured) requests/s after the burst, not \(rate); received at \(shown)",
        sourceLocation: sourceLocation)
}
