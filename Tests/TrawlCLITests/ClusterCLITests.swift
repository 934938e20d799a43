import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// Running one job as several processes (issue 17): the rate a shard applies, the budget shared through a rate
// store, adaptive concurrency, merged reports and plans.

/// A job of `units` one-page units at the test server (`/paged/page?...&u={u}`), with `settings`.
func clusterJob(_ server: TestServer, units: Int, settings: String, query: String = "n=10&per_page=10") -> String {
    """
    settings: {\(settings)}
    sources:
      - name: items
        url: "\(server.url("/paged/page?" + query))&u={u}"
        paginate: {style: page, total_pages: total_pages}
        items: items
        matrix:
          u: "1..\(units)"

    """
}

@Suite("trawl fetch past one machine: shard rates", .endToEndAlone)
struct ShardRateCLITests {
    @Test("a sharded run without a store sends its 1/N share of --rate, and says so on its first line")
    func shardWithoutStoreTakesItsShare() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 120, settings: "per_host: 32, concurrency: 32"))
            let result = try await trawl(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--rate", "20", "--shard", "0/2"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(
                first == "trawl: rate: 20/s per host is split between 2 shards without a --rate-store: this shard "
                    + "sends at most 10/s per host", "\(result.stderr)")
            let pacing = RequestPacing(server.requestLog.map(\.receivedAt))
            #expect(pacing.count > 40 && pacing.count < 80, "\(pacing.count) units in shard 0/2 of 120")
            expectPaced(pacing, rate: 10)
        }
    }

    @Test("an unsharded run says nothing about shards")
    func unshardedSaysNothingAboutShards() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 2, settings: "rate: 20"))
            let result = try await trawl(["fetch", "job.yaml", "-q", "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
        }
    }
}

@Suite("trawl fetch past one machine: one rate budget through a real redis-server", .endToEndAlone)
struct RateStoreCLITests {
    @Test("two shards sharing --rate R through --rate-store send R requests/s in all at the server (±10%)")
    func twoShardsShareOneBudget() async throws {
        try await withRedis { redis in try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Two of three shards run: sharing the budget, they use all of it (with local shares they would send
            // only 2/3 of it; each with the whole rate, twice it).
            try workspace.write("job.yaml", clusterJob(server, units: 180, settings: "per_host: 32, concurrency: 32"))
            let shards = try (0..<2).map { index in
                try TrawlProcess(
                    ["fetch", "job.yaml", "-q", "-o", "out-\(index).jsonl", "--rate", "20", "--shard", "\(index)/3",
                     "--rate-store", redis.url], in: workspace, environment: [:])
            }
            // Mid-run: the store's keys are namespaced by the job and expire (nothing is left for long).
            #expect(try await waitUntil(shards[0]) { server.requestLog.count >= 40 })
            let keys = try await redis.keysWithTTL()
            for shard in shards {
                let status = try await shard.wait(timeout: .seconds(60))
                #expect(status == 0, "\(shard.stderr)")
                #expect(shard.stderr.isEmpty, "a shard with a store divides nothing: \(shard.stderr)")
            }
            let pacing = RequestPacing(server.requestLog.map(\.receivedAt))
            #expect(pacing.count > 90 && pacing.count < 150, "\(pacing.count) units in shards 0/3 and 1/3 of 180")
            expectPaced(pacing, rate: 20)
            #expect(!keys.isEmpty)
            #expect(keys.keys.allSatisfy { $0.hasPrefix("trawl:") }, "\(keys)")
            #expect(keys.values.allSatisfy { $0 > 0 && $0 <= 10_000 }, "\(keys)")
        } }
    }

    @Test("a store killed mid-run: the shard warns once, keeps to its rate/N share, and rejoins when it is back")
    func storeLostFallsBackToTheShare() async throws {
        try await withRedis { redis in try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 600, settings: "per_host: 32, concurrency: 32"))
            let shard = try TrawlProcess(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--rate", "20", "--shard", "0/2",
                 "--rate-store", redis.url], in: workspace, environment: [:])
            let lag = SchedulingLag.start()
            defer { _ = lag.stop() }
            // Killed once the shard is under way (early: a test process held up on a busy machine must still find
            // it running).
            #expect(try await waitUntil(shard) { server.requestLog.count >= 5 })
            await redis.kill()
            let killed = ContinuousClock.now
            try await Task.sleep(for: .seconds(2))
            // The outage ends when the new store process starts, not when this test notices it is ready: on a loaded
            // machine that can be long after the shard rejoined and spent the fresh store's burst.
            let restarting = ContinuousClock.now
            let late = lag.stop()
            try await redis.restart()
            let restarted = ContinuousClock.now
            let status = try await shard.wait(timeout: .seconds(60))
            #expect(status == 0, "\(shard.stderr)")
            let lines = shard.stderr.split(separator: "\n")
            #expect(lines.filter { $0.contains("does not answer") }.count == 1, "\(shard.stderr)")
            // Rejoined (more than once if a store reply on a loaded machine took past the timeout after the restart).
            #expect(lines.filter { $0.contains("answers again") }.count >= 1, "\(shard.stderr)")
            // Without the store the shard keeps to a share of the rate: 10 requests/s (20 split between 2 shards),
            // far below what 32 in flight at the loopback would send unpaced. That the share starts with an empty
            // bucket (no burst of what it saved while the store held the budget) is timed in-process, where only
            // lower bounds on time are needed (`RateStoreFallbackTests`): counted here, at a server thread of a
            // loaded test process, the stamps bunch. So the bound is 1.5 times the share, plus 2 requests that took
            // their token just before the store died, 3 for a backlog read at once, and what the shard sent at its
            // full rate (20/s) while the server's thread was held up (the measured scheduling lag).
            let outage = server.requestLog.filter { $0.receivedAt > killed && $0.receivedAt < restarting }
            let outageTime = (restarting - killed).components
            let seconds = Double(outageTime.seconds) + Double(outageTime.attoseconds) * 1e-18
            let backlog = (20 * late).rounded(.up)
            #expect(outage.count >= 5, "the shard went on without the store")
            #expect(
                Double(outage.count) <= 15 * seconds + 5 + backlog,
                "\(outage.count) requests in \(seconds) s (scheduling lag \(late) s)")
            // Back with the store: the whole budget again (this shard runs alone).
            let after = RequestPacing(server.requestLog.filter { $0.receivedAt > restarted }.map(\.receivedAt))
            #expect(after.count > 10)
            #expect(after.excess(rate: 20, burst: 20) <= 5)
        } }
    }

    @Test("a 429 with Retry-After seen by one shard pauses the other")
    func retryAfterPausesEveryShard() async throws {
        try await withRedis { redis in try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // One-page units but one: n=150 has a second page, which answers 429 with Retry-After: 2 once. Only
            // the shard that owns that unit sees it.
            try workspace.write(
                "job.yaml",
                """
                settings: {per_host: 4, concurrency: 4}
                sources:
                  - name: items
                    url: "\(server.url("/paged/page?n={n}&per_page=100&fault_429=2&retry_after=2"))"
                    paginate: {style: page, total_pages: total_pages}
                    items: items
                    matrix:
                      n: [150, \((1...60).map(String.init).joined(separator: ", "))]

                """)
            let shards = try (0..<2).map { index in
                try TrawlProcess(
                    ["fetch", "job.yaml", "-q", "-o", "out-\(index).jsonl", "--rate", "15", "--shard", "\(index)/2",
                     "--rate-store", redis.url, "--report", "report-\(index).json"], in: workspace, environment: [:])
            }
            for shard in shards {
                let status = try await shard.wait(timeout: .seconds(60))
                #expect(status == 0, "\(shard.stderr)")
            }
            let log = server.requestLog
            let limited = try #require(log.first { $0.status == 429 })
            // Requests sent before the pause was known have arrived 0.3 s after the 429; from then until the pause
            // ends no request reaches the host, from either shard. Unshared, the other shard would go on with the
            // whole budget (about 20 requests in the window).
            let window = log.filter {
                $0.receivedAt > limited.receivedAt + .milliseconds(300)
                    && $0.receivedAt < limited.receivedAt + .milliseconds(1800)
            }
            #expect(window.isEmpty, "\(window.map(\.target))")
            // The shard that did not see the 429 was still running then: it had requests after the pause.
            let seers = try (0..<2).filter { index in
                let totals = try #require(try report(workspace, "report-\(index).json")["totals"] as? [String: Any])
                return (totals["rate_limit_waits"] as? Int ?? 0) > 0
            }
            #expect(seers.count == 1, "\(seers)")
            #expect(log.filter { $0.receivedAt > limited.receivedAt + .milliseconds(1800) }.count > 5)
        } }
    }
}

@Suite("trawl fetch --adaptive: per-host concurrency that follows the host", .endToEndAlone)
struct AdaptiveConcurrencyCLITests {
    /// Runs `units` one-page units against a host that answers 429 to a request finding more than 3 in flight.
    func run(_ server: TestServer, adaptive: Bool, units: Int = 120, in workspace: Workspace) async throws
        -> RunResult
    {
        try workspace.write(
            "job.yaml",
            clusterJob(
                server, units: units, settings: "per_host: 16, concurrency: 16, backoff_ms: 5, attempts: 20",
                query: "n=10&per_page=10&delay=40&max_in_flight=3"))
        return try await trawl(
            ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--report", "report.json"]
                + (adaptive ? ["--adaptive"] : []), in: workspace)
    }

    @Test("--adaptive converges below a host's concurrency limit: few 429s once it has, min/max/final reported")
    func convergesOnTheHostsLimit() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await run(server, adaptive: true, in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let concurrency = try #require(try report(workspace, "report.json")["concurrency"] as? [String: Any])
            let host = try #require(concurrency.values.first as? [String: Int], "\(concurrency)")
            #expect(host["max"] == 16, "it starts at per_host: \(host)")
            #expect((1...2).contains(host["min"] ?? 0), "\(host)")
            // Near the host's 3 (AIMD probes above it; a loaded client spreads its requests out, so the host lets
            // a few more through), far below the 16 it started at.
            #expect((1...8).contains(host["final"] ?? 0), "\(host)")
            // Converged: the last half of the run's requests met at most a third of 429s. With 16 in flight against
            // a limit of 3, most would be (the mutants that keep 16 in flight); AIMD's probes above 3 cost a few,
            // more on a loaded machine (18 of 88 beside two busy loops).
            let log = server.requestLog
            let late = log.suffix(log.count / 2)
            let limited = late.filter { $0.status == 429 }.count
            #expect(limited * 3 <= late.count, "\(limited) of the last \(late.count) requests were 429s")
        }
    }

    @Test("without --adaptive the same host answers 429 to most requests, and no concurrency is reported")
    func withoutAdaptiveTheHostIsOverrun() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            _ = try await run(server, adaptive: false, units: 24, in: workspace)
            let log = server.requestLog
            let limited = log.filter { $0.status == 429 }.count
            #expect(limited * 3 >= log.count, "\(limited) of \(log.count) requests were 429s")
            #expect(try report(workspace, "report.json")["concurrency"] == nil)
        }
    }
}

@Suite("trawl plan --shards and trawl report --merge", .endToEnd)
struct PlanAndMergeCLITests {
    /// 12 units: n=5..60 step 5 with 10 per page; page 2 always fails (500), so the units with n > 10 fail.
    func writeJob(_ server: TestServer, in workspace: Workspace) throws {
        try workspace.write(
            "job.yaml",
            """
            settings: {attempts: 1}
            sources:
              - name: items
                url: "\(server.url("/paged/page?n={n}&per_page=10&fail_page=2"))"
                paginate: {style: page, total_pages: total_pages}
                items: items
                matrix:
                  n: "5..60 step 5"

            """)
    }

    @Test("plan --json lists each shard's units as fetch --shard runs them; report --merge adds the shards up")
    func planMatchesFetchAndMergeAddsUp() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try writeJob(server, in: workspace)
            let planned = try await trawl(["plan", "job.yaml", "--shards", "3", "--json"], in: workspace)
            #expect(planned.status == 0, "\(planned.stderr)")
            let plan = try jsonObject(Data(planned.stdout.utf8))
            #expect(plan["count"] as? Int == 3 && plan["units"] as? Int == 12, "\(plan)")
            let shards = try #require(plan["shards"] as? [[String: Any]])
            #expect(shards.map { $0["shard"] as? String } == ["0/3", "1/3", "2/3"])
            let lists = shards.map { $0["units"] as? [String] ?? [] }
            #expect(Set(lists.flatMap { $0 }).count == 12 && lists.map(\.count).reduce(0, +) == 12)
            var reports: [String] = []
            for (index, units) in lists.enumerated() {
                let result = try await trawl(
                    ["fetch", "job.yaml", "-q", "--with-meta", "-o", "out-\(index).jsonl", "--shard", "\(index)/3",
                     "--report", "report-\(index).json"], in: workspace)
                #expect(result.status == (units.allSatisfy { $0 == "items n=5" || $0 == "items n=10" } ? 0 : 1))
                let fetched = try workspace.text("out-\(index).jsonl").split(separator: "\n").map {
                    try jsonObject(Data($0.utf8))["unit"] as? String ?? ""
                }
                #expect(Set(fetched).isSubset(of: Set(units)), "shard \(index): \(Set(fetched)) vs plan \(units)")
                reports.append("report-\(index).json")
            }
            let merged = try await trawl(["report", "--merge"] + reports + ["-o", "merged.json"], in: workspace)
            #expect(merged.status == 0, "\(merged.stderr)")
            let mergedReport = try jsonObject(workspace.data("merged.json"))
            let units = try #require(mergedReport["units"] as? [String: Int])
            #expect(units["total"] == 12 && units["done"] == 2 && units["failed"] == 10, "\(units)")
            #expect(mergedReport["complete"] as? Bool == false)
            let totals = try #require(mergedReport["totals"] as? [String: Any])
            // Units n=5 and n=10 whole (15 items), and the first page of each other unit (10 items each).
            #expect(totals["items"] as? Int == 115, "\(totals)")
            let shardRequests = try reports.map {
                (try report(workspace, $0)["totals"] as? [String: Any])?["requests"] as? Int ?? 0
            }
            #expect(totals["requests"] as? Int == shardRequests.reduce(0, +), "\(shardRequests)")
            #expect((mergedReport["failures"] as? [Any])?.count == 10)
            let hosts = try #require(mergedReport["hosts"] as? [String: [String: Any]])
            #expect(hosts.count == 1 && hosts.values.first?["pages"] as? Int == 12, "\(hosts)")
            #expect((mergedReport["sources"] as? [String: [String: Any]])?["items"]?["items"] as? Int == 115)
            // Complete only when every shard is.
            var whole = try report(workspace, reports[0])
            whole["complete"] = true
            let wholeData = try JSONSerialization.data(withJSONObject: whole)
            try workspace.write("whole.json", String(decoding: wholeData, as: UTF8.self))
            for (files, complete) in [(["whole.json", reports[1]], false), (["whole.json", "whole.json"], true)] {
                let result = try await trawl(["report", "--merge"] + files, in: workspace)
                #expect(try jsonObject(Data(result.stdout.utf8))["complete"] as? Bool == complete, "\(files)")
            }
        }
    }

    @Test("report --merge names a file that is not a report, and plan refuses 0 shards")
    func badInputIsNamed() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write("notes.json", "{\"hello\": 1}")
        let merged = try await trawl(["report", "--merge", "notes.json"], in: workspace)
        #expect(merged.status == 1)
        #expect(merged.stderr.contains("notes.json is not a report of trawl fetch --report"), "\(merged.stderr)")
        #expect(merged.stderr.contains("is missing"), "\(merged.stderr)")
        let missing = try await trawl(["report", "--merge", "absent.json"], in: workspace)
        #expect(missing.status == 1 && missing.stderr.contains("absent.json"), "\(missing.stderr)")
        let plan = try await trawl(["plan", "job.yaml", "--shards", "0"], in: workspace)
        #expect(plan.status == 2 && plan.stderr.contains("--shards must be at least 1"), "\(plan.stderr)")
    }

    @Test("report --merge reads an earlier release's camelCase report and writes snake_case with a version")
    func camelCaseReportsMerge() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let stats = """
            {"bytes": 10, "cappedWaits": 1, "failedAttempts": 3, "items": 20, "notModified": 5, "pages": 2,
             "latencyMs": {"max": 4, "p50": 1, "p90": 2, "p99": 3}, "rateLimitWaitSeconds": 0.5,
             "rateLimitWaits": 2, "requests": 5, "retries": 2}
            """
        try workspace.write(
            "old.json",
            """
            {"complete": true, "failures": [], "flags": [], "hosts": {"h:80": \(stats)}, "outputs": [],
             "resumed": false, "seconds": 1.5, "sources": {"things": \(stats)}, "startedAt": "2026-11-28T06:00:00Z",
             "totals": \(stats), "units": {"done": 1, "failed": 0, "skipped": 0, "total": 1}}
            """)
        let merged = try await trawl(["report", "--merge", "old.json", "old.json"], in: workspace)
        #expect(merged.status == 0, "\(merged.stderr)")
        let report = try jsonObject(Data(merged.stdout.utf8))
        #expect(report["version"] as? Int == 1)
        #expect(report["started_at"] as? String == "2026-11-28T06:00:00Z" && report["startedAt"] == nil)
        let totals = try #require(report["totals"] as? [String: Any])
        #expect(totals["failed_attempts"] as? Int == 6 && totals["not_modified"] as? Int == 10, "\(totals)")
        #expect(totals["rate_limit_wait_seconds"] as? Double == 1.0 && totals["failedAttempts"] == nil)
        #expect((report["sources"] as? [String: Any])?.keys.sorted() == ["things"])
    }

    @Test("report --merge of reports whose counts are at Int.max saturates instead of trapping")
    func hugeCountsSaturate() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try await TestServer.with { server in
            let run = try await trawl(
                ["fetch", "--url", server.url("/paged/link?n=3"), "--items", "", "--paginate", "link", "-o", "o.jsonl",
                 "-q", "--report", "r.json"], in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
        }
        // Every whole number of the report at Int.max, every fraction at the largest Double.
        var text = workspace.text("r.json")
        text = text.replacingOccurrences(of: #": \d+\.\d+"#, with: ": 1.7e308", options: .regularExpression)
        text = text.replacingOccurrences(
            of: #": \d+(?=[,\n}])"#, with: ": 9223372036854775807", options: .regularExpression)
        try workspace.write("big.json", text)
        let merged = try await trawl(["report", "--merge", "big.json", "big.json"], in: workspace)
        #expect(merged.status == 0, "\(merged.stderr.prefix(2000))")
        let totals = try #require(try jsonObject(Data(merged.stdout.utf8))["totals"] as? [String: Any])
        #expect(totals["items"] as? Int == Int.max)
    }
}
