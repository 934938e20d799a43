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
    @Test("a row inserted at the head while an offset walk runs: re-read once, each key once, the new row too")
    func insertedRowSettles() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let run = try await trawl(driftArguments(server, "ins", "insert=1", extra: ["--primary-key", "id"]), in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            let written = try ids(workspace.text("out.jsonl"))
            // First pass (serial: each page says the total): 1...10, 10...19 (10 again: dropped), 20...29, 30; the
            // re-read (31 rows, 4 pages) adds 31, the new head.
            #expect(written.count == 31, "\(written)")
            #expect(Set(written) == Set(1...31), "\(written)")
            let stats = try totals(workspace)
            #expect(stats["duplicates_dropped"] as? Int == 1 + 30, "\(stats)")  // 10 once, then the re-read's 30
            #expect(stats["rereads"] as? Int == 4, "\(stats)")  // the re-read's 4 pages (31 rows)
            #expect(requests(server, "ins") == 4 + 4)
            #expect(try ids(workspace.text("out.jsonl")).last == 31)
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
            // First pass: 1...10, 12...21, 22...30 (11 skipped: 29 keys of 30 announced); the re-read writes 11.
            #expect(written.count == 30, "\(written)")
            #expect(Set(written) == Set(1...30), "\(written)")
            #expect(written.last == 11)
            let stats = try totals(workspace)
            #expect(stats["rereads"] as? Int == 3, "\(stats)")
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
        in workspace: Workspace
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
        return try await trawl(arguments, in: workspace)
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
            #expect(written.count == 31 && Set(written) == Set(1...31), "each key once: \(written)")
            #expect(Array(written.prefix(20)) == Array(1...20))
            #expect(written.last == 31, "the re-read after the resume found the new head row: \(written)")
            let stats = try totals(workspace)
            // 20 again after the resume, then the re-read's 30 rows written already.
            #expect(stats["duplicates_dropped"] as? Int == 1 + 30, "\(stats)")
            #expect(stats["rereads"] as? Int == 4, "\(stats)")
        }
    }

    @Test("kill -9 during the re-read: the resume reads again and writes only the rows still missing")
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
                    server, name, "delete=1&hold=\(hold)", pages: 3, segment: segment, requests: hold,
                    in: workspace)
                #expect(run.status == 0, "\(name): \(run.stderr)")
                let written = try ids(workspace.text("out.jsonl"))
                #expect(written.count == 30 && Set(written) == Set(1...30), "\(name): each key once: \(written)")
                #expect(written.last == 11, "\(name): \(written)")
                let stats = try totals(workspace)
                #expect(stats["rereads"] as? Int == 3, "\(name): \(stats)")
                // The resumed re-read drops what is written: 2...10 and 12...30, and 11 too when it was durable.
                #expect(stats["duplicates_dropped"] as? Int == (hold == 4 ? 28 : 29), "\(name): \(stats)")
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
