import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// Runs `trawl bench … --json`, expects success and returns the report.
private func bench(_ arguments: [String]) async throws -> [String: Any] {
    let result = try await trawl(["bench", "--json"] + arguments)
    #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
    return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
}

private func latency(_ report: [String: Any]) throws -> [String: Double] {
    try #require(report["latency_ms"] as? [String: Double])
}

/// The lines of `trawl bench`'s table under its title: label (the first 14 columns, trimmed) -> the words after it.
private func tableFields(_ table: String) -> [String: [String]] {
    var fields: [String: [String]] = [:]
    for line in table.split(separator: "\n") where line.hasPrefix("  ") {
        let text = line.dropFirst(2)
        let label = text.prefix(14).trimmingCharacters(in: .whitespaces)
        fields[label] = text.dropFirst(14).split(separator: " ").map(String.init)
    }
    return fields
}

/// The requests the server answered for `target`.
private func served(_ server: TestServer, _ target: String) -> Int {
    server.requestLog.filter { $0.target == target }.count
}

/// The timing tests share two cores with the server: run them one at a time.
@Suite("trawl bench", .serialized, .endToEnd)
struct BenchCLITests {
    @Test func jsonHasTheNewKeysWithSaneValues() async throws {
        try await TestServer.with { server in
            let url = server.url("/json/small")
            let bodySize = try await trawl(["get", url]).stdout.utf8.count
            #expect(bodySize > 400)
            server.resetRequestLog()
            let report = try await bench(["-n", "500", "-c", "8", url])
            #expect(report["requests"] as? Int == 500)
            #expect(served(server, "/json/small") == 500, "the server answered another number of requests")
            #expect(report["urls"] as? [String] == [url])
            #expect(report["concurrency"] as? Int == 8)
            #expect(report["failed"] as? Int == 0)
            #expect(report["mode"] as? String == "closed")
            #expect(report["rate"] is NSNull)
            #expect(report["items"] is NSNull)
            #expect(report["items_per_s"] is NSNull)
            #expect(report["late_starts"] as? Int == 0)
            #expect(report["max_lateness_ms"] as? Double == 0)
            #expect(report["warmup_s"] as? Double == 0)
            #expect((report["requests_per_s"] as? Double ?? 0) > 0)
            #expect((report["mb_per_s"] as? Double ?? 0) > 0)
            #expect((report["cpu_us_per_request"] as? Double ?? 0) > 0)
            #expect((report["statuses"] as? [String: Int]) == ["200": 500])
            let latency = try latency(report)
            #expect(Set(latency.keys) == ["p50", "p90", "p99", "p999", "max"])
            let ordered = [latency["p50"], latency["p90"], latency["p99"], latency["p999"], latency["max"]].map { $0 ?? -1 }
            #expect(ordered[0] > 0)
            #expect(ordered == ordered.sorted(), "\(latency)")
            #expect(ordered[4] < 10_000)
            // The numbers agree with one another: bytes are the bodies received, the rates are the counts over
            // the duration, and no request took longer than the whole run.
            let seconds = try #require(report["duration_s"] as? Double)
            #expect(seconds > 0)
            #expect(report["bytes"] as? Int == 500 * bodySize)
            let perSecond = try #require(report["requests_per_s"] as? Double)
            #expect(abs(perSecond * seconds - 500) < 1e-6, "\(perSecond) requests/s over \(seconds) s")
            let megabytes = try #require(report["mb_per_s"] as? Double)
            #expect(abs(megabytes * seconds * 1e6 - Double(500 * bodySize)) < 1e-3, "\(megabytes) MB/s")
            #expect(ordered[4] <= seconds * 1000 * 1.001 + 0.01, "max \(ordered[4]) ms in a \(seconds) s run")
        }
    }

    @Test func loopsDefaultToHalfTheCoresForPlainRequestsOnLoopback() async throws {
        try await TestServer.with { server in
            let url = server.url("/json/small")
            // The server is on this machine, so auto leaves it half the cores (BenchLoopsTests: the other cases).
            let auto = try await bench(["-n", "200", "-c", "8", url])
            let cores = ProcessInfo.processInfo.activeProcessorCount
            #expect(auto["loops"] as? Int == max(1, min(cores / 2, 4, 8)))
            // Paginated flows parse every page on the loops: one per core, loopback or not.
            let flows = try await bench(
                ["-n", "20", "-c", "8", "--items", "items", "--paginate", "page", "--total-pages", "total_pages",
                 server.url("/paged/page?n=50&per_page=10")])
            #expect(flows["loops"] as? Int == min(cores, 4, 8))
            #expect(auto["failed"] as? Int == 0)
            #expect(auto["requests"] as? Int == 200)
            let single = try await bench(["-n", "200", "-c", "1", url])
            #expect(single["loops"] as? Int == 1)
            #expect(single["requests"] as? Int == 200)
            let three = try await bench(["-n", "300", "-c", "6", "--loops", "3", url])
            #expect(three["loops"] as? Int == 3)
            #expect(three["requests"] as? Int == 300)
            #expect(three["failed"] as? Int == 0)
            #expect((three["statuses"] as? [String: Int]) == ["200": 300])
            // However many loops, exactly -n requests were sent in all.
            #expect(served(server, "/json/small") == 200 + 200 + 300)
        }
    }

    @Test func tableShowsThePercentiles() async throws {
        try await TestServer.with { server in
            let result = try await trawl(["bench", "-n", "200", "-c", "4", server.url("/json/small")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix("trawl bench: 200 requests, 4 concurrent, 1 URL(s)"), "\(result.stdout)")
            #expect(served(server, "/json/small") == 200)
            let fields = tableFields(result.stdout)
            let seconds = try #require(fields["duration"]?.first.flatMap(Double.init), "\(result.stdout)")
            #expect(fields["duration"]?.last == "s")
            #expect(seconds > 0)
            // requests/s is the 200 requests over the duration (both as rounded in the table).
            let perSecond = try #require(fields["requests/s"]?.first.flatMap(Double.init), "\(result.stdout)")
            let fastest = seconds > 0.005 ? 200 / (seconds - 0.005) + 0.5 : .infinity
            #expect(perSecond >= 200 / (seconds + 0.005) - 0.5 && perSecond <= fastest, "\(result.stdout)")
            #expect((fields["throughput"]?.first.flatMap(Double.init) ?? 0) > 0, "\(result.stdout)")
            // The five percentiles, each a positive number of milliseconds, in order, none past the whole run.
            let words = try #require(fields["latency ms"], "\(result.stdout)")
            #expect(stride(from: 0, to: words.count, by: 2).map { words[$0] } == ["p50", "p90", "p99", "p99.9", "max"])
            let values = stride(from: 1, to: words.count, by: 2).compactMap { Double(words[$0]) }
            #expect(values.count == 5, "\(words)")
            #expect(values.allSatisfy { $0 > 0 }, "\(words)")
            #expect(values == values.sorted(), "\(words)")
            #expect((values.last ?? 0) <= (seconds + 0.005) * 1000 * 1.001 + 0.01, "\(result.stdout)")
            #expect((fields["client CPU"]?.first.flatMap(Double.init) ?? 0) > 0, "\(result.stdout)")
            #expect(fields["statuses"] == ["200", "200"], "\(result.stdout)")
            #expect(fields["errors"] == ["none"], "\(result.stdout)")
        }
    }

    @Test func paginatedFlowsCountTheItemsOfEveryPage() async throws {
        try await TestServer.with { server in
            // 1000 items, 100 a page: 10 pages a flow; 50 page requests are 5 whole flows.
            let report = try await bench([
                "--items", "items", "--paginate", "page", "--total-pages", "total_pages", "-c", "1", "-n", "50",
                server.url("/paged/page?n=1000&per_page=100"),
            ])
            #expect(report["requests"] as? Int == 50)
            #expect(report["failed"] as? Int == 0)
            #expect(report["items"] as? Int == 5000)
            #expect(report["flows"] as? Int == 5)
            // Each of the 5 flows walked pages 1 to 10: every page was asked for 5 times, and nothing else.
            let pages = server.requestLog.map(\.target)
            #expect(pages.count == 50)
            for page in 1...10 {
                #expect(pages.filter { $0.hasSuffix("&page=\(page)") }.count == 5, "page \(page): \(pages)")
            }
            #expect((report["items_per_s"] as? Double ?? 0) > 0)
            #expect((report["statuses"] as? [String: Int]) == ["200": 50])
        }
    }

    @Test func paginatedFlowsInParallelStopAtTheRequestCount() async throws {
        try await TestServer.with { server in
            let report = try await bench([
                "--items", "data", "--paginate", "cursor:data.-1.id", "--cursor-param", "starting_after",
                "-c", "3", "-n", "40", server.url("/paged/cursor?n=95&limit=10"),
            ])
            #expect(report["requests"] as? Int == 40)
            #expect(report["failed"] as? Int == 0)
            #expect(server.requestLog.count == 40)
            // Every page but a flow's tenth holds 10 items; the tenth holds 5.
            let items = try #require(report["items"] as? Int)
            #expect(items <= 400 && items >= 400 - 5 * 4, "\(items)")
        }
    }

    @Test func paginatedFlowsDefaultToTheEmbeddedServer() async throws {
        let report = try await bench(["--items", "items", "-n", "120", "-c", "4"])
        #expect(report["requests"] as? Int == 120)
        #expect(report["items"] as? Int == 120 * 100)
        #expect((report["urls"] as? [String])?.first?.contains("/paged/page?n=10000&per_page=100&tag=bench") == true)
    }

    @Test func openModelStartsRequestsAtTheRate() async throws {
        try await TestServer.with { server in
            let report = try await bench(["--rate", "200", "-d", "2", "-c", "16", server.url("/json/small")])
            #expect(report["mode"] as? String == "open")
            #expect(report["rate"] as? Double == 200)
            let started = (report["requests"] as? Int ?? 0) + (report["failed"] as? Int ?? 0)
            #expect(started >= 300 && started <= 500, "\(started)")
            #expect(served(server, "/json/small") == started, "requests started and requests served differ")
            #expect((report["duration_s"] as? Double ?? 0) < 20)
        }
    }

    @Test func openModelMeasuresFromTheIntendedSendTime() async throws {
        try await TestServer.with { server in
            // 2 slots of 50 ms each serve at most 40 requests/s: at 100/s requests start ever later.
            let report = try await bench(["--rate", "100", "-c", "2", "-d", "2", server.url("/delay/50")])
            #expect(report["mode"] as? String == "open")
            let late = try #require(report["late_starts"] as? Int)
            let lateness = try #require(report["max_lateness_ms"] as? Double)
            #expect(late > 0)
            #expect(lateness > 100)
            let latency = try latency(report)
            #expect((latency["p99"] ?? 0) >= lateness, "p99 \(latency["p99"] ?? 0) < lateness \(lateness)")
            #expect((latency["p50"] ?? 0) >= 50)
            #expect((report["unsent"] as? Int ?? 0) > 0)
        }
    }

    @Test func warmupRequestsAreNotCounted() async throws {
        try await TestServer.with { server in
            let report = try await bench(["--warmup", "0.5", "-n", "100", "-c", "4", server.url("/json/small")])
            #expect(report["requests"] as? Int == 100)
            #expect(report["warmup_s"] as? Double == 0.5)
            #expect((report["warmup_requests"] as? Int ?? 0) > 0)
            #expect((report["statuses"] as? [String: Int]) == ["200": 100])
            // The server saw the warm-up too: every request sent is either measured or warm-up.
            let warmupRequests = report["warmup_requests"] as? Int ?? 0
            #expect(server.requestLog.filter { $0.target == "/json/small" }.count == 100 + warmupRequests)
        }
    }

    @Test func sendsTheMethodHeadersAndBody() async throws {
        try await TestServer.with { server in
            let report = try await bench([
                "-X", "PUT", "-H", "X-Test: yes", "--body", "hello", "-n", "20", "-c", "2", server.url("/echo"),
            ])
            #expect(report["requests"] as? Int == 20)
            #expect((report["statuses"] as? [String: Int]) == ["200": 20])
            let log = server.requestLog.filter { $0.target == "/echo" }
            #expect(log.count == 20)
            #expect(log.allSatisfy { $0.method == "PUT" })
            // /echo answers with the request: its body and the header are in the bytes counted.
            #expect((report["bytes"] as? Int ?? 0) > 20 * ("hello".count + "X-Test".count))
        }
    }

    @Test func warmupInTheOpenModelIsScheduledToo() async throws {
        try await TestServer.with { server in
            let report = try await bench(["--rate", "100", "--warmup", "0.5", "-n", "50", "-c", "4",
                                          server.url("/json/small")])
            #expect(report["requests"] as? Int == 50)
            #expect(report["warmup_requests"] as? Int == 50)
        }
    }

    @Test(arguments: [
        (["--rate", "0"], "--rate"),
        (["--rate", "-5"], "--rate"),
        (["-n", "10", "-d", "1"], "either -n or -d"),
        (["--items", "items", "http://127.0.0.1:9/"], "--items needs --paginate"),
        (["--paginate", "page", "http://127.0.0.1:9/"], "--paginate needs --items"),
        (["--total-pages", "total_pages", "http://127.0.0.1:9/"], "--total-pages needs --items"),
        (["--rate", "10", "--items", "items", "--paginate", "page"], "--rate applies to plain URLs"),
        (["--items", "items", "--paginate", "sideways"], "--paginate"),
        (["--warmup", "-1"], "--warmup"),
        (["-H", "no-colon"], "Name: value"),
        (["--loops", "0"], "--loops must be auto or a number from 1 to 64, not '0'"),
        (["--loops", "many"], "--loops must be auto or a number from 1 to 64, not 'many'"),
    ])
    func badFlagCombinationsExitTwo(arguments: [String], message: String) async throws {
        let result = try await trawl(["bench"] + arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
}
