import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlTestServer

@testable import Trawl
@testable import TrawlJobs

/// A `page` unit over `/paged/page` whose page count comes from `total_count` and the first page's size, as in
/// the GitHub search source of docs/jobs.md's `jobs.yaml`.
func searchUnit(
    _ server: TestServer, ordinal: Int, count: Int, query: String, maxItems: Int? = nil, maxPages: Int? = nil
) -> WorkUnit {
    let url = server.url("/paged/page?n=\(count)&per_page=10\(query)")
    return WorkUnit(
        sourceIndex: 0, source: "search", ordinal: ordinal, parameters: [], id: "search \(ordinal)",
        request: Request(url: url), pagination: .page(totalItems: "total_count"), items: "items", side: [],
        maxItems: maxItems, maxPages: maxPages)
}

@Suite("Bulk job reports: counts per source and host, failures, latency, completeness", .hangGuard)
struct JobReportTests {
    func settings() -> JobSettings {
        var settings = JobSettings()
        settings.backoff = .milliseconds(5)
        settings.maxBackoff = .milliseconds(40)
        settings.timeout = .seconds(10)
        return settings
    }

    func run(_ units: [WorkUnit], in directory: String, pagesInFlight: Int? = nil) async throws -> JobReport {
        var options = JobRunOptions(output: .file(directory + "/out.jsonl"), stateDirectory: directory + "/state")
        options.pagesInFlightPerUnit = pagesInFlight
        return try await JobRunner(units: units, fingerprint: "report", settings: settings(), options: options).run()
    }

    /// The body bytes of fault-free requests for `urls`: what the job must count for the same pages.
    func bodyBytes(_ urls: [String]) async throws -> Int {
        let client = Client()
        var total = 0
        for url in urls { total += try await client.send(Request(url: url)).body.count }
        return total
    }

    @Test("pages, items, bytes, retries, waits, failures and latency per source and per host, and flags")
    func reportContent() async throws {
        try await TestServer.with { first in
            try await TestServer.with { second in
                let directory = try temporaryDirectory()
                defer { try? FileManager.default.removeItem(atPath: directory) }
                // alpha on one host: 6 pages, page 2 answers 503 once, page 4 429 + Retry-After: 1 once, page 2
                // says incomplete_results: true. beta on another host: a cursor chain whose third page is a 404.
                let alphaQuery = "&tag=alpha&incomplete=2"
                var alpha = pagedUnit(
                    first, "page", ordinal: 0, count: 60, query: alphaQuery + "&fault_5xx=2&fault_429=4&retry_after=1",
                    source: "alpha")
                alpha.id = "alpha"
                var beta = pagedUnit(
                    second, "cursor", ordinal: 1, count: 50, query: "&tag=beta&fault_404=3", source: "beta")
                beta.id = "beta"
                let report = try await run([alpha, beta], in: directory)

                let alphaBytes = try await bodyBytes(
                    (1...6).map { first.url("/paged/page?n=60&per_page=10&limit=10\(alphaQuery)&page=\($0)") })
                let betaBase = "/paged/cursor?n=50&per_page=10&limit=10&tag=beta"
                let betaBytes = try await bodyBytes(
                    [second.url(betaBase), second.url(betaBase + "&starting_after=9")])

                let a = try #require(report.sources["alpha"])
                #expect(a.pages == 6)
                #expect(a.items == 60)
                #expect(a.bytes == alphaBytes)
                #expect(a.requests == 8)
                #expect(a.failedAttempts == 2)
                #expect(a.retries == 2)
                #expect(a.rateLimitWaits == 1)
                #expect(a.rateLimitWaitSeconds == 1)
                #expect(a.cappedWaits == 0)
                let b = try #require(report.sources["beta"])
                #expect(b.pages == 2)
                #expect(b.items == 20)
                #expect(b.bytes == betaBytes)
                #expect(b.requests == 3)
                #expect(b.failedAttempts == 1)
                #expect(b.retries == 0)
                #expect(b.rateLimitWaits == 0)

                // Per host: each source has a host of its own, so the same counts.
                let hostA = Origin.hostKey(of: first.url("/"))
                let hostB = Origin.hostKey(of: second.url("/"))
                #expect(Set(report.hosts.keys) == [hostA, hostB])
                for (host, source) in [(hostA, a), (hostB, b)] {
                    let stats = try #require(report.hosts[host])
                    #expect(stats.pages == source.pages, "\(host)")
                    #expect(stats.items == source.items, "\(host)")
                    #expect(stats.bytes == source.bytes, "\(host)")
                    #expect(stats.requests == source.requests, "\(host)")
                    #expect(stats.retries == source.retries, "\(host)")
                    #expect(stats.failedAttempts == source.failedAttempts, "\(host)")
                    #expect(stats.rateLimitWaits == source.rateLimitWaits, "\(host)")
                    #expect(stats.rateLimitWaitSeconds == source.rateLimitWaitSeconds, "\(host)")
                }
                #expect(report.totals.pages == 8)
                #expect(report.totals.items == 80)
                #expect(report.totals.bytes == alphaBytes + betaBytes)
                #expect(report.totals.retries == 2)
                #expect(report.totals.failedAttempts == 3)
                #expect(report.totals.rateLimitWaits == 1)

                // Latency percentiles of the successful responses, per scope.
                for stats in [a, b, report.totals] + Array(report.hosts.values) {
                    let latency = stats.latencyMs
                    #expect(latency.p50 > 0)
                    #expect(latency.p50 <= latency.p90 && latency.p90 <= latency.p99 && latency.p99 <= latency.max)
                }

                #expect(report.units.done == 1)
                #expect(report.units.failed == 1)
                let failure = try #require(report.failures.first)
                #expect(report.failures.count == 1)
                #expect(failure.source == "beta")
                #expect(failure.unit == "beta")
                #expect(failure.pageIndex == 2)
                #expect(failure.page == "cursor 19")
                #expect(failure.url.hasSuffix("starting_after=19"))
                #expect(failure.status == 404)
                #expect(failure.attempts == 1)
                #expect(failure.error.contains("HTTP 404"), "\(failure.error)")
                #expect(failure.keptPages == 2)
                #expect(failure.keptItems == 20)

                #expect(report.flags.count == 1)
                let flag = try #require(report.flags.first)
                #expect(flag.source == "alpha")
                #expect(flag.kind == .incompleteResults)
                #expect(flag.pageIndices == [1])

                // The JSON form that `trawl fetch --report` writes carries the same names.
                let encoder = JSONEncoder()
                encoder.dateEncodingStrategy = .iso8601
                let json = try #require(
                    try JSONSerialization.jsonObject(with: encoder.encode(report)) as? [String: Any])
                let sources = try #require(json["sources"] as? [String: [String: Any]])
                let latency = try #require(sources["alpha"]?["latency_ms"] as? [String: Any])
                #expect(Set(latency.keys) == ["p50", "p90", "p99", "max"])
                #expect(sources["alpha"]?["rate_limit_waits"] as? Int == 1)
                let flags = try #require(json["flags"] as? [[String: Any]])
                #expect(flags.first?["kind"] as? String == "incomplete_results")
            }
        }
    }

    @Test("percentiles are nearest-rank over the samples")
    func percentiles() {
        let samples = (1...100).map(Double.init).shuffled()
        let result = JobMetrics.percentiles(samples)
        #expect(result.p50 == 50)
        #expect(result.p90 == 90)
        #expect(result.p99 == 99)
        #expect(result.max == 100)
        #expect(JobMetrics.percentiles([]).max == 0)
        #expect(JobMetrics.percentiles([7]).p50 == 7)
    }

    @Test("a search cap: without max_items the pages past it fail; with it the walk stops there, flagged")
    func searchCap() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // 500 items announced, but the API refuses pages past the first 100 results (GitHub: 1,000).
            let query = "&tag=s&result_cap=100&incomplete=1,3"
            let uncapped = try await run([searchUnit(server, ordinal: 0, count: 500, query: query)], in: directory)
            let refused = try #require(uncapped.failures.first)
            #expect(refused.status == 422)
            #expect(refused.pageIndex == 10)

            try FileManager.default.removeItem(atPath: directory + "/state")
            server.resetStats()
            let capped = try await run(
                [searchUnit(server, ordinal: 0, count: 500, query: query, maxItems: 100)], in: directory)
            #expect(capped.complete)
            #expect(capped.failures.isEmpty)
            #expect(fileText(directory + "/out.jsonl") == taggedLines("s", 100))
            #expect(server.stats.requestsServed == 10)
            let byKind = Dictionary(uniqueKeysWithValues: capped.flags.map { ($0.kind, $0) })
            #expect(byKind[.capped]?.message == "capped at 100 of 500 items (max_items 100: 10 of 50 pages)")
            // incomplete_results is read on every page, not only the first, without being a side field.
            #expect(byKind[.incompleteResults]?.pageIndices == [0, 2])
            #expect(byKind[.shortOfTotal] == nil, "the cap explains the short count")

            try FileManager.default.removeItem(atPath: directory + "/state")
            let byPages = try await run(
                [searchUnit(server, ordinal: 0, count: 500, query: query, maxPages: 4)], in: directory)
            #expect(fileText(directory + "/out.jsonl") == taggedLines("s", 40))
            #expect(byPages.flags.first { $0.kind == .capped }?.message
                == "capped at 40 of 500 items (max_pages 4: 4 of 50 pages)")
        }
    }

    @Test("caps stop serial walks too: cursor chains and pages fetched one at a time")
    func serialCaps() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var cursor = pagedUnit(server, "cursor", ordinal: 0, count: 100, query: "&tag=c")
            cursor.maxItems = 25
            let byItems = try await run([cursor], in: directory)
            #expect(byItems.complete)
            #expect(fileText(directory + "/out.jsonl") == taggedLines("c", 30), "whole pages: 3 of 10")
            #expect(byItems.flags.map(\.message) == ["capped at 30 items (max_items 25: 3 pages; the server had more)"])

            try FileManager.default.removeItem(atPath: directory + "/state")
            let search = searchUnit(server, ordinal: 0, count: 500, query: "&tag=s&result_cap=100", maxPages: 2)
            let byPages = try await run([search], in: directory, pagesInFlight: 1)
            #expect(fileText(directory + "/out.jsonl") == taggedLines("s", 20))
            #expect(byPages.flags.map(\.message) == ["capped at 20 of 500 items (max_pages 2: 2 pages)"])

            // A chain that ends by itself within the cap is not flagged.
            try FileManager.default.removeItem(atPath: directory + "/state")
            var short = pagedUnit(server, "cursor", ordinal: 0, count: 20, query: "&tag=short")
            short.maxPages = 5
            let whole = try await run([short], in: directory)
            #expect(whole.flags.isEmpty)
            #expect(fileText(directory + "/out.jsonl") == taggedLines("short", 20))
        }
    }

    @Test("completeness flags are kept in the checkpoint: a resumed run reports those found before")
    func flagsSurviveResume() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = [
                // Capped and incomplete on its first page; merged into the output in the first run.
                searchUnit(server, ordinal: 0, count: 500, query: "&tag=a&incomplete=1", maxItems: 30),
                // Fails in the first run (a 404 once), so the job is resumed.
                pagedUnit(server, "cursor", ordinal: 1, count: 30, query: "&tag=b&fault_404=2"),
                // Incomplete on its first page, then fails at its third: resumed after its first page.
                searchUnit(server, ordinal: 2, count: 50, query: "&tag=c&incomplete=1&fault_404=3"),
            ]
            let first = try await run(units, in: directory)
            #expect(!first.complete)
            #expect(first.failures.count == 2)
            let expectedFlags: [(String, CompletenessFlag.Kind)] = [
                ("search 0", .incompleteResults), ("search 0", .capped), ("search 2", .incompleteResults),
            ]
            #expect(first.flags.map(\.unit) == expectedFlags.map(\.0))
            #expect(first.flags.map(\.kind) == expectedFlags.map(\.1))

            server.resetRequestLog()
            let second = try await run(units, in: directory)
            #expect(second.complete, "\(second.failures)")
            #expect(second.resumed)
            #expect(second.units.skipped == 1)
            #expect(second.flags.map(\.unit) == expectedFlags.map(\.0))
            #expect(second.flags.map(\.kind) == expectedFlags.map(\.1))
            #expect(second.flags == first.flags)
            // Unit 2's first page was not fetched again (only its pages 3 to 5): its flag came from the checkpoint.
            #expect(server.requestLog.filter { $0.target.contains("tag=c") }.count == 3)
            #expect(
                fileText(directory + "/out.jsonl")
                    == taggedLines("a", 30) + taggedLines("b", 30) + taggedLines("c", 50))
        }
    }
}

@Suite("JobStats.added: shard totals saturate at the bounds and count every counter", .hangGuard)
struct JobStatsAddedTests {
    func stats(_ value: Int) -> JobStats {
        var stats = JobStats()
        stats.requests = value
        stats.pages = value
        stats.items = value
        stats.bytes = value
        stats.retries = value
        stats.failedAttempts = value
        stats.rateLimitWaits = value
        stats.cappedWaits = value
        stats.notModified = value
        return stats
    }

    func counters(_ stats: JobStats) -> [Int] {
        [stats.requests, stats.pages, stats.items, stats.bytes, stats.retries, stats.failedAttempts,
         stats.rateLimitWaits, stats.cappedWaits, stats.notModified]
    }

    @Test("sums, and .max or .min where a sum overflows in either direction")
    func saturates() {
        #expect(counters(JobStats.added([stats(2), stats(3)])) == Array(repeating: 5, count: 9))
        #expect(counters(JobStats.added([stats(.max), stats(1)])) == Array(repeating: .max, count: 9))
        #expect(counters(JobStats.added([stats(.max - 1), stats(.max)])) == Array(repeating: .max, count: 9))
        #expect(counters(JobStats.added([stats(.min), stats(-1)])) == Array(repeating: .min, count: 9))
        #expect(counters(JobStats.added([stats(.min), stats(.max)])) == Array(repeating: -1, count: 9))
        #expect(counters(JobStats.added([stats(.max), stats(-1), stats(1)])) == Array(repeating: .max, count: 9))
    }

    @Test("drift counters: summed where any shard has them, absent where none does, and written snake_case")
    func driftCounters() throws {
        var drifted = JobStats()
        drifted.duplicatesDropped = 3
        drifted.rereads = .max
        var other = JobStats()
        other.rereads = 2
        let sum = JobStats.added([drifted, JobStats(), other])
        #expect(sum.duplicatesDropped == 3 && sum.rereads == .max)
        let none = JobStats.added([JobStats(), JobStats()])
        #expect(none.duplicatesDropped == nil && none.rereads == nil)
        let json = try #require(String(data: try JSONEncoder().encode(sum), encoding: .utf8))
        #expect(json.contains("\"duplicates_dropped\":3") && json.contains("\"rereads\":"), "\(json)")
    }
}
