import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// End-to-end tests of `trawl fetch` against the test server's `/paged/STYLE` API (helpers in CLISupport.swift).

// MARK: - Jobs

/// Three sources in every walk shape: page with a total (planned, 4 pages in flight), cursor and link (serial);
/// the page source has a 2-value matrix. About 850 pages with a random 0-10 ms wait each.
private func mixedJob(_ server: TestServer, jitter: Int = 10) -> String {
    """
    settings:
      backoff_ms: 10
    sources:
      - name: pages
        url: "\(server.url("/paged/page?n={n}&per_page=10&jitter=\(jitter)"))"
        paginate: {style: page, total_pages: total_pages}
        items: items
        matrix:
          n: [3000, 2000]
      - name: cursor
        url: "\(server.url("/paged/cursor?n=1500&limit=10&jitter=\(jitter)"))"
        paginate: {style: "cursor:data.-1.id", param: starting_after}
        items: data
      - name: link
        url: "\(server.url("/paged/link?n=2000&per_page=10&jitter=\(jitter)"))"
        paginate: link
        items: ""

    """
}

private let mixedJobLines = itemLines(0..<3000) + itemLines(0..<2000) + itemLines(0..<1500) + itemLines(0..<2000)

// MARK: - Tests

@Suite("trawl fetch end to end", .endToEnd)
struct FetchCLITests {
    /// When a kill happens, counted from the start of the run (by progress, not time: the machine may be busy).
    enum KillPoint: CustomStringConvertible {
        /// Once the server has answered this many requests of this run.
        case requests(Int)
        /// As soon as the output file has grown in this run (a unit was just merged).
        case outputGrows

        var description: String {
            switch self {
            case .requests(let count): return "after \(count) requests"
            case .outputGrows: return "when the output grew"
            }
        }
    }

    @Test("kill -9 at any point, then the same command: the output is byte for byte the uninterrupted run's")
    func killAndResume() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", mixedJob(server))

            // The uninterrupted reference.
            let reference = try await trawl(
                ["fetch", "job.yaml", "-o", "ref.jsonl", "--state", "ref-state", "-q", "--report", "ref.json"],
                in: workspace)
            #expect(reference.status == 0, "\(reference.stderr)")
            let ref = workspace.data("ref.jsonl")
            #expect(String(decoding: ref, as: UTF8.self) == mixedJobLines)
            let referenceRequests = server.stats.requestsServed
            let referenceReport = try report(workspace, "ref.json")
            let referencePages = try #require(int(referenceReport, "totals", "pages"))
            #expect(referencePages == referenceRequests)
            #expect(referencePages == 300 + 200 + 150 + 200)

            let plans: [[KillPoint]] = [
                [.requests(5)],
                [.requests(80)],
                [.requests(250), .requests(150)],
                [.requests(600)],
                [.outputGrows],
                [.outputGrows, .outputGrows],
                [.requests(300), .outputGrows],
                [.requests(150), .requests(150), .requests(150)],
            ]
            let command = ["fetch", "job.yaml", "-o", "out.jsonl", "--state", "st", "-q"]
            for plan in plans {
                try? FileManager.default.removeItem(atPath: workspace.path("out.jsonl"))
                try? FileManager.default.removeItem(atPath: workspace.path("st"))
                server.resetStats()
                var killedRunning = 0
                for point in plan {
                    let requestsBefore = server.stats.requestsServed
                    let lengthBefore = workspace.data("out.jsonl").count
                    let child = try TrawlProcess(command, in: workspace, environment: [:])
                    switch point {
                    case .requests(let count):
                        _ = await killWhen(child) { server.stats.requestsServed - requestsBefore >= count }
                    case .outputGrows:
                        _ = await killWhen(child) { workspace.data("out.jsonl").count > lengthBefore }
                    }
                    child.kill()
                    try await child.wait()
                    if child.wasKilled { killedRunning += 1 }
                    // Only whole units in job order, up to the length the checkpoint records; a kill in the middle
                    // of appending a unit can leave a torn tail past it, which the resumed run cuts off.
                    let partial = workspace.data("out.jsonl")
                    #expect(ref.starts(with: partial), "plan \(plan): after a kill \(point) the output is no prefix")
                    let checkpoint = (try? jsonObject(workspace.data("st/checkpoint.json"))) ?? [:]
                    let outputs = checkpoint["outputs"] as? [String: [String: Any]] ?? [:]
                    let committed = (outputs.values.first?["length"] as? Int) ?? 0
                    #expect(committed <= partial.count, "plan \(plan): the checkpoint counts bytes that are not there")
                    let whole = partial.prefix(committed)
                    #expect(whole.isEmpty || whole.last == UInt8(ascii: "\n"))
                    for line in String(decoding: whole, as: UTF8.self).split(separator: "\n") {
                        #expect((try? jsonObject(line)) != nil, "not JSON: \(line)")
                    }
                }
                // A later kill can miss a resumed run that had little left; the first kill of a plan lands on a
                // fresh run (the watcher thread kills within a millisecond of the point, however busy the pool is).
                #expect(killedRunning >= 1, "plan \(plan): the job ended before it was killed")
                // The pages the checkpoint holds as durable after the last kill: the resumed run must fetch exactly
                // the others (what a killed run had fetched but not yet made durable is fetched again).
                // Units already merged into the output leave the checkpoint's unit list.
                let lastCheckpoint = (try? jsonObject(workspace.data("st/checkpoint.json"))) ?? [:]
                let units = lastCheckpoint["units"] as? [String: [String: Any]] ?? [:]
                let lastOutputs = lastCheckpoint["outputs"] as? [String: [String: Any]] ?? [:]
                let merged = (lastOutputs.values.first?["merged"] as? Int) ?? 0
                let unitPages = [300, 200, 150, 200]  // in job order, as mixedJob lists them
                let durablePages = unitPages.indices.reduce(0) { sum, ordinal in
                    if let unit = units[String(ordinal)] { return sum + ((unit["pages"] as? Int) ?? 0) }
                    return sum + (ordinal < merged ? unitPages[ordinal] : 0)
                }
                let requestsBeforeResume = server.stats.requestsServed
                let final = try await trawl(command + ["--report", "final.json"], in: workspace)
                #expect(final.status == 0, "plan \(plan): \(final.stderr)")
                let resumed = firstDifference([UInt8](workspace.data("out.jsonl")), [UInt8](ref))
                #expect(resumed == nil, "plan \(plan): the resumed output differs")
                #expect(final.stderr.isEmpty)

                // Pages committed before a kill are not fetched again.
                let allRequests = server.stats.requestsServed
                let finalReport = try report(workspace, "final.json")
                let finalPages = try #require(int(finalReport, "totals", "pages"))
                #expect(finalReport["resumed"] as? Bool == true)
                #expect(finalReport["complete"] as? Bool == true)
                #expect(
                    finalPages == referencePages - durablePages,
                    "plan \(plan): \(durablePages) pages were durable, the resumed run fetched \(finalPages) of \(referencePages)")
                // Requests a killed run had already written can reach the server after it died; they count as
                // served but not as pages of the final run.
                let finalRequests = allRequests - requestsBeforeResume
                #expect(finalPages <= finalRequests && finalRequests - finalPages <= 16, "\(finalPages) \(finalRequests)")
                // A completed job with state: running it again is a new run (issue 35), whose output, replaced
                // once complete, is the same bytes.
                let again = try await trawl(command, in: workspace)
                #expect(again.status == 0)
                #expect(firstDifference([UInt8](workspace.data("out.jsonl")), [UInt8](ref)) == nil)
                #expect(!workspace.exists("out.jsonl.trawl-next"))
            }
        }
    }

    @Test("shards by flag, by JOB_COMPLETION_INDEX and by SLURM_ARRAY_TASK_ID split the units without overlap")
    func shards() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write(
                "job.yaml",
                """
                sources:
                  - name: pages
                    url: "\(server.url("/paged/page?n={n}&per_page=7"))"
                    paginate: {style: page, total_pages: total_pages}
                    items: items
                    matrix:
                      n: [5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60]
                  - name: links
                    url: "\(server.url("/paged/link?n={n}&per_page=9"))"
                    paginate: link
                    items: ""
                    matrix:
                      n: [11, 22, 33]

                """)
            func run(_ name: String, _ extra: [String], environment: [String: String] = [:]) async throws -> [Substring] {
                let result = try await trawl(
                    ["fetch", "job.yaml", "--with-meta", "-q", "-o", "\(name).jsonl", "--state", "\(name)-state"]
                        + extra, in: workspace, environment: environment)
                #expect(result.status == 0, "\(name): \(result.stderr)")
                return workspace.text("\(name).jsonl").split(separator: "\n")
            }
            let all = try await run("all", [])
            let expectedCount = 390 + 66  // 5 + 10 + … + 60, and 11 + 22 + 33
            #expect(all.count == expectedCount)
            #expect(Set(all).count == all.count, "with --with-meta every line is distinct")
            var shards: [[Substring]] = []
            for index in 0..<3 { shards.append(try await run("shard\(index)", ["--shard", "\(index)/3"])) }
            for (index, lines) in shards.enumerated() {
                #expect(!lines.isEmpty, "shard \(index)/3 got no units")
                // Each shard's output keeps job order: its lines appear in the unsharded output in the same order.
                let positions = lines.compactMap { all.firstIndex(of: $0) }
                #expect(positions.count == lines.count)
                #expect(positions == positions.sorted())
            }
            let union = shards.flatMap { $0 }
            #expect(union.sorted() == all.sorted())
            for a in 0..<3 {
                for b in (a + 1)..<3 { #expect(Set(shards[a]).isDisjoint(with: Set(shards[b])), "\(a) and \(b)") }
            }
            // Whole units per shard: a unit's lines are all in one shard.
            for (index, lines) in shards.enumerated() {
                let units = Set(try lines.map { try jsonObject($0)["unit"] as? String ?? "" })
                for (other, otherLines) in shards.enumerated() where other != index {
                    let otherUnits = Set(try otherLines.map { try jsonObject($0)["unit"] as? String ?? "" })
                    #expect(units.isDisjoint(with: otherUnits))
                }
            }

            let kubernetes = try await run(
                "k8s", ["--shard-count", "3"], environment: ["JOB_COMPLETION_INDEX": "1"])
            #expect(kubernetes == shards[1])
            let slurm = try await run(
                "slurm", [], environment: ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"])
            #expect(slurm == shards[2])
            let slurmFromOne = try await run(
                "slurm1", [],
                environment: ["SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"])
            #expect(slurmFromOne == shards[0])

            // A shard's state is its own.
            let mixedUp = try await trawl(
                ["fetch", "job.yaml", "--with-meta", "-q", "-o", "shard0.jsonl", "--state", "shard0-state",
                 "--shard", "1/3"], in: workspace)
            #expect(mixedUp.status == 1)
            #expect(mixedUp.stderr.contains("belongs to shard 0/3, not 1/3"), "\(mixedUp.stderr)")
        }
    }

    @Test("bad shard settings are usage errors (exit 2)")
    func badShards() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write(
            "job.yaml", "sources:\n  - {name: a, url: \"http://127.0.0.1:9/x\", paginate: link, items: \"\"}\n")
        let outOfRange = try await trawl(["fetch", "job.yaml", "--shard", "3/3"], in: workspace)
        #expect(outOfRange.status == 2)
        #expect(outOfRange.stderr.contains("shard index 3 is out of range for 3 shards"), "\(outOfRange.stderr)")
        let slurmMismatch = try await trawl(
            ["fetch", "job.yaml", "--shard-count", "4"], in: workspace,
            environment: ["SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "3"])
        #expect(slurmMismatch.status == 2)
        #expect(slurmMismatch.stderr.contains("SLURM_ARRAY_TASK_COUNT is 3 but the shard count is 4"))
        let noCount = try await trawl(["fetch", "job.yaml"], in: workspace, environment: ["JOB_COMPLETION_INDEX": "1"])
        #expect(noCount.status == 2)
        #expect(noCount.stderr.contains("JOB_COMPLETION_INDEX is set"), "\(noCount.stderr)")
        #expect(!workspace.exists("job.jsonl"))
        #expect(noCount.stderr.contains("--shard-count"), "\(noCount.stderr)")
    }

    @Test(
        "job file errors name the file, the line and the field, and exit 1",
        arguments: [
            // Unknown key, line 6.
            (
                """
                sources:
                  - name: a
                    url: "http://127.0.0.1:9/x"
                    paginate: link
                    items: ""
                    retries: 3
                """, 6, "sources[0].retries", "unknown key 'retries'"
            ),
            // Unknown pagination style, line 4.
            (
                """
                sources:
                  - name: a
                    url: "http://127.0.0.1:9/x"
                    paginate: pages
                    items: ""
                """, 4, "sources[0].paginate", "unknown style 'pages'"
            ),
            // Unknown style in a paginate mapping, line 5.
            (
                """
                sources:
                  - name: a
                    url: "http://127.0.0.1:9/x"
                    paginate:
                      style: pagez
                      size: 10
                    items: ""
                """, 5, "sources[0].paginate.style", "unknown style 'pagez'"
            ),
            // A paginate option the style does not take, line 8.
            (
                """
                sources:
                  - name: a
                    url: "http://127.0.0.1:9/x"
                    paginate: link
                    items: ""
                  - name: b
                    url: "http://127.0.0.1:9/y"
                    paginate: {style: link, total_pages: total_pages}
                    items: ""
                """, 8, "sources[1].paginate.total_pages", "unknown key 'total_pages'"
            ),
            // Environment variable not set, line 5.
            (
                """
                sources:
                  - name: a
                    url: "http://127.0.0.1:9/x"
                    headers:
                      Authorization: "Bearer ${TRAWL_TEST_UNSET_VAR}"
                    paginate: link
                    items: ""
                """, 5, "sources[0].headers.Authorization", "TRAWL_TEST_UNSET_VAR is not set"
            ),
            // A template parameter no matrix axis defines, in the second source's URL, line 7.
            (
                """
                sources:
                  - name: a
                    url: "http://127.0.0.1:9/x"
                    paginate: link
                    items: ""
                  - name: b
                    url: "http://127.0.0.1:9/y?q={nope}"
                    paginate: link
                    items: ""
                    matrix:
                      yes: [1, 2]
                """, 7, "sources[1].url", "nope"
            ),
            // A setting out of range, line 2.
            (
                """
                settings:
                  concurrency: 0
                sources:
                  - {name: a, url: "http://127.0.0.1:9/x", paginate: link, items: ""}
                """, 2, "settings.concurrency", "must be at least 1"
            ),
        ])
    func jobFileErrors(text: String, line: Int, field: String, message: String) async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write("broken.yaml", text + "\n")
        let result = try await trawl(["fetch", "broken.yaml", "-o", "out.jsonl", "--state", "st"], in: workspace)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: broken.yaml:\(line):"), "\(result.stderr)")
        #expect(result.stderr.contains(": \(field): "), "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(!workspace.exists("out.jsonl"))
        #expect(!workspace.exists("st"))
    }

    @Test("a job file that is missing or not YAML exits 1 naming it")
    func unreadableJobFile() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let missing = try await trawl(["fetch", "nowhere.yaml"], in: workspace)
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("error: nowhere.yaml: cannot read the job file"), "\(missing.stderr)")
        try workspace.write("bad.yaml", "sources:\n  - name: a\n    url: [unclosed\n")
        let syntax = try await trawl(["fetch", "bad.yaml"], in: workspace)
        #expect(syntax.status == 1)
        #expect(syntax.stderr.hasPrefix("error: bad.yaml:"), "\(syntax.stderr)")
    }

    @Test("usage errors exit 2")
    func usageErrors() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        // Each is refused for its own mistake, said on stderr (another refusal would also exit 2).
        let cases: [([String], String)] = [
            (["fetch"], "give a job file or a URL (or --url)"),
            // Without --paginate a URL's pagination is detected (issue 21); --detect needs a URL to detect from.
            (["fetch", "j.yaml", "--detect"], "--detect and --dry-run take a URL, not a job file"),
            (["fetch", "j.yaml", "-o", "a", "--output-dir", "b"], "give -o or --output-dir, not both"),
            (["fetch", "j.yaml", "--url", "http://127.0.0.1:9/"], "give a job file or --url, not both"),
        ]
        for (arguments, message) in cases {
            let result = try await trawl(arguments, in: workspace)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("Error: " + message), "\(arguments): \(result.stderr)")
        }
        let badStyle = try await trawl(
            ["fetch", "--url", "http://127.0.0.1:9/", "--items", "", "--paginate", "pages"], in: workspace)
        #expect(badStyle.status == 2)
        #expect(badStyle.stderr.contains("unknown style 'pages'"), "\(badStyle.stderr)")
    }

    @Test("a page that fails for good: exit 1, listed with a retry command that finishes the job")
    func failures() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // fail_page comes from the environment (not part of the job's fingerprint), so the retry can heal it.
            try workspace.write(
                "job.yaml",
                """
                sources:
                  - name: pages
                    url: "\(server.url("/paged/page?n={n}&per_page=10"))"
                    paginate: {style: page, total_pages: total_pages}
                    items: items
                    matrix:
                      n: [30, 20]
                  - name: cursor
                    url: "\(server.url("/paged/cursor?n=50&limit=10&fail_page=${FAIL_PAGE}"))"
                    paginate: {style: "cursor:data.-1.id", param: starting_after}
                    items: data
                  - name: link
                    url: "\(server.url("/paged/link?n=40&per_page=10"))"
                    paginate: link
                    items: ""

                """)
            let result = try await trawl(
                ["fetch", "job.yaml", "-o", "out.jsonl", "--attempts", "2", "--backoff-ms", "1", "--report", "r.json"],
                in: workspace, environment: ["FAIL_PAGE": "000003"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("error: 1 page(s) failed after their retries:"), "\(result.stderr)")
            #expect(result.stderr.contains("cursor [cursor]"), "\(result.stderr)")
            #expect(result.stderr.contains("(page index 2, 2 attempts)"), "\(result.stderr)")
            #expect(result.stderr.contains("HTTP 500"), "\(result.stderr)")
            // The summary (no -q) says so too, on stderr: stdout is for items only.
            #expect(result.stderr.contains("1 FAILED"), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "\(result.stdout)")

            let r = try report(workspace, "r.json")
            let failures = try #require(r["failures"] as? [[String: Any]])
            #expect(failures.count == 1)
            let failure = try #require(failures.first)
            let page = try #require(failure["page"] as? String)
            #expect(!page.isEmpty)
            #expect(result.stderr.contains("cursor [cursor] \(page) (page index 2"), "\(result.stderr)")
            #expect(failure["page_index"] as? Int == 2)
            #expect(failure["status"] as? Int == 500)
            #expect(failure["source"] as? String == "cursor")
            #expect(int(r, "units", "failed") == 1)
            #expect(int(r, "units", "done") == 3)
            #expect(r["complete"] as? Bool == false)
            // Every item read is in the output, in job order: the cursor unit's two pages before the failed one,
            // then the link unit (whose segment also stays in the state, to be written again after the retry).
            #expect(
                workspace.text("out.jsonl") == itemLines(0..<30) + itemLines(0..<20) + itemLines(0..<20)
                    + itemLines(0..<40))
            #expect(result.stderr.contains("its 2 page(s) before it (20 items) are kept"), "\(result.stderr)")
            let holds = "out.jsonl holds every item read, in job order, but not all of: cursor (2 pages)"
            #expect(result.stderr.contains(holds), "\(result.stderr)")

            // The retry command: the same arguments plus the state directory the run used.
            let marker = "retry only what failed: "
            let retryLine = try #require(
                result.stderr.split(separator: "\n").first { $0.hasPrefix(marker) }, "\(result.stderr)")
            let retry = retryLine.dropFirst(marker.count).split(separator: " ").map(String.init)
            #expect(retry.first == "trawl")
            #expect(Array(retry.dropFirst().prefix(2)) == ["fetch", "job.yaml"])
            let stateIndex = try #require(retry.firstIndex(of: "--state"), "\(retryLine)")
            let stateDirectory = try #require(retry.indices.contains(stateIndex + 1) ? retry[stateIndex + 1] : nil)
            #expect(FileManager.default.fileExists(atPath: workspace.path(stateDirectory)), "\(stateDirectory)")
            #expect(result.stderr.contains("progress is saved in \(stateDirectory)"), "\(result.stderr)")

            server.resetStats()
            let retried = try await trawl(
                Array(retry.dropFirst()), in: workspace, environment: ["FAIL_PAGE": "999"])
            #expect(retried.status == 0, "\(retried.stderr)")
            #expect(
                workspace.text("out.jsonl")
                    == itemLines(0..<30) + itemLines(0..<20) + itemLines(0..<50) + itemLines(0..<40))
            // Only the failed unit's pages from the failed one on: cursor pages 3, 4, 5 and the empty 6th.
            #expect(server.stats.requestsServed <= 4, "\(server.stats.requestsServed) requests")
        }
    }

    @Test("secrets from the environment never reach the state, the report or the messages, even after kill -9")
    func secretsNeverPersisted() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let secret = "sekrit-123"
            // `token=` makes the server demand `Authorization: Bearer sekrit-123`; the token is also in every
            // page URL, in the Link headers the server sends back, and in the failing page's URL.
            try workspace.write(
                "job.yaml",
                """
                sources:
                  - name: pages
                    url: "\(server.url("/paged/page?n=1500&per_page=10&jitter=6&fault_hold=8&token=${TRAWL_TEST_TOKEN}"))"
                    headers: {Authorization: "Bearer ${TRAWL_TEST_TOKEN}"}
                    paginate: {style: page, total_pages: total_pages}
                    items: items
                  - name: cursor
                    url: "\(server.url("/paged/cursor?n=3000&limit=10&delay=5&jitter=12&fault_hold=12&key=${TRAWL_TEST_TOKEN}&token=${TRAWL_TEST_TOKEN}"))"
                    headers: {Authorization: "Bearer ${TRAWL_TEST_TOKEN}"}
                    paginate: {style: "cursor:data.-1.id", param: starting_after}
                    items: data
                  - name: link
                    url: "\(server.url("/paged/link?n=1500&per_page=10&jitter=6&fault_hold=12&token=${TRAWL_TEST_TOKEN}"))"
                    headers: {Authorization: "Bearer ${TRAWL_TEST_TOKEN}"}
                    paginate: link
                    items: ""
                  - name: failing
                    url: "\(server.url("/paged/link?n=100&per_page=10&fail_page=4&token=${TRAWL_TEST_TOKEN}"))"
                    headers: {Authorization: "Bearer ${TRAWL_TEST_TOKEN}"}
                    paginate: link
                    items: ""

                """)
            let environment = ["TRAWL_TEST_TOKEN": secret]
            let command = ["fetch", "job.yaml", "-o", "out.jsonl", "--state", "st", "--attempts", "2", "--backoff-ms", "1"]

            let secretBytes = Data(secret.utf8)
            func expectNoSecret(_ moment: String, except skipped: Set<String> = []) {
                let paths = files(under: workspace.directory.path)
                #expect(paths.contains { $0.hasSuffix("/st/checkpoint.json") }, "\(moment): no checkpoint")
                for path in paths where !skipped.contains(path) {
                    let data = FileManager.default.contents(atPath: path) ?? Data()
                    #expect(
                        data.range(of: secretBytes) == nil,
                        "\(moment): the secret is in \(path): \(String(decoding: data, as: UTF8.self).prefix(2000))")
                }
            }

            // Killed mid-walk: each walk is held at one page (half its body, then silence: `fault_hold`, first request
            // only), so however late a busy test process looks, the link unit's next URL (from the server's Link
            // header, with the token), the cursor unit's next cursor and the page unit's first page are in the
            // checkpoint and the job is still running.
            let child = try TrawlProcess(command + ["-q"], in: workspace, environment: environment)
            let midway = try await waitUntil(child) {
                let checkpoint = workspace.text("st/checkpoint.json")
                return checkpoint.contains(#""kind":"url""#) && checkpoint.contains(#""kind":"cursor""#)
                    && checkpoint.contains(#""first":"#)
            }
            child.kill()
            try await child.wait()
            #expect(midway)
            #expect(child.wasKilled, "the job ended before it was killed")
            let checkpoint = workspace.text("st/checkpoint.json")
            #expect(
                checkpoint.contains("${TRAWL_TEST_TOKEN}"),
                "the checkpoint holds no redacted URL: \(checkpoint.prefix(2000))")
            expectNoSecret("after kill -9")

            // Resumed to the end (one page fails for good): report, summary and failure list.
            let resumed = try TrawlProcess(command + ["--report", "r.json"], in: workspace, environment: environment)
            let status = try await resumed.wait()
            let stderr = resumed.stderr
            #expect(status == 1, "\(stderr)")
            #expect(stderr.contains("failed after their retries"), "\(stderr)")
            #expect(!resumed.stdout.contains(secret), "\(resumed.stdout)")
            #expect(!stderr.contains(secret), "\(stderr)")
            // The server accepted the token: the three good sources are complete, and the failing unit's three
            // pages before its failed fourth are kept.
            #expect(
                workspace.text("out.jsonl")
                    == itemLines(0..<1500) + itemLines(0..<3000) + itemLines(0..<1500) + itemLines(0..<30))
            let reportText = workspace.text("r.json")
            #expect(reportText.contains("${TRAWL_TEST_TOKEN}"), "the failure's URL is not redacted")
            let r = try report(workspace, "r.json")
            var failures = try #require(r["failures"] as? [[String: Any]])
            #expect(failures.count == 1)
            for index in failures.indices { failures[index]["page"] = nil }
            let reportWithoutPages = try JSONSerialization.data(withJSONObject: failures)
            #expect(reportWithoutPages.range(of: secretBytes) == nil)
            let failureLines = stderr.split(separator: "\n").filter { $0.hasPrefix("  failing [failing] ") }
            #expect(failureLines.count == 1, "\(stderr)")
            for line in stderr.split(separator: "\n") where !failureLines.contains(line) {
                #expect(!line.contains(secret), "\(line)")
            }
            expectNoSecret(
                "after the resumed run", except: [workspace.path("r.json"), resumed.stderrURL.path])
            #expect(!reportText.contains(secret), "\(reportText.prefix(3000))")
            #expect(!stderr.contains(secret), "\(stderr)")
        }
    }

    @Test("--page-size is the page size for page pagination and the limit for offset pagination")
    func pageSizeFlag() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let byPage = try await trawl(
                ["fetch", "--url", server.url("/paged/page?n=45"), "--items", "items", "--paginate", "page",
                 "--size-param", "per_page", "--page-size", "10", "--total-pages", "total_pages", "-o", "p.jsonl", "-q"],
                in: workspace)
            #expect(byPage.status == 0, "\(byPage.stderr)")
            #expect(workspace.text("p.jsonl") == itemLines(0..<45))
            let byOffset = try await trawl(
                ["fetch", "--url", server.url("/paged/offset?n=45"), "--items", "items", "--paginate", "offset",
                 "--page-size", "10", "--total", "total", "-o", "o.jsonl", "-q"],
                in: workspace)
            #expect(byOffset.status == 0, "\(byOffset.stderr)")
            #expect(workspace.text("o.jsonl") == itemLines(0..<45))
        }
    }

    @Test("one source from flags: --url, --items, --paginate; the output defaults to NAME.jsonl")
    func sourceFromFlags() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let cursor = try await trawl(
                ["fetch", "--url", server.url("/paged/cursor?n=35&limit=10"), "--items", "data",
                 "--paginate", "cursor:data.-1.id", "--cursor-param", "starting_after", "-q"], in: workspace)
            #expect(cursor.status == 0, "\(cursor.stderr)")
            #expect(workspace.text("items.jsonl") == itemLines(0..<35))
            let pages = try await trawl(
                ["fetch", "--url", server.url("/paged/page?n=35&per_page=10"), "--items", "items",
                 "--paginate", "page", "--total-pages", "total_pages", "--name", "things", "-q"], in: workspace)
            #expect(pages.status == 0, "\(pages.stderr)")
            #expect(workspace.text("things.jsonl") == itemLines(0..<35))
            // No --state: the temporary state is removed once the job is complete.
            let names = try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path)
            #expect(Set(names) == [".logs", "items.jsonl", "things.jsonl"])
        }
    }

    @Test("state that does not fit is refused with exit 1 and a way out; --restart starts over")
    func stateMismatchAndRestart() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", mixedJob(server, jitter: 0))
            let command = ["fetch", "job.yaml", "-o", "out.jsonl", "--state", "st", "-q"]
            #expect(try await trawl(command, in: workspace).status == 0)
            let first = workspace.data("out.jsonl")
            #expect(String(decoding: first, as: UTF8.self) == mixedJobLines)

            // The output vanished after a finished run: the next run is a new one, which writes it whole again.
            try FileManager.default.removeItem(atPath: workspace.path("out.jsonl"))
            let missing = try await trawl(command, in: workspace)
            #expect(missing.status == 0, "\(missing.stderr)")
            #expect(workspace.data("out.jsonl") == first)

            // The job changed (another URL): refused.
            try workspace.write("job.yaml", mixedJob(server, jitter: 1))
            let changed = try await trawl(command, in: workspace)
            #expect(changed.status == 1)
            #expect(changed.stderr.contains("the job changed since the state in st was written"), "\(changed.stderr)")

            // --restart: everything again, the output rewritten.
            try workspace.write("out.jsonl", "garbage\n")
            server.resetStats()
            let restarted = try await trawl(command + ["--restart"], in: workspace)
            #expect(restarted.status == 0, "\(restarted.stderr)")
            #expect(firstDifference([UInt8](workspace.data("out.jsonl")), [UInt8](first)) == nil)
            #expect(server.stats.requestsServed == 850)
        }
    }

    @Test("--output-dir writes one file per source; --with-meta wraps each item with source, unit and page")
    func withMetaAndOutputDirectory() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", mixedJob(server, jitter: 0))
            let result = try await trawl(
                ["fetch", "job.yaml", "--output-dir", "outdir", "--with-meta", "--state", "st", "--report", "r.json"],
                in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.contains("units: 4 done (of 4)"), "\(result.stderr)")
            #expect(result.stdout.isEmpty, "only items reach stdout: \(result.stdout)")
            let names = try FileManager.default.contentsOfDirectory(atPath: workspace.path("outdir")).sorted()
            #expect(names == ["cursor.jsonl", "link.jsonl", "pages.jsonl"])

            struct Expected {
                var source: String
                var units: [(id: String, count: Int, perPage: Int)]
            }
            let expected = [
                Expected(source: "pages", units: [("pages n=3000", 3000, 10), ("pages n=2000", 2000, 10)]),
                Expected(source: "cursor", units: [("cursor", 1500, 10)]),
                Expected(source: "link", units: [("link", 2000, 10)]),
            ]
            for source in expected {
                let lines = workspace.text("outdir/\(source.source).jsonl").split(separator: "\n")
                #expect(lines.count == source.units.reduce(0) { $0 + $1.count })
                var index = 0
                var bad = 0
                for unit in source.units {
                    for id in 0..<unit.count {
                        guard index < lines.count else { break }
                        let object = try jsonObject(lines[index])
                        index += 1
                        let item = object["item"] as? [String: Any]
                        let good =
                            Set(object.keys) == ["source", "unit", "page", "item"]
                            && object["source"] as? String == source.source
                            && object["unit"] as? String == unit.id
                            && object["page"] as? Int == id / unit.perPage
                            && item?["id"] as? Int == id && item?["name"] as? String == "item-\(id)"
                        if !good {
                            bad += 1
                            if bad <= 3 { Issue.record("\(source.source) line \(index): \(lines[index - 1])") }
                        }
                    }
                }
                #expect(bad == 0)
            }
            let first = workspace.text("outdir/pages.jsonl").prefix { $0 != "\n" }
            #expect(first == #"{"source":"pages","unit":"pages n=3000","page":0,"item":{"id":0,"name":"item-0"}}"#)
            let r = try report(workspace, "r.json")
            let outputs = try #require(r["outputs"] as? [[String: Any]])
            #expect(Set(outputs.compactMap { $0["path"] as? String })
                == ["outdir/pages.jsonl", "outdir/cursor.jsonl", "outdir/link.jsonl"])

            // The same state without --with-meta is refused rather than mixing shapes.
            let mixed = try await trawl(
                ["fetch", "job.yaml", "--output-dir", "outdir", "--state", "st", "-q"], in: workspace)
            #expect(mixed.status == 1)
            #expect(mixed.stderr.contains("was written with --with-meta"), "\(mixed.stderr)")
        }
    }
}
