import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlTestServer

// `trawl fetch --metrics-listen` and `--metrics-push` (issue 17): the job's counters in Prometheus text format,
// served while it runs and pushed to a Pushgateway when it ends.

/// The metrics endpoint `trawl` named on stderr (`--metrics-listen 127.0.0.1:0`), once it has.
private func metricsURL(_ child: TrawlProcess) async throws -> String? {
    var url: String?
    _ = try await waitUntil(child, timeout: .seconds(30)) {
        url = child.stderr.split(separator: "\n").first { $0.hasPrefix("trawl: metrics at ") }
            .map { String($0.dropFirst("trawl: metrics at ".count)) }
        return url != nil
    }
    return url
}

private func scrape(_ url: String) async throws -> (status: Int, contentType: String?, text: String) {
    let response = try await Client().send(Request(url: url))
    return (response.status, response.head.headers["content-type"], response.bodyText)
}

@Suite("trawl fetch --metrics-listen / --metrics-push: Prometheus metrics", .endToEnd)
struct MetricsCLITests {
    @Test("--metrics-listen serves the job's counters in Prometheus text format while it runs")
    func listenServesPrometheusTextDuringTheRun() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // 2 units of 3 pages; every page 3 waits 120 s, so the run is surely still going when it is scraped,
            // however long a loaded machine holds this test up (the child is killed after; the server does not wait
            // for the delayed answers). With 15 s the full suite's load ended the run first, twice in nine runs.
            try workspace.write("job.yaml", clusterJob(server, units: 2, settings: "per_host: 2, concurrency: 2",
                                                       query: "n=30&per_page=10&delay=120000&delay_page=3"))
            let child = try TrawlProcess(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--metrics-listen", "127.0.0.1:0"], in: workspace,
                environment: [:])
            defer { child.kill() }
            let url = try #require(try await metricsURL(child), "\(child.stderr)")
            #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/metrics"))
            let host = "http://127.0.0.1:\(server.port)"
            let labels = ["host": host, "source": "items", "shard": "all"]
            // Pages 1 and 2 of both units answered; both pages 3 still waiting.
            var scraped: (status: Int, contentType: String?, text: String)
            do {
                scraped = try await scrape(url)
            } catch {
                // Seen twice in loaded CI runs and never reproduced: say whether the child had ended, and why.
                Issue.record("scraping \(url): \(error); child running: \(child.isRunning); stderr: \(child.stderr)")
                return
            }
            let deadline = ContinuousClock.now + .seconds(12)
            func requests() throws -> Double { try PrometheusText(scraped.text).total("trawl_requests_total", labels) }
            while ContinuousClock.now < deadline, try requests() < 4 || server.requestLog.count < 6 {
                try await Task.sleep(for: .milliseconds(20))
                scraped = try await scrape(url)
            }
            #expect(child.isRunning, "the run ended before page 3 answered: \(child.stderr)")
            #expect(scraped.status == 200)
            #expect(scraped.contentType == "text/plain; version=0.0.4; charset=utf-8")
            let metrics = try PrometheusText(scraped.text)
            for name in ["requests", "retries", "failed_attempts", "pages", "items", "bytes", "http_429", "pauses"] {
                #expect(metrics.types["trawl_\(name)_total"] == "counter", "\(name): \(scraped.text)")
                #expect(metrics.helps["trawl_\(name)_total"]?.isEmpty == false)
            }
            #expect(metrics.types["trawl_request_duration_seconds"] == "histogram")
            // What the server answered so far, counted exactly (it logs a request as it arrives: both pages 3 are
            // logged, and still waiting).
            let log = server.requestLog
            let answered = log.filter { !$0.target.split(whereSeparator: { "?&".contains($0) }).contains("page=3") }
                .count
            #expect(log.count == 6 && answered == 4, "\(log.map(\.target))")
            #expect(metrics.total("trawl_requests_total", labels) == Double(answered), "\(scraped.text)")
            // Pages count once written durably (a unit's pages may wait for its checkpoint): none past the 4.
            let pages = metrics.total("trawl_pages_total", labels)
            #expect(pages <= 4 && metrics.total("trawl_items_total", labels) == pages * 10)
            #expect(metrics.total("trawl_request_duration_seconds_count", labels) == 4)
            #expect(metrics.total("trawl_bytes_total", labels) > 0)
        }
    }

    @Test("--metrics-push PUTs the final counters, equal to what the server saw, to the Pushgateway's grouping key")
    func pushSendsTheFinalCounters() async throws {
        let gateway = try await FakePushgateway.start()
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 4, settings: "per_host: 4, concurrency: 4",
                                                       query: "n=25&per_page=10"))
            let result = try await trawl(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--shard", "0/1", "--metrics-push", gateway.url + "/"],
                in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            let pushes = gateway.received
            try #require(pushes.count == 1, "\(pushes.map(\.target))")
            #expect(pushes[0].method == "PUT")
            // The shard label "0/1" holds a slash: the grouping key spells it in base64url.
            #expect(pushes[0].target == "/metrics/job/trawl/shard@base64/"
                + Data("0/1".utf8).base64EncodedString())
            let metrics = try PrometheusText(pushes[0].body)
            let labels = ["host": "http://127.0.0.1:\(server.port)", "source": "items", "shard": "0/1"]
            #expect(Int(metrics.total("trawl_requests_total", labels)) == server.requestLog.count)
            #expect(metrics.total("trawl_pages_total", labels) == 12)
            #expect(metrics.total("trawl_items_total", labels) == 100)
            let lines = workspace.text("out.jsonl").split(separator: "\n").count
            #expect(lines == 100)
            #expect(metrics.total("trawl_request_duration_seconds_count", labels) == 12)
            #expect(metrics.total("trawl_retries_total", labels) == 0)
        }
        await gateway.stop()
    }

    @Test("429s, the retries after them and the host pauses they impose are counted")
    func tooManyRequestsRetriesAndPausesAreCounted() async throws {
        let gateway = try await FakePushgateway.start()
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Page 2 of each of the 2 units answers 429 with Retry-After: 1 once, then 200.
            try workspace.write("job.yaml", clusterJob(server, units: 2, settings: "per_host: 2, concurrency: 2",
                                                       query: "n=20&per_page=10&fault_429=2&retry_after=1"))
            let result = try await trawl(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--metrics-push", gateway.url], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let pushes = gateway.received
            try #require(pushes.count == 1)
            let metrics = try PrometheusText(pushes[0].body)
            #expect(metrics.total("trawl_http_429_total") == 2, "\(pushes[0].body)")
            #expect(metrics.total("trawl_retries_total") == 2)
            #expect(metrics.total("trawl_pauses_total") == 2)
            #expect(metrics.total("trawl_pages_total") == 4)
            #expect(Int(metrics.total("trawl_requests_total")) == server.requestLog.count)
            #expect(server.requestLog.filter { $0.status == 429 }.count == 2)
        }
        await gateway.stop()
    }

    @Test("a failed push is a warning: the job still succeeds")
    func failedPushIsAWarning() async throws {
        let gateway = try await FakePushgateway.start(status: .internalServerError)
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 1, settings: "per_host: 1"))
            let result = try await trawl(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--metrics-push", gateway.url], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("trawl: warning: --metrics-push \(gateway.url)/metrics/job/trawl: "
                + "the Pushgateway answered 500"), "\(result.stderr)")
            #expect(gateway.received.count == 1)
        }
        await gateway.stop()
    }

    @Test("a failed job, or one that cannot run, still pushes its metrics")
    func failedJobStillPushes() async throws {
        let gateway = try await FakePushgateway.start()
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 1, settings: "per_host: 1, attempts: 1",
                                                       query: "n=30&per_page=10&fail_page=2"))
            let result = try await trawl(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--metrics-push", gateway.url], in: workspace)
            #expect(result.status == 1, "\(result.stderr)")
            let pushes = gateway.received
            try #require(pushes.count == 1)
            let metrics = try PrometheusText(pushes[0].body)
            #expect(metrics.total("trawl_failed_attempts_total") >= 1, "\(pushes[0].body)")
            // A run that cannot go on at all (its state directory cannot be made) pushes too.
            try workspace.write("plain", "a file, not a directory")
            let stopped = try await trawl(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--state", "plain/state", "--metrics-push", gateway.url],
                in: workspace)
            #expect(stopped.status == 1, "\(stopped.stderr)")
            #expect(stopped.stderr.contains("cannot use"), "\(stopped.stderr)")
            #expect(gateway.received.count == 2)
        }
        await gateway.stop()
    }

    @Test("without the flags no port opens: the run holds no listening socket")
    func defaultRunOpensNoPort() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Page 2 waits 15 s: the run is surely still going when its sockets are read (it is killed after).
            try workspace.write("job.yaml", clusterJob(server, units: 1, settings: "per_host: 1, concurrency: 1",
                                                       query: "n=30&per_page=10&delay=15000&delay_page=2"))
            for flags in [[], ["--metrics-listen", "127.0.0.1:0"]] {
                let before = server.requestLog.count
                let child = try TrawlProcess(["fetch", "job.yaml", "-q", "-o", "out.jsonl"] + flags, in: workspace,
                                             environment: [:])
                #expect(try await waitUntil(child) { server.requestLog.count > before })
                let listening = listeningSockets(of: child.process.pid)
                #expect(child.isRunning, "the run ended before page 3 answered: \(child.stderr)")
                child.kill()
                _ = try await child.wait()
                #expect(listening == (flags.isEmpty ? 0 : 1), "flags \(flags): \(listening) listening sockets")
            }
        }
    }

    @Test("settings.metrics_listen in the job file listens as the flag does; a name there is a job file error")
    func jobFileSettingListens() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let job = clusterJob(server, units: 1, settings: "per_host: 1, metrics_listen: \"127.0.0.1:0\"")
            try workspace.write("job.yaml", job)
            let result = try await trawl(["fetch", "job.yaml", "-q", "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("trawl: metrics at http://127.0.0.1:"), "\(result.stderr)")
            try workspace.write("job.yaml", job.replacingOccurrences(of: "127.0.0.1:0", with: "localhost:0"))
            let named = try await trawl(["fetch", "job.yaml", "-q", "-o", "out.jsonl"], in: workspace)
            #expect(named.status == 1, "\(named.stderr)")
            #expect(named.stderr.contains("settings.metrics_listen: 'localhost:0' has no numeric IP address"),
                    "\(named.stderr)")
        }
    }

    @Test("--metrics-listen refuses a name or a bad port (usage, exit 2) and names a port in use (exit 1)")
    func listenAddressErrors() async throws {
        for address in ["localhost:9464", "127.0.0.1:99999", "127.0.0.1:", "garbage", "1.2.3:80"] {
            let result = try await trawl(["fetch", "http://127.0.0.1:1/x", "--metrics-listen", address])
            #expect(result.status == 2, "\(address): \(result.stderr)")
            #expect(result.stderr.contains("--metrics-listen '\(address)'"), "\(result.stderr)")
        }
        let bad = try await trawl(["fetch", "http://127.0.0.1:1/x", "--metrics-push", "ftp://x"])
        #expect(bad.status == 2 && bad.stderr.contains("--metrics-push 'ftp://x'"), "\(bad.stderr)")
        let taken = try await FakePushgateway.start()
        let result = try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 1, settings: "per_host: 1"))
            return try await trawl(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--metrics-listen", "127.0.0.1:\(taken.port)"],
                in: workspace)
        }
        await taken.stop()
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("--metrics-listen 127.0.0.1:\(taken.port): the port is in use"),
                "\(result.stderr)")
    }
}

/// Listening TCP sockets held by process `pid` (its descriptors matched against /proc/net/tcp and tcp6).
private func listeningSockets(of pid: Int32) -> Int {
    let fdDirectory = "/proc/\(pid)/fd"
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: fdDirectory)) ?? []
    var inodes = Set<String>()
    for descriptor in descriptors {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fdDirectory + "/" + descriptor),
            target.hasPrefix("socket:[")
        else { continue }
        inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
    }
    var count = 0
    for table in ["/proc/\(pid)/net/tcp", "/proc/\(pid)/net/tcp6"] {
        // /proc files have no size: read to the end rather than by their length.
        let text = String(decoding: FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // st (4th field) 0A is LISTEN; the inode is the 10th field.
            if fields.count > 9, fields[3] == "0A", inodes.contains(String(fields[9])) { count += 1 }
        }
    }
    return count
}
