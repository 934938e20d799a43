import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// Incremental sync (issue 16) end to end: `trawl fetch --incremental … --state DIR` against `/feed/NAME`, whose
// items the test adds and changes between runs.

/// The feed items' JSONL, as the server has them now, in `seq` order (oldest first).
private func feedLines(_ server: TestServer, _ name: String, ids: [Int]) -> String {
    ids.compactMap { server.feedLine(name, id: $0) }.joined()
}

/// `trawl fetch` of `/feed/NAME` with the incremental flags; `extra` adds more.
private func incrementalArguments(
    _ server: TestServer, _ name: String, query: String = "per_page=10", output: [String], extra: [String] = []
) -> [String] {
    [
        "fetch", "--url", server.url("/feed/\(name)?\(query)"), "--items", "", "--paginate", "link",
        "--incremental", "updated_at", "--since-param", "since", "--initial", "2024-01-01T00:00:00Z",
        "--state", "state", "--name", name, "-q", "--report", "report.json",
    ] + output + extra
}

/// The `since=` values the feed's requests carried, in order.
private func sinceValues(_ server: TestServer, _ name: String) -> [String] {
    server.requestLog.filter { $0.target.hasPrefix("/feed/\(name)") }.compactMap { entry in
        URLComponents(string: "http://h" + entry.target)?.queryItems?.first { $0.name == "since" }?.value
    }
}

private func marks(_ workspace: Workspace) throws -> [String: Any] {
    try jsonObject(workspace.data("state/marks.json"))
}

private func mark(_ workspace: Workspace, _ source: String) throws -> String? {
    ((try marks(workspace)["sources"] as? [String: Any])?[source] as? [String: Any])?["mark"] as? String
}

@Suite("incremental sync end to end", .endToEnd)
struct IncrementalCLITests {
    @Test("a second run after new items were added fetches exactly the new window; the report has the marks")
    func secondRunFetchesOnlyNew() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("a", count: 25)
            let first = try await trawl(incrementalArguments(server, "a", output: ["-o", "run1.jsonl"]), in: workspace)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(workspace.text("run1.jsonl") == feedLines(server, "a", ids: Array(0..<25)))
            #expect(try mark(workspace, "a") == "2024-01-01T00:24:00Z")
            let firstMarks = try #require(try report(workspace, "report.json")["marks"] as? [String: Any])
            let firstMark = try #require(firstMarks["a"] as? [String: Any])
            #expect(firstMark["before"] == nil && firstMark["after"] as? String == "2024-01-01T00:24:00Z")

            server.feedAdd("a", count: 7)
            server.resetRequestLog()
            let second = try await trawl(incrementalArguments(server, "a", output: ["-o", "run2.jsonl"]), in: workspace)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(workspace.text("run2.jsonl") == feedLines(server, "a", ids: Array(25..<32)))
            #expect(sinceValues(server, "a").first == "2024-01-01T00:24:00Z")
            let secondMark = try #require((try report(workspace, "report.json")["marks"] as? [String: Any])?["a"])
            let change = try #require(secondMark as? [String: Any])
            #expect(change["before"] as? String == "2024-01-01T00:24:00Z")
            #expect(change["after"] as? String == "2024-01-01T00:31:00Z")
            #expect(change["committed"] as? Bool == true)

            // Nothing new: an empty output, the mark stays; the summary says so.
            let third = try await trawl(
                incrementalArguments(server, "a", output: ["-o", "run3.jsonl"]).filter { $0 != "-q" }, in: workspace)
            #expect(third.status == 0, "\(third.stderr)")
            #expect(third.stderr.contains("mark a: 2024-01-01T00:31:00Z -> 2024-01-01T00:31:00Z (run "))
            #expect(third.stderr.contains("since=2024-01-01T00:31:00Z; committed)"))
            #expect(workspace.text("run3.jsonl").isEmpty)
            #expect(try mark(workspace, "a") == "2024-01-01T00:31:00Z")
        }
    }

    @Test("kill -9 during an incremental run leaves the mark; the same command then fetches the window exactly")
    func killLeavesMark() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("k", count: 10)
            let first = try await trawl(incrementalArguments(server, "k", output: ["-o", "run1.jsonl"]), in: workspace)
            #expect(first.status == 0, "\(first.stderr)")
            let before = try mark(workspace, "k")
            #expect(before == "2024-01-01T00:09:00Z")
            server.feedAdd("k", count: 40)
            server.resetRequestLog()
            let arguments = incrementalArguments(
                server, "k", query: "per_page=4&delay_ms=20", output: ["-o", "run2.jsonl"])
            let child = try TrawlProcess(arguments, in: workspace, environment: [:])
            let killed = await killWhen(child) {
                server.requestLog.filter { $0.target.hasPrefix("/feed/k") }.count >= 4
            }
            _ = try await child.wait()
            #expect(killed, "the run ended before it could be killed")
            #expect(try mark(workspace, "k") == before)
            let again = try await trawl(arguments, in: workspace)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(workspace.text("run2.jsonl") == feedLines(server, "k", ids: Array(10..<50)))
            #expect(try mark(workspace, "k") == "2024-01-01T00:49:00Z")
        }
    }

    @Test("a crash after the complete checkpoint but before the marks were replaced: the next run commits first")
    func rollForward() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("r", count: 12)
            let first = try await trawl(incrementalArguments(server, "r", output: ["-o", "run1.jsonl"]), in: workspace)
            #expect(first.status == 0, "\(first.stderr)")
            // As if trawl had died between the checkpoint saying complete and marks.json's replacement.
            try FileManager.default.removeItem(atPath: workspace.path("state/marks.json"))
            server.feedAdd("r", count: 4)
            server.resetRequestLog()
            let second = try await trawl(incrementalArguments(server, "r", output: ["-o", "run2.jsonl"]), in: workspace)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(sinceValues(server, "r").first == "2024-01-01T00:11:00Z")
            #expect(workspace.text("run2.jsonl") == feedLines(server, "r", ids: Array(12..<16)))
            #expect(try mark(workspace, "r") == "2024-01-01T00:15:00Z")
        }
    }

    @Test("a run with a page that fails leaves the mark; the retry commits that run's window")
    func failedRunLeavesMark() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("f", count: 5)
            #expect(try await trawl(incrementalArguments(server, "f", output: ["-o", "run1.jsonl"]), in: workspace)
                .status == 0)
            server.feedAdd("f", count: 30)
            // A page larger than --max-page-bytes fails for good: the run ends with exit 1, not committed.
            let arguments = incrementalArguments(server, "f", output: ["-o", "run2.jsonl"])
            let failed = try await trawl(arguments + ["--max-page-bytes", "200"], in: workspace)
            #expect(failed.status == 1)
            #expect(try mark(workspace, "f") == "2024-01-01T00:04:00Z")
            let change = try #require((try report(workspace, "report.json")["marks"] as? [String: Any])?["f"])
            #expect((change as? [String: Any])?["committed"] as? Bool == false)
            #expect((change as? [String: Any])?["after"] as? String == "2024-01-01T00:04:00Z")
            let retry = try await trawl(arguments, in: workspace)
            #expect(retry.status == 0, "\(retry.stderr)")
            #expect(workspace.text("run2.jsonl") == feedLines(server, "f", ids: Array(5..<35)))
            #expect(try mark(workspace, "f") == "2024-01-01T00:34:00Z")
        }
    }

    @Test("lookback re-reads the window; with primary_key only new or changed items are written again")
    func lookbackWithPrimaryKey() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("l", count: 25)
            let extra = ["--lookback", "10m", "--primary-key", "id"]
            let first = try await trawl(
                incrementalArguments(server, "l", output: ["-o", "run1.jsonl"], extra: extra), in: workspace)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(workspace.text("run1.jsonl") == feedLines(server, "l", ids: Array(0..<25)))
            server.feedTouch("l", id: 20)  // changed, inside the window
            server.feedAdd("l", count: 2)
            server.resetRequestLog()
            let second = try await trawl(
                incrementalArguments(server, "l", output: ["-o", "run2.jsonl"], extra: extra), in: workspace)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(sinceValues(server, "l").first == "2024-01-01T00:14:00Z")
            // Items 14...24 came back unchanged except 20: only 20 (its new revision) and the two new ones.
            #expect(workspace.text("run2.jsonl") == feedLines(server, "l", ids: [20, 25, 26]))
        }
    }

    @Test("order: desc stops the walk at the first page older than the mark")
    func descendingStops() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("d", count: 50)
            let query = "per_page=10&order=desc&ignore_since=1"
            let extra = ["--order", "desc"]
            let first = try await trawl(
                incrementalArguments(server, "d", query: query, output: ["-o", "run1.jsonl"], extra: extra),
                in: workspace)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(workspace.text("run1.jsonl") == feedLines(server, "d", ids: Array((0..<50).reversed())))
            server.feedAdd("d", count: 3)
            server.resetRequestLog()
            let second = try await trawl(
                incrementalArguments(server, "d", query: query, output: ["-o", "run2.jsonl"], extra: extra),
                in: workspace)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(server.requestLog.filter { $0.target.hasPrefix("/feed/d") }.count == 1)
            #expect(workspace.text("run2.jsonl") == feedLines(server, "d", ids: [52, 51, 50]))
            #expect(try mark(workspace, "d") == "2024-01-01T00:52:00Z")
        }
    }

    @Test("--output-dir writes each run to DIR/SOURCE/RUN-ID.jsonl, the report naming the run")
    func outputDirectoryPerRun() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("o", count: 12)
            let arguments = incrementalArguments(server, "o", output: ["--output-dir", "out"])
            let first = try await trawl(arguments, in: workspace)
            #expect(first.status == 0, "\(first.stderr)")
            let firstRun = try #require(
                ((try report(workspace, "report.json")["marks"] as? [String: Any])?["o"] as? [String: Any])?["run"]
                    as? String)
            #expect(workspace.text("out/o/\(firstRun).jsonl") == feedLines(server, "o", ids: Array(0..<12)))
            server.feedAdd("o", count: 3)
            let second = try await trawl(arguments, in: workspace)
            #expect(second.status == 0, "\(second.stderr)")
            let secondRun = try #require(
                ((try report(workspace, "report.json")["marks"] as? [String: Any])?["o"] as? [String: Any])?["run"]
                    as? String)
            #expect(secondRun != firstRun)
            #expect(workspace.text("out/o/\(secondRun).jsonl") == feedLines(server, "o", ids: [12, 13, 14]))
            #expect(workspace.text("out/o/\(firstRun).jsonl") == feedLines(server, "o", ids: Array(0..<12)))
        }
    }

    @Test("trawl state show, set and reset read and change the marks as JSON; the next run follows them")
    func stateCommands() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("s", count: 30)
            let run = { (output: String) in
                try await trawl(incrementalArguments(server, "s", output: ["-o", output]), in: workspace)
            }
            #expect(try await run("run1.jsonl").status == 0)
            let shown = try await trawl(["state", "show", "--state", "state"], in: workspace)
            #expect(shown.status == 0, "\(shown.stderr)")
            let all = try jsonObject(Data(shown.stdout.utf8))
            #expect(all["version"] as? Int == 1)
            let source = try #require((all["sources"] as? [String: Any])?["s"] as? [String: Any])
            #expect(source["mark"] as? String == "2024-01-01T00:29:00Z")
            #expect(source["window_items"] as? Int == 1)  // no lookback: the item at the mark only

            let set = try await trawl(
                ["state", "set", "--state", "state", "s", "2024-01-01T00:20:00Z"], in: workspace)
            #expect(set.status == 0, "\(set.stderr)")
            #expect(try jsonObject(Data(set.stdout.utf8))["mark"] as? String == "2024-01-01T00:20:00Z")
            server.resetRequestLog()
            #expect(try await run("run2.jsonl").status == 0)
            #expect(sinceValues(server, "s").first == "2024-01-01T00:20:00Z")
            #expect(workspace.text("run2.jsonl") == feedLines(server, "s", ids: Array(20..<30)))

            let reset = try await trawl(["state", "reset", "--state", "state", "s"], in: workspace)
            #expect(reset.status == 0, "\(reset.stderr)")
            let one = try await trawl(["state", "show", "--state", "state", "s"], in: workspace)
            #expect(try jsonObject(Data(one.stdout.utf8))["mark"] is NSNull)
            server.resetRequestLog()
            #expect(try await run("run3.jsonl").status == 0)
            #expect(sinceValues(server, "s").first == "2024-01-01T00:00:00Z")
            #expect(workspace.text("run3.jsonl") == feedLines(server, "s", ids: Array(0..<30)))

            let bad = try await trawl(["state", "set", "--state", "state", "s", "yesterday"], in: workspace)
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("neither an ISO-8601 date nor an integer"))
            let missing = try await trawl(["state", "show", "--state", "nowhere"], in: workspace)
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("nowhere is not a state directory"))
        }
    }

    @Test("incremental without --state is refused with what to do")
    func needsState() async throws {
        let result = try await trawl([
            "fetch", "--url", "http://127.0.0.1:9/feed/x", "--items", "", "--paginate", "link",
            "--incremental", "updated_at", "--since-param", "since", "--initial", "0", "-q",
        ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("incremental sources need a state directory"))
        #expect(result.stderr.contains("--state DIR"))
    }
}
