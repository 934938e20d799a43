import Foundation
import Testing
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

/// The timing tests share two cores with the server: run them one at a time.
@Suite("trawl bench", .serialized)
struct BenchCLITests {
    @Test func jsonHasTheNewKeysWithSaneValues() async throws {
        try await TestServer.with { server in
            let report = try await bench(["-n", "500", "-c", "8", server.url("/json/small")])
            #expect(report["requests"] as? Int == 500)
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
        }
    }

    @Test func loopsDefaultToOnePerCoreAtMostFourAndAtMostTheConcurrency() async throws {
        try await TestServer.with { server in
            let url = server.url("/json/small")
            let auto = try await bench(["-n", "200", "-c", "8", url])
            #expect(auto["loops"] as? Int == min(ProcessInfo.processInfo.activeProcessorCount, 4, 8))
            #expect(auto["failed"] as? Int == 0)
            let single = try await bench(["-n", "200", "-c", "1", url])
            #expect(single["loops"] as? Int == 1)
            let three = try await bench(["-n", "300", "-c", "6", "--loops", "3", url])
            #expect(three["loops"] as? Int == 3)
            #expect(three["requests"] as? Int == 300)
            #expect(three["failed"] as? Int == 0)
            #expect((three["statuses"] as? [String: Int]) == ["200": 300])
        }
    }

    @Test func tableShowsThePercentiles() async throws {
        let result = try await trawl(["bench", "-n", "200", "-c", "4"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("p99.9"))
        #expect(result.stdout.contains("requests/s"))
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
