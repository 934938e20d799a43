import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// `trawl serve` for newcomers: docs/daily-job.yaml run twice, as docs/daily-job.md says, against a server with
// `trawl serve`'s living feeds (on a free port instead of 8080); `serve --help` lists every endpoint; the binary's
// feeds start full and change by themselves.

@Suite("trawl serve and docs/daily-job.yaml", .endToEnd)
struct ServeDailyJobCLITests {
    /// The address docs/daily-job.yaml names: `trawl serve`'s default.
    static let documentedBase = "http://127.0.0.1:8080"

    static func repositoryFile(_ path: String) throws -> String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return try String(contentsOf: url.appendingPathComponent(path), encoding: .utf8)
    }

    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    /// The item id and rev of a feed line.
    static func version(_ line: String) throws -> (id: Int, rev: Int) {
        let object = try jsonObject(Substring(line))
        return (try #require(object["id"] as? Int), try #require(object["rev"] as? Int))
    }

    /// Expects each line to be a version the feed had of its item: the item's line as it is now, or an older rev.
    static func expectServed(
        _ lines: [String], feed now: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var current: [Int: (rev: Int, line: String)] = [:]
        for line in now {
            let item = try version(line)
            current[item.id] = (item.rev, line)
        }
        for line in lines {
            let item = try version(line)
            let served = try #require(
                current[item.id], "\(line) is no item of the feed", sourceLocation: sourceLocation)
            #expect(
                item.rev < served.rev || line == served.line, "\(line) was never served (now: \(served.line))",
                sourceLocation: sourceLocation)
        }
    }

    /// The feed's lines now, without their newlines.
    static func feed(_ server: TestServer) -> [String] {
        server.feedLines("events").map { String($0.dropLast()) }
    }

    /// The run files of `out/events`, oldest first (their names sort by time).
    static func runFiles(_ workspace: Workspace) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: workspace.path("out/events")).sorted()
    }

    @Test("run 1: every customer, their orders, the whole feed; run 2: only the feed's new and changed items")
    func dailyJobTwice() async throws {
        try await TestServer.with(livingFeeds: TestServer.LivingFeeds()) { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let job = try Self.repositoryFile("docs/daily-job.yaml")
            #expect(job.contains("url: \"\(Self.documentedBase)/shop/"), "docs/daily-job.yaml left port 8080")
            let pointed = job.replacingOccurrences(of: Self.documentedBase, with: server.baseURL)
            try workspace.write("daily-job.yaml", pointed)
            // docs/daily-job.md's command.
            let arguments = ["fetch", "daily-job.yaml", "--state", "daily.state", "--output-dir", "out"]

            let first = try await trawl(arguments, in: workspace)
            #expect(first.status == 0, "\(first.stderr)")
            let customers = TestServer.shopCustomers.map { $0 + "\n" }.joined()
            #expect(workspace.text("out/customers.jsonl") == customers)
            var orders = ""
            for (index, customer) in TestServer.shopCustomers.enumerated() {
                let name = try #require(try jsonObject(Substring(customer))["name"] as? String)
                let parent = "{\"_parent\":{\"id\":\(index + 1),\"name\":\"\(name)\"},"
                let lines = TestServer.shopOrders(customer: index + 1).map { parent + String($0.dropFirst()) + "\n" }
                orders += lines.joined()
            }
            #expect(!orders.isEmpty)
            #expect(workspace.text("out/orders.jsonl") == orders)
            let runs1 = try Self.runFiles(workspace)
            #expect(runs1.count == 1)
            let events1 = Self.lines(workspace.text("out/events/" + (runs1.first ?? "")))
            let after1 = Self.feed(server)
            // The feed started with 250 items when the job first asked for it; paged by seq, none was skipped
            // even if the feed changed between two pages.
            #expect(Set(try events1.map { try Self.version($0).id }).isSuperset(of: 0..<250))
            try Self.expectServed(events1, feed: after1)

            // "A day later": the feed changes by itself every few seconds; wait for its next change.
            let deadline = ContinuousClock.now + .seconds(60)
            while server.feedLines("events").count == after1.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            let before2 = Self.feed(server)
            let changed = Set(before2).subtracting(after1)
            #expect(!changed.isEmpty, "the feed did not change within 60 s")
            server.resetRequestLog()

            let second = try await trawl(arguments, in: workspace)
            #expect(second.status == 0, "\(second.stderr)")
            let runs2 = try Self.runFiles(workspace).filter { !runs1.contains($0) }
            #expect(runs2.count == 1)
            let events2 = Self.lines(workspace.text("out/events/" + (runs2.first ?? "")))
            try Self.expectServed(events2, feed: Self.feed(server))
            // Every item new or changed since run 1 is in run 2's file (or a later version of it, when it changed
            // again while run 2 ran) ...
            var fetched: [Int: Int] = [:]
            for line in events2 {
                let item = try Self.version(line)
                fetched[item.id] = max(fetched[item.id] ?? -1, item.rev)
            }
            for line in changed {
                let item = try Self.version(line)
                #expect((fetched[item.id] ?? -1) >= item.rev, "run 2 missed \(line)")
            }
            // ... and nothing run 1 wrote is written again.
            #expect(Set(events2).isDisjoint(with: events1))
            #expect(events2.count < events1.count)
            // Customers and orders are fetched whole each run: the same again.
            #expect(workspace.text("out/customers.jsonl") == customers)
            #expect(workspace.text("out/orders.jsonl") == orders)
            // One token for the run, carried by every request: the shop refused none.
            let log = server.requestLog
            #expect(log.filter { $0.target.hasPrefix("/shop/token") }.count == 1)
            #expect(log.allSatisfy { $0.status != 401 }, "\(log.filter { $0.status == 401 }.map(\.target))")
        }
    }

    @Test("trawl serve --help lists every endpoint line as it is, at 80 columns, and the demo client")
    func serveHelpListsEndpoints() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let result = try await trawl(["serve", "--help"], in: workspace, environment: ["COLUMNS": "80"])
        #expect(result.status == 0, "\(result.stderr)")
        let shown = Set(Self.lines(result.stdout))
        let endpoints = Self.lines(TestServer.endpointHelp)
        #expect(endpoints.count > 40)
        for line in endpoints {
            #expect(shown.contains(line), "serve --help lacks: \(line)")
        }
        for fact in ["/shop/token", "client_id demo", "demo-secret", "--feed-interval", "--feed-items",
                     "docs/daily-job.yaml"] {
            #expect(result.stdout.contains(fact), "\(fact)")
        }
    }

    @Test("trawl serve: a feed starts with 250 items and grows by itself; /shop answers 401 without a token")
    func serveBinaryFeeds() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let serve = try TrawlProcess(
            ["serve", "--port", "0", "--threads", "1", "--feed-interval", "0.2"], in: workspace, environment: [:])
        do {
            let listening = try await waitUntil(serve, timeout: .seconds(30)) {
                serve.stdout.contains("listening on http://127.0.0.1:")
            }
            #expect(listening, "\(serve.stderr)")
            let base = try #require(
                serve.stdout.split(separator: "\n").first(where: { $0.contains("listening on ") })?
                    .split(separator: " ").last.map(String.init))

            func count(_ name: String) async throws -> Int {
                let result = try await trawl(["get", base + "/feed/\(name)?per_page=100000"], in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [Any])?.count ?? -1
            }
            #expect(try await count("orders") == 250)
            var grown = false
            for _ in 0..<200 where !grown {
                try await Task.sleep(for: .milliseconds(100))
                grown = try await count("orders") > 250
            }
            #expect(grown, "the feed did not grow")

            let refused = try await trawl(["get", "-f", base + "/shop/customers"], in: workspace)
            #expect(refused.status == 22)
            #expect(refused.stderr.contains("returned error: 401"), "\(refused.stderr)")
        } catch {
            serve.kill()
            try await serve.wait()
            throw error
        }
        serve.kill()
        try await serve.wait()
        #expect(serve.wasKilled, "trawl serve ended by itself: \(serve.stderr)")
    }
}
