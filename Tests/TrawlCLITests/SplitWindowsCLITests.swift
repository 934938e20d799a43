import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// Parallel windows (issue 39, point 4) end to end: `incremental.split:` against `/feed/NAME`, whose items are one a
// minute from 2024-01-01T00:00:00Z (`updated_at`), so that windows of whole minutes have an item on each boundary.

/// A job of one split source over `/feed/NAME`: windows of `[initial, end)`.
private func splitJob(
    _ server: TestServer, _ name: String, query: String = "per_page=5", windows: Int = 8, maxPages: Int = 50,
    end: String = "2024-01-01T02:00:00Z", cursor: String = "updated_at", initial: String = "\"2024-01-01T00:00:00Z\"",
    params: (since: String, until: String) = ("since", "until"), concurrency: Int = 4
) -> String {
    """
    settings: {concurrency: \(concurrency), per_host: \(concurrency)}
    sources:
      - name: \(name)
        url: "\(server.url("/feed/\(name)?\(query)"))"
        paginate: link
        items: ""
        incremental:
          cursor: \(cursor)
          param: \(params.since)
          initial: \(initial)
          split: {until_param: \(params.until), windows: \(windows), max_pages: \(maxPages), end: "\(end)"}

    """
}

private func arguments(_ output: String = "out.jsonl") -> [String] {
    ["fetch", "job.yaml", "--state", "state", "-o", output, "-q", "--report", "report.json"]
}

/// The `(since, until)` pairs of the feed's requests, in order.
private func windowsAsked(_ server: TestServer, _ name: String) -> [(String, String)] {
    server.requestLog.filter { $0.target.hasPrefix("/feed/\(name)") }.compactMap { entry in
        let items = URLComponents(string: "http://h" + entry.target)?.queryItems ?? []
        guard let since = items.first(where: { $0.name == "since" })?.value,
            let until = items.first(where: { $0.name == "until" })?.value
        else { return nil }
        return (since, until)
    }
}

private func mark(_ workspace: Workspace, _ source: String) throws -> String? {
    let marks = try jsonObject(workspace.data("state/marks.json"))
    return ((marks["sources"] as? [String: Any])?[source] as? [String: Any])?["mark"] as? String
}

@Suite("parallel windows end to end", .endToEnd)
struct SplitWindowsCLITests {
    @Test("8 windows of 15 minutes: every item once, in order, the boundary items in the window starting there")
    func windowsUnionIsExact() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("w", count: 100)  // 00:00 ... 01:39, one a minute
            try workspace.write("job.yaml", splitJob(server, "w"))
            let run = try await trawl(arguments(), in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(workspace.text("out.jsonl") == server.feedLines("w").joined())
            let asked = Set(windowsAsked(server, "w").map { "\($0.0)..\($0.1)" })
            #expect(asked.count == 8)
            #expect(asked.contains("2024-01-01T00:15:00Z..2024-01-01T00:30:00Z"))
            #expect(asked.contains("2024-01-01T01:45:00Z..2024-01-01T02:00:00Z"))
            #expect(try mark(workspace, "w") == "2024-01-01T01:39:00Z")
            // The next run starts at the mark: nothing new, nothing written again.
            server.feedAdd("w", count: 5)  // 01:40 ... 01:44
            let second = try await trawl(arguments("out2.jsonl"), in: workspace)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(workspace.text("out2.jsonl") == server.feedLines("w").suffix(5).joined())
            #expect(try mark(workspace, "w") == "2024-01-01T01:44:00Z")
        }
    }

    @Test("docs/jobs.md's split job, pointed at the test server: 8 windows of 3 hours, every item once")
    func documentedJob() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let documented = try codeBlock("yaml", after: "## Parallel windows", in: try docsFile("jobs.md")) + "\n"
            #expect(documented.contains("http://127.0.0.1:8080/feed/events?per_page=20"))
            try workspace.write(
                "job.yaml", documented.replacingOccurrences(of: "http://127.0.0.1:8080", with: server.baseURL))
            server.feedAdd("events", count: 250)  // what `trawl serve`'s feed starts with
            let run = try await trawl(arguments("events.jsonl"), in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(workspace.text("events.jsonl") == server.feedLines("events").joined())
            #expect(Set(windowsAsked(server, "events").map(\.0)).count == 8)
        }
    }

    @Test("an integer cursor: windows of seq numbers, the items on the boundaries once")
    func integerWindows() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("q", count: 50)  // seq 0 ... 49
            try workspace.write(
                "job.yaml",
                splitJob(
                    server, "q", query: "per_page=4", windows: 5, maxPages: 3, end: "60", cursor: "seq", initial: "0",
                    params: ("since_seq", "until_seq")))
            let run = try await trawl(arguments(), in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(workspace.text("out.jsonl") == server.feedLines("q").joined())
            let asked = Set(server.requestLog.filter { $0.target.hasPrefix("/feed/q") }.compactMap { entry in
                URLComponents(string: "http://h" + entry.target)?.queryItems?.first { $0.name == "until_seq" }?.value
            })
            // Windows of 12: [0, 12) holds 12 items, 3 pages of 4 and no more: not bisected.
            #expect(asked == ["12", "24", "36", "48", "60"], "\(asked)")
            #expect(try mark(workspace, "q") == "49")
        }
    }

    @Test("a window that fails keeps the mark; the same command resumes only what is missing and commits it")
    func failedWindowKeepsMark() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("m", count: 100)
            try workspace.write("job.yaml", splitJob(server, "m"))
            server.feedFail("m", since: ["2024-01-01T00:30:00Z"])
            let failed = try await trawl(arguments(), in: workspace)
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(try workspace.exists("state/marks.json") ? mark(workspace, "m") == nil : true)
            let change = try #require((try report(workspace, "report.json")["marks"] as? [String: Any])?["m"])
            #expect((change as? [String: Any])?["committed"] as? Bool == false)
            server.feedFail("m", since: [])
            server.resetRequestLog()
            let retry = try await trawl(arguments(), in: workspace)
            #expect(retry.status == 0, "\(retry.stderr)")
            // Only the failed window was asked for again.
            #expect(Set(windowsAsked(server, "m").map(\.0)) == ["2024-01-01T00:30:00Z"])
            #expect(workspace.text("out.jsonl") == server.feedLines("m").joined())
            #expect(try mark(workspace, "m") == "2024-01-01T01:39:00Z")
        }
    }

    @Test("without end the windows end at the run's start, kept in the checkpoint: the resumed run asks the same")
    func resumeKeepsTheRunsStart() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("s", count: 30)
            let job = splitJob(server, "s").replacingOccurrences(of: ", end: \"2024-01-01T02:00:00Z\"", with: "")
            try workspace.write("job.yaml", job)
            server.feedFail("s", since: ["2024-01-01T00:00:00Z"])
            let failed = try await trawl(arguments(), in: workspace)
            #expect(failed.status == 1, "\(failed.stderr)")
            let checkpoint = try jsonObject(workspace.data("state/checkpoint.json"))
            let started = try #require(checkpoint["started"] as? String)
            // The last window ends at the run's start, whole seconds in UTC.
            #expect(windowsAsked(server, "s").contains { $0.1 == started })
            let first = windowsAsked(server, "s").filter { $0.0 == "2024-01-01T00:00:00Z" }.map(\.1)
            server.feedFail("s", since: [])
            server.resetRequestLog()
            let retry = try await trawl(arguments(), in: workspace)
            #expect(retry.status == 0, "\(retry.stderr)")
            #expect(Set(windowsAsked(server, "s").map(\.1)) == Set(first))
            #expect(workspace.text("out.jsonl") == server.feedLines("s").joined())
        }
    }

    @Test("kill -9 during parallel windows: the same command resumes each window and the union is exact")
    func killDuringWindows() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("k", count: 100)
            try workspace.write("job.yaml", splitJob(server, "k", query: "per_page=2&delay_ms=20"))
            let child = try TrawlProcess(arguments(), in: workspace, environment: [:])
            let killed = await killWhen(child) {
                server.requestLog.filter { $0.target.hasPrefix("/feed/k") }.count >= 16
            }
            _ = try await child.wait()
            #expect(killed, "the run ended before it could be killed")
            #expect(!workspace.exists("state/marks.json"))
            // The pages the checkpoint kept: the windows merged into the output whole, and each other window's own.
            let pagesPerWindow = [8, 8, 8, 8, 8, 8, 5, 1]  // 15 items a window in pages of 2; 10 items; none
            let checkpoint = try jsonObject(workspace.data("state/checkpoint.json"))
            let merged = ((checkpoint["outputs"] as? [String: Any])?.values.first as? [String: Any])?["merged"] as? Int
            var kept = pagesPerWindow.prefix(merged ?? 0).reduce(0, +)
            for unit in (checkpoint["units"] as? [String: Any] ?? [:]).values {
                kept += (unit as? [String: Any])?["pages"] as? Int ?? 0
            }
            server.resetRequestLog()
            let again = try await trawl(arguments(), in: workspace)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(workspace.text("out.jsonl") == server.feedLines("k").joined())
            #expect(try mark(workspace, "k") == "2024-01-01T01:39:00Z")
            // Each window resumed at its next page: the resumed run asked for exactly the pages not kept (distinct
            // targets: on a busy machine a slow answer may be asked again, as a retry).
            let asked = server.requestLog.filter { $0.target.hasPrefix("/feed/k") }.map(\.target)
            let after = Set(asked).count
            #expect(after == pagesPerWindow.reduce(0, +) - kept, "\(kept) pages kept, \(after) asked after the kill: \(asked)")
        }
    }

    @Test("a window over max_pages is bisected while running; the union stays exact and a resume knows the halves")
    func bisectedWindows() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("b", count: 100)
            // 2 windows of an hour (60 items, 12 pages): over 2 pages each, bisected down to 7.5 minutes.
            try workspace.write("job.yaml", splitJob(server, "b", windows: 2, maxPages: 2))
            let run = try await trawl(arguments(), in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(workspace.text("out.jsonl") == server.feedLines("b").joined())
            let asked = Set(windowsAsked(server, "b").map { "\($0.0)..\($0.1)" })
            #expect(asked.contains("2024-01-01T00:00:00Z..2024-01-01T01:00:00Z"))
            #expect(asked.contains("2024-01-01T00:00:00Z..2024-01-01T00:30:00Z"))
            #expect(asked.contains("2024-01-01T00:00:00Z..2024-01-01T00:07:30Z"))
            #expect(try mark(workspace, "b") == "2024-01-01T01:39:00Z")
            // The discarded pages do not count as written: the report's items are the output's.
            let totals = try #require(try report(workspace, "report.json")["totals"] as? [String: Any])
            #expect(totals["items"] as? Int == 100)
            let outputs = try #require(try report(workspace, "report.json")["outputs"] as? [[String: Any]])
            // 2 windows and 11 bisections: 13 windows hold the items.
            #expect(outputs.first?["units"] as? Int == 13, "\(outputs)")
        }
    }

    @Test("in a job with dependent sources too, bisected windows' halves run and the union stays exact")
    func bisectionBesideChildren() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("teams", count: 3)
            server.feedAdd("bc", count: 100)
            let job = splitJob(server, "bc", windows: 2, maxPages: 2) + """
                  - name: teams
                    url: "\(server.url("/feed/teams?per_page=2"))"
                    paginate: link
                    items: ""
                  - name: members
                    parent: teams
                    url: "\(server.url("/family/kids/")){teams.id}?n=3&per_page=2"
                    paginate: {style: page, total_pages: total_pages}
                    items: items

                """
            try workspace.write("job.yaml", job)
            let run = try await trawl(
                ["fetch", "job.yaml", "--state", "state", "--output-dir", "out", "-q", "--report", "report.json"],
                in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            let runs = try FileManager.default.contentsOfDirectory(atPath: workspace.path("out/bc"))
            #expect(runs.count == 1)
            #expect(workspace.text("out/bc/" + (runs.first ?? "")) == server.feedLines("bc").joined())
            #expect(workspace.text("out/members.jsonl").split(separator: "\n").count == 9)
        }
    }

    @Test("kill -9 after bisections: the resumed run walks the recorded halves, the union exact")
    func killAfterBisection() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("kb", count: 100)
            try workspace.write(
                "job.yaml", splitJob(server, "kb", query: "per_page=5&delay_ms=20", windows: 2, maxPages: 2))
            let child = try TrawlProcess(arguments(), in: workspace, environment: [:])
            // Past the two first windows' three pages each: some halves are recorded.
            let killed = await killWhen(child) {
                server.requestLog.filter { $0.target.hasPrefix("/feed/kb") }.count >= 14
            }
            _ = try await child.wait()
            #expect(killed, "the run ended before it could be killed")
            #expect(workspace.text("state/checkpoint.json").contains("\"bisected\""))
            server.resetRequestLog()
            let again = try await trawl(arguments(), in: workspace)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(workspace.text("out.jsonl") == server.feedLines("kb").joined())
            // The 13 windows that hold the items (11 bisections), whichever run walked them.
            let units = try #require(try report(workspace, "report.json")["units"] as? [String: Any])
            #expect(units["total"] as? Int == 13, "\(units)")
            #expect((units["done"] as? Int ?? 0) + (units["skipped"] as? Int ?? 0) == 13, "\(units)")
            #expect(!windowsAsked(server, "kb").contains { $0 == ("2024-01-01T00:00:00Z", "2024-01-01T01:00:00Z") })
        }
    }

    @Test("a window of 1 unit over max_pages fails naming it (exit 1)")
    func narrowestWindowFails() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("n", count: 20)
            // Every item has rev 0 and the server ignores since_rev/until_rev: one window [0, 1) of 20 items.
            try workspace.write(
                "job.yaml",
                splitJob(
                    server, "n", windows: 1, maxPages: 2, end: "1", cursor: "rev", initial: "0",
                    params: ("since_rev", "until_rev")))
            let run = try await trawl(arguments().filter { $0 != "-q" }, in: workspace)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stderr.contains("the window [0, 1) holds more than the page limit"), "\(run.stderr)")
            #expect(run.stderr.contains("split.max_pages"))
        }
    }

    @Test("a server that ignores the upper bound fails the window naming the parameter")
    func ignoredUpperBoundFails() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("i", count: 100)
            try workspace.write("job.yaml", splitJob(server, "i", query: "per_page=50&ignore_since=1", windows: 4))
            let run = try await trawl(arguments().filter { $0 != "-q" }, in: workspace)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stderr.contains("the server ignored until=2024-01-01T00:30:00Z"), "\(run.stderr)")
            #expect(!workspace.exists("state/marks.json"))
        }
    }

    @Test("an initial after the run's start is refused, naming it")
    func initialInTheFuture() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let job = splitJob(server, "f", initial: "\"2999-01-01T00:00:00Z\"")
                .replacingOccurrences(of: ", end: \"2024-01-01T02:00:00Z\"", with: "")
            try workspace.write("job.yaml", job)
            let run = try await trawl(arguments(), in: workspace)
            #expect(run.status != 0)
            #expect(
                run.stderr.contains("incremental.initial 2999-01-01T00:00:00Z is not before the end"), "\(run.stderr)")
            #expect(server.requestLog.isEmpty)
        }
    }
}
