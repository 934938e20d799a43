import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// Drift detection with a primary key (issue 39, point 3): `trawl fetch --primary-key id` over `/drifting/NAME`, an
// offset listing that inserts or deletes rows at its head after its first request.

/// `trawl fetch` of `/drifting/NAME?QUERY` as an offset walk (10 a page) with the report in report.json.
private func driftArguments(_ server: TestServer, _ name: String, _ query: String, extra: [String]) -> [String] {
    [
        "fetch", "--url", server.url("/drifting/\(name)?offset=0&limit=10&\(query)"), "--items", "items",
        "--paginate", "offset", "--total", "total", "-o", "out.jsonl", "-q", "--report", "report.json",
    ] + extra
}

/// The `seen` of every line of `text` by id (`stamp=1`: the listing's request that served the row).
private func seen(_ text: String) throws -> [Int: Int] {
    var seen: [Int: Int] = [:]
    for line in text.split(separator: "\n") {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        seen[try #require(object?["id"] as? Int)] = try #require(object?["seen"] as? Int, "\(line)")
    }
    return seen
}

/// The `id` of every line of `text`, in order.
private func ids(_ text: String) throws -> [Int] {
    try text.split(separator: "\n").map { line in
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return try #require(object?["id"] as? Int, "\(line)")
    }
}

/// The report's totals.
private func totals(_ workspace: Workspace) throws -> [String: Any] {
    let report = try JSONSerialization.jsonObject(with: workspace.data("report.json")) as? [String: Any]
    return try #require(report?["totals"] as? [String: Any])
}

/// The requests the listing `name` got.
private func requests(_ server: TestServer, _ name: String) -> Int {
    server.requestLog.filter { $0.target.hasPrefix("/drifting/\(name)?") }.count
}

@Suite("drift detection with a primary key", .endToEnd)
struct DriftCLITests {
    @Test("a row inserted at the head while an offset walk runs: re-read once, each key once, the newest answer")
    func insertedRowSettles() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let run = try await trawl(
                driftArguments(server, "ins", "insert=1&stamp=1", extra: ["--primary-key", "id"]), in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            let written = try ids(workspace.text("out.jsonl"))
            // First pass (serial: each page says the total): 1...10, 10...19 (10 again: dropped), 20...29, 30; the
            // re-read (31 rows, 4 pages: 31, 1...30) answers every key again, and its answers are the ones kept.
            #expect(written == [31] + Array(1...30), "\(written)")
            // Requests 1-4 were the first pass: every row written comes from the re-read's requests 5-8.
            let stamps = try seen(workspace.text("out.jsonl"))
            #expect(stamps.values.allSatisfy { (5...8).contains($0) }, "\(stamps)")
            #expect(stamps[1] == 5 && stamps[30] == 8)
            let stats = try totals(workspace)
            // 10 once in the first pass, then the first pass's 30 answered again by the re-read.
            #expect(stats["duplicates_dropped"] as? Int == 1 + 30, "\(stats)")
            #expect(stats["items"] as? Int == 31, "\(stats)")
            #expect(stats["rereads"] as? Int == 4, "\(stats)")  // the re-read's 4 pages (31 rows)
            #expect(requests(server, "ins") == 4 + 4)
        }
    }

    @Test("rows that change content between the passes and in a re-read that never settles: the last answer wins")
    func newestAnswerWins() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // A new head row on every request from the second on (K-1 new rows at request K): the first pass is
            // requests 1-4, the re-read 5-8 (offsets 0, 10, 20, 30), which reads 6, 15 and 24 twice as rows keep
            // coming; --allow-drift keeps each key once, from its last read.
            let run = try await trawl(
                driftArguments(
                    server, "stampbusy", "insert=1&every=1&stamp=1", extra: ["--primary-key", "id", "--allow-drift"]),
                in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            let text = workspace.text("out.jsonl")
            let written = try ids(text)
            #expect(written.count == Set(written).count, "each key once: \(written)")
            let stamps = try seen(text)
            // Every key the re-read answered has its re-read answer: the rows of the first pass are all re-read.
            #expect(Set(1...30).isSubset(of: Set(written)), "\(written)")
            for id in 1...30 { #expect((stamps[id] ?? 0) >= 5, "row \(id): \(stamps)") }
            // A key read twice in the re-read: its line is the later read's.
            #expect(requests(server, "stampbusy") == 8)
            #expect(stamps[1] == 5 && stamps[6] == 6 && stamps[15] == 7 && stamps[24] == 8, "\(stamps)")
        }
    }

    @Test("a row deleted from the head: fewer distinct keys than announced is drift; the re-read finds the skipped row")
    func deletedRowSettles() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let run = try await trawl(driftArguments(server, "del", "delete=1", extra: ["--primary-key", "id"]), in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            let written = try ids(workspace.text("out.jsonl"))
            // First pass: 1...10, 12...21, 22...30 (11 skipped: 29 keys of 30 announced); the re-read reads 2...30
            // (1 is gone): its answers replace the first pass's, 1 keeps its first-pass line, in its place.
            #expect(written == Array(1...30), "\(written)")
            let stats = try totals(workspace)
            #expect(stats["rereads"] as? Int == 3, "\(stats)")
            #expect(stats["duplicates_dropped"] as? Int == 28, "\(stats)")
            #expect(stats["items"] as? Int == 30, "\(stats)")
        }
    }

    @Test("a listing that never settles: exit 1 naming the pages and keys; --allow-drift keeps each key once")
    func unsettledFailsOrIsAllowed() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // A new head row on every request from the second on: the re-read drifts again.
            let failed = try await trawl(
                driftArguments(server, "busy", "insert=1&every=1", extra: ["--primary-key", "id"]), in: workspace)
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(failed.stderr.contains("drifted"), "\(failed.stderr)")
            #expect(failed.stderr.contains("the range did not settle on a re-read: keys read twice on page index"),
                "\(failed.stderr)")
            #expect(failed.stderr.contains("--allow-drift"), "\(failed.stderr)")
            #expect(failed.stdout.isEmpty)
            let kept = try ids(workspace.text("out.jsonl"))
            #expect(kept.count == Set(kept).count, "each key once: \(kept)")
            let allowed = try await trawl(
                driftArguments(server, "busy2", "insert=1&every=1", extra: ["--primary-key", "id", "--allow-drift"]),
                in: workspace)
            #expect(allowed.status == 0, "\(allowed.stderr)")
            let written = try ids(workspace.text("out.jsonl"))
            #expect(written.count == Set(written).count, "each key once: \(written)")
            #expect(Set(1...30).isSubset(of: Set(written)), "\(written)")
        }
    }

    /// Runs `arguments` (with `--state st`), kills it with SIGKILL once the checkpoint counts `pages` pages of the
    /// unit (and more than `segment` bytes of it) and the listing `name` got `requests` requests (the last one
    /// held by `hold=`), then runs it again.
    private func killAndResume(
        _ server: TestServer, _ name: String, _ query: String, pages: Int, segment: Int = -1, requests count: Int,
        in workspace: Workspace, between: () throws -> Void = {}
    ) async throws -> RunResult {
        let arguments = driftArguments(server, name, query, extra: ["--primary-key", "id", "--state", "st"])
        let child = try TrawlProcess(arguments, in: workspace, environment: [:])
        let killed = await killWhen(child) {
            let checkpoint = (try? jsonObject(workspace.data("st/checkpoint.json"))) ?? [:]
            let unit = (checkpoint["units"] as? [String: [String: Any]])?["0"]
            return (unit?["pages"] as? Int ?? 0) >= pages && (unit?["segment"] as? Int ?? 0) > segment
                && requests(server, name) >= count
        }
        try await child.wait()
        #expect(killed && child.wasKilled, "the walk ended before it was killed: \(child.stderr)")
        try between()
        return try await trawl(arguments, in: workspace)
    }

    @Test("killed in the middle of compaction's swap (the checkpoint not yet written): the next run puts the old segment back")
    func killDuringCompactionSwap() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let segments = workspace.path("st/segments")
            // Killed with the first pass durable (the re-read's first request held); then the files as a kill
            // after the swap's renames leaves them: the segment set aside, a compacted one in its place.
            let run = try await killAndResume(
                server, "swap", "delete=1&hold=4", pages: 3, requests: 4, in: workspace
            ) {
                let manager = FileManager.default
                try manager.moveItem(atPath: segments + "/0.jsonl", toPath: segments + "/0.precompact.jsonl")
                try manager.moveItem(atPath: segments + "/0.pages", toPath: segments + "/0.precompact.pages")
                try workspace.write("st/segments/0.jsonl", "{\"id\":1,\"name\":\"row-1\"}\n")
                try workspace.write("st/segments/0.pages", String(repeating: "\u{1}", count: 48))
            }
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try ids(workspace.text("out.jsonl")) == Array(1...30))
            #expect(!workspace.exists("st/segments/0.precompact.jsonl") && !workspace.exists("st/segments/0.precompact.pages"))
        }
    }

    @Test("kill -9 mid-walk, rows inserted before the resume: the keys written before the kill are not written again")
    func resumeKeepsKeys() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Requests 1 and 2: ids 1...10, 11...20; request 3 is held and the run killed with 2 pages durable.
            // From request 3 on a new row 31 heads the listing: the resumed walk's offset 20 starts at 20 again.
            let run = try await killAndResume(
                server, "kill", "insert=1&after=2&hold=3", pages: 2, requests: 3, in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            let written = try ids(workspace.text("out.jsonl"))
            // The re-read after the resume found the new head row; its answers are the ones kept.
            #expect(written == [31] + Array(1...30), "each key once: \(written)")
            let stats = try totals(workspace)
            // 20 again after the resume, then the 30 rows of the first pass (both runs) answered again.
            #expect(stats["duplicates_dropped"] as? Int == 1 + 30, "\(stats)")
            #expect(stats["rereads"] as? Int == 4, "\(stats)")
        }
    }

    @Test("kill -9 during the re-read: the resume reads again; the last run's answers are kept")
    func killDuringReread() async throws {
        try await TestServer.with { server in
            // First pass: 1...10, 12...21, 22...30 (11 deleted ahead of the walk: 29 keys of 30 announced).
            let firstPass = (Array(1...10) + Array(12...30)).map { "{\"id\":\($0),\"name\":\"row-\($0)\"}\n" }
            // Killed before the re-read wrote anything (its first request, 4, held), or once its first page (row
            // 11) is durable (its second request held; the checkpoint counts that page as a re-read's).
            for (name, hold, segment) in [("rekill", 4, -1), ("rekill2", 5, firstPass.joined().utf8.count)] {
                let workspace = try Workspace()
                defer { workspace.remove() }
                let run = try await killAndResume(
                    server, name, "delete=1&stamp=1&hold=\(hold)", pages: 3, segment: segment, requests: hold,
                    in: workspace)
                #expect(run.status == 0, "\(name): \(run.stderr)")
                let text = workspace.text("out.jsonl")
                let written = try ids(text)
                #expect(written == Array(1...30), "\(name): each key once, 1 from the first pass: \(written)")
                // Rows 2...30: the resumed run's re-read (after the held request), not the first pass nor the
                // re-read cut short by the kill.
                let stamps = try seen(text)
                #expect(stamps[1] == 1 && (2...30).allSatisfy { (stamps[$0] ?? 0) > hold }, "\(name): \(stamps)")
                let stats = try totals(workspace)
                #expect(stats["rereads"] as? Int == 3, "\(name): \(stats)")
                #expect(stats["items"] as? Int == 29, "\(name): this run's re-read, each row once: \(stats)")
                // The first pass's 2...10 and 12...30 answered again, and the 10 rows of the cut re-read too.
                #expect(stats["duplicates_dropped"] as? Int == (hold == 4 ? 28 : 38), "\(name): \(stats)")
            }
        }
    }

    @Test("without a primary key nothing changes: the repeated row is written twice, no re-read")
    func noPrimaryKeyNoChange() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let run = try await trawl(driftArguments(server, "plain", "insert=1", extra: []), in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try ids(workspace.text("out.jsonl")) == Array(1...10) + Array(10...30))
            #expect(requests(server, "plain") == 4)
            let stats = try totals(workspace)
            #expect(stats["rereads"] == nil && stats["duplicates_dropped"] == nil, "\(stats)")
            #expect(!run.stderr.contains("drift"))
        }
    }

    @Test("the job file's primary_key and allow_drift do what the flags do")
    func jobFileKeys() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write(
                "job.yaml",
                """
                settings: {allow_drift: true}
                sources:
                  - name: rows
                    url: "\(server.url("/drifting/jobbusy?offset=0&limit=10&insert=1&every=1"))"
                    paginate: {style: offset, total: total}
                    items: items
                    primary_key: id
                """)
            let run = try await trawl(["fetch", "job.yaml", "-o", "job.jsonl", "-q"], in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            let written = try ids(workspace.text("job.jsonl"))
            #expect(written.count == Set(written).count, "\(written)")
            try workspace.write("job.yaml", workspace.text("job.yaml").replacingOccurrences(of: "true", with: "false")
                .replacingOccurrences(of: "jobbusy", with: "jobbusy2"))
            let failed = try await trawl(["fetch", "job.yaml", "-o", "job.jsonl", "-q"], in: workspace)
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(failed.stderr.contains("rows [rows]: the range did not settle"), "\(failed.stderr)")
        }
    }
}
