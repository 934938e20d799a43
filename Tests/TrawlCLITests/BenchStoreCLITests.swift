import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// `trawl bench --rate R --rate-store`: one rate for several load-generating processes (issue 17), against a real
// redis-server on loopback; the rate is measured at the embedded test server.

/// The JSON report a finished `trawl bench --json` process printed.
private func benchReport(_ process: TrawlProcess) throws -> [String: Any] {
    try jsonObject(Data(process.stdout.utf8))
}

private func rateStore(_ report: [String: Any]) throws -> [String: Any] {
    try #require(report["rate_store"] as? [String: Any], "\(report.keys.sorted())")
}

/// Stops a bench process as Ctrl-C does (it prints what it measured and exits 130) and waits for it: the tests
/// run the processes with a long -d and end them once they have seen what they check, so that a test process held
/// up on a loaded machine cannot find them already finished.
private func interrupt(_ process: TrawlProcess) async throws {
    process.process.terminate(SIGINT)
    let status = try await process.wait(timeout: .seconds(60))
    #expect(status == 130, "\(process.stderr)")
}

/// Restarts the store on its port, trying again for a while: on a loaded machine with hundreds of connections
/// opening and closing, the port can be held for a moment by another socket (a full run once gave up on it).
private func restartStore(_ redis: RedisServer) async throws {
    for attempt in 1...10 {
        do {
            try await redis.restart()
            return
        } catch where attempt < 10 {
            try await Task.sleep(for: .milliseconds(500))
        }
    }
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

@Suite("trawl bench --rate-store: one rate for several processes through a real redis-server", .endToEndAlone)
struct BenchStoreCLITests {
    @Test("two bench processes with --rate R and the same store send R requests/s in all at the server (±10%)")
    func twoProcessesShareOneRate() async throws {
        try await withRedis { redis in try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let url = server.url("/json/small")
            // The same command twice: the key derived from the method and URL is the same, so they share.
            let processes = try (0..<2).map { _ in
                try TrawlProcess(
                    ["bench", url, "--rate", "40", "-d", "60", "-c", "4", "--json", "--rate-store", redis.url],
                    in: workspace, environment: [:])
            }
            // Mid-run: the store's keys are namespaced by the budget and expire.
            #expect(try await waitUntil(processes[0]) { server.requestLog.count >= 40 })
            let keys = try await redis.keysWithTTL()
            // About 5 s of the shared schedule, then both stop.
            #expect(try await waitUntil(processes[0]) { server.requestLog.count >= 200 })
            for process in processes {
                try await interrupt(process)
                // Only the command that merges the processes' results.
                #expect(
                    process.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("merge: ") }, "\(process.stderr)")
            }
            #expect(!keys.isEmpty)
            #expect(keys.keys.allSatisfy { $0.hasPrefix("trawl:bench:") }, "\(keys)")
            #expect(keys.values.allSatisfy { $0 > 0 && $0 <= 61_000 }, "\(keys)")
            // The last process to leave removes what they shared.
            #expect(try await redis.keysWithTTL().isEmpty)
            let reports = try processes.map(benchReport)
            let log = server.requestLog.filter { $0.target == "/json/small" }
            let pacing = RequestPacing(log.map(\.receivedAt))
            // Each alone would send 40/s, 80/s together; sharing, 40/s in all (the first sends the whole rate until
            // the second joins).
            expectPaced(pacing, rate: 40)
            let sent = reports.map { ($0["requests"] as? Int ?? 0) + ($0["failed"] as? Int ?? 0) }
            #expect(sent.allSatisfy { $0 >= 40 }, "both processes took part: \(sent)")
            for report in reports {
                let store = try rateStore(report)
                #expect(store["store"] as? String == redis.url, "\(store)")
                #expect((1...2).contains(store["processes"] as? Int ?? 0), "\(store)")
                #expect(store["rate"] as? Double == 40, "\(store)")
                #expect(store["pauses"] as? Int == 0 && store["local_share_s"] as? Double == 0, "\(store)")
            }
        } }
    }

    @Test("a 429 with Retry-After seen by one bench process pauses the other until it ends")
    func retryAfterPausesEveryProcess() async throws {
        try await withRedis { redis in try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // B runs at the whole rate; A joins later, and its first request answers 429 with Retry-After: 2.
            let plain = server.url("/json/small")
            let limited = server.url("/paged/page?n=10&per_page=10&fault_429=1&retry_after=2")
            let common = ["--rate", "20", "-c", "4", "--json", "--rate-store", redis.url, "--rate-key", "pause-test"]
            let second = try TrawlProcess(["bench", plain, "-d", "60"] + common, in: workspace, environment: [:])
            #expect(try await waitUntil(second) { server.requestLog.count >= 10 })
            let first = try TrawlProcess(["bench", limited, "-d", "4"] + common, in: workspace, environment: [:])
            #expect(try await first.wait(timeout: .seconds(60)) == 0, "\(first.stderr)")
            // B goes on after the pause, then stops.
            let answer = try #require(server.requestLog.first { $0.status == 429 })
            #expect(
                try await waitUntil(second) {
                    server.requestLog.contains {
                        $0.target == "/json/small" && $0.receivedAt > answer.receivedAt + .milliseconds(2500)
                    }
                })
            try await interrupt(second)
            let log = server.requestLog
            // Requests sent before the pause was known have arrived 0.3 s after the 429; from then until the pause
            // ends nothing reaches the host, from either process. Unshared, B would go on at 20/s (about 30).
            let window = log.filter {
                $0.receivedAt > answer.receivedAt + .milliseconds(300)
                    && $0.receivedAt < answer.receivedAt + .milliseconds(1800)
            }
            #expect(window.isEmpty, "\(window.map(\.target))")
            // The slots due during the pause were skipped, not sent in a burst when it ended: from its end on, the
            // two keep to the schedule (no more than 5 early over 20/s with no burst).
            let resumed = RequestPacing(
                log.filter { $0.receivedAt > answer.receivedAt + .milliseconds(1800) }.map(\.receivedAt))
            #expect(resumed.excess(rate: 20, burst: 1) <= 5, "\(resumed.offsets)")
            // Both went on after the pause.
            let after = log.filter { $0.receivedAt > answer.receivedAt + .milliseconds(2000) }
            #expect(after.contains { $0.target == "/json/small" })
            #expect(after.contains { $0.target.hasPrefix("/paged/") })
            // B's report says why its requests/s dropped.
            let store = try rateStore(try benchReport(second))
            #expect(store["pauses"] as? Int == 1, "\(store)")
            #expect((store["paused_s"] as? Double ?? 0) >= 1.5, "\(store)")
            #expect(try benchReport(first)["statuses"] as? [String: Int] != nil)
        } }
    }

    @Test("a store that does not answer: the bench warns once and keeps to its share of --rate (--processes)")
    func unreachableStoreKeepsToTheShare() async throws {
        let closed = try await RedisServer()
        let address = closed.url
        await closed.stop()
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let started = ContinuousClock.now
            let result = try await trawl(
                ["bench", server.url("/json/small"), "--rate", "40", "--processes", "2", "-d", "4", "-c", "4",
                 "--json", "--rate-store", address], in: workspace)
            let elapsed = seconds(ContinuousClock.now - started)
            #expect(result.status == 0, "\(result.stderr)")
            let warnings = result.stderr.split(separator: "\n").filter { $0.contains("does not answer") }
            #expect(warnings.count == 1, "\(result.stderr)")
            // 40/s shared by 2 processes: this one sends 20/s, not 40.
            let pacing = RequestPacing(server.requestLog.map(\.receivedAt))
            #expect(pacing.count >= 60 && pacing.count <= Int(20 * elapsed) + 5, "\(pacing.count) in \(elapsed) s")
            expectPaced(pacing, rate: 20)
            let store = try rateStore(try jsonObject(Data(result.stdout.utf8)))
            #expect((store["local_share_s"] as? Double ?? 0) >= 3, "\(store)")
        }
    }

    @Test("a store killed mid-run: each process warns once, keeps to its share of the processes it saw, rejoins")
    func storeLostMidRun() async throws {
        try await withRedis { redis in try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Told apart at the server by their URLs (one --rate-key).
            let processes = try (0..<2).map { index in
                try TrawlProcess(
                    ["bench", server.url("/json/small?p=\(index)"), "--rate", "40", "-d", "60", "-c", "4", "--json",
                     "--rate-store", redis.url, "--rate-key", "lost"], in: workspace, environment: [:])
            }
            // Both run, and have beaten since (each has seen the other), before the store dies.
            #expect(
                try await waitUntil(processes[1]) {
                    (0..<2).allSatisfy { index in
                        server.requestLog.filter { $0.target.hasSuffix("p=\(index)") }.count >= 10
                    }
                })
            try await Task.sleep(for: .milliseconds(1500))
            let lag = SchedulingLag.start()
            defer { _ = lag.stop() }
            await redis.kill()
            let killed = ContinuousClock.now
            try await Task.sleep(for: .seconds(3))
            let restarting = ContinuousClock.now
            let late = lag.stop()
            try await restartStore(redis)
            let restarted = ContinuousClock.now
            let rejoinLag = SchedulingLag.start()
            defer { _ = rejoinLag.stop() }
            #expect(
                try await waitUntil(processes[0]) { server.requestLog.filter { $0.receivedAt > restarted }.count >= 120 })
            let rejoinLate = rejoinLag.stop()
            for process in processes {
                try await interrupt(process)
                let lines = process.stderr.split(separator: "\n")
                #expect(lines.filter { $0.contains("does not answer") }.count == 1, "\(process.stderr)")
                #expect(lines.filter { $0.contains("answers again") }.count >= 1, "\(process.stderr)")
                let store = try rateStore(try benchReport(process))
                #expect((store["local_share_s"] as? Double ?? 0) >= 2, "\(store)")
            }
            // Without the store each sends 20/s (40 shared by the 2 it saw), not 40: 40/s in all. The bound sits
            // halfway to what a process ignoring the other would send (80/s), so stamps bunched by a loaded test
            // process do not decide it: plus 2 slots taken from the store just before it died, 3 for a server thread
            // reading a backlog at once, and what both sent at the full rate while that thread was held up (the
            // measured scheduling lag).
            let log = server.requestLog
            let outage = log.filter { $0.receivedAt > killed && $0.receivedAt < restarting }
            let outageSeconds = seconds(restarting - killed)
            #expect(outage.count >= 40, "the processes went on without the store")
            #expect(
                Double(outage.count) <= 60 * outageSeconds + 5 + (80 * late).rounded(.up),
                "\(outage.count) requests in \(outageSeconds) s (scheduling lag \(late) s)")
            // Back with the store: one shared schedule again, no burst of what the local shares did not send. Counted
            // over the whole time since the restart (3 s at 40/s), not per window: a server thread of this (loaded)
            // test process reading a backlog at once bunches receive times without adding requests (a windowed
            // excess of 10 was seen in a full CI run), while a burst of extra sends adds to the count however it is
            // timed. What that thread read at once just after the restart, sent before it, is what both processes
            // send at the whole rate in the measured scheduling lag (61 in 1.04 s was seen beside two busy loops).
            let after = log.filter { $0.receivedAt > restarted }.map(\.receivedAt)
            #expect(after.count > 20)
            let span = seconds((after.max() ?? restarted) - restarted)
            #expect(
                Double(after.count) <= 40 * span + 4 + 5 + (80 * rejoinLate).rounded(.up),
                "\(after.count) requests in \(span) s after the restart (scheduling lag \(rejoinLate) s)")
        } }
    }

    @Test("paginated flows with --rate and a store take a slot of the shared schedule for each page")
    func flowsTakeASlotPerPage() async throws {
        try await withRedis { redis in try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Unthrottled, 4 flows over the loopback would send hundreds of pages a second.
            let process = try TrawlProcess(
                ["bench", server.url("/paged/page?n=100&per_page=10"), "--items", "items", "--paginate", "page",
                 "--total-pages", "total_pages", "--rate", "30", "-d", "60", "-c", "4", "--json",
                 "--rate-store", redis.url], in: workspace, environment: [:])
            #expect(try await waitUntil(process) { server.requestLog.count >= 150 })
            try await interrupt(process)
            expectPaced(RequestPacing(server.requestLog.map(\.receivedAt)), rate: 30)
            let report = try benchReport(process)
            #expect(report["mode"] as? String == "closed" && (report["flows"] as? Int ?? 0) >= 5, "\(report)")
            #expect(try rateStore(report)["rate"] as? Double == 30)
        } }
    }

    @Test("--rate-store without --rate is a usage error naming both flags")
    func storeNeedsARate() async throws {
        let result = try await trawl(["bench", "http://127.0.0.1:9/", "--rate-store", "redis://127.0.0.1:6379/0"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--rate-store needs --rate"), "\(result.stderr)")
    }
}
