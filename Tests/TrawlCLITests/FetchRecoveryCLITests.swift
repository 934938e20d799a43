import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// End-to-end tests of what `trawl fetch` does when pages fail for good, when a search API caps its results, and
// how it shows progress (helpers in CLISupport.swift).

/// Items of `/paged/*?tag=TAG` with ids `0..<count`, as `trawl fetch` writes them.
private func tagged(_ tag: String, _ count: Int) -> String {
    (0..<count).map { SyntheticItems.json(id: $0, tag: tag) + "\n" }.joined()
}

@Suite("trawl fetch: failed pages, retries, caps and progress", .endToEnd)
struct FetchRecoveryCLITests {
    /// Three units in job order; the middle one's third page answers 404 the first time it is asked for.
    private func job(_ server: TestServer, fault: String) -> String {
        """
        sources:
          - name: first
            url: "\(server.url("/paged/cursor?n=30&limit=10&tag=first"))"
            paginate: {style: "cursor:data.-1.id", param: starting_after}
            items: data
          - name: middle
            url: "\(server.url("/paged/page?n=50&per_page=10&tag=middle\(fault)"))"
            paginate: {style: page, total_pages: total_pages}
            items: items
          - name: last
            url: "\(server.url("/paged/link?n=40&per_page=10&tag=last"))"
            paginate: link
            items: ""

        """
    }

    @Test("a 404 in the middle unit: the others' items are written, and the printed retry ends byte for byte clean")
    func failedMiddleUnitThenRetry() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("clean.yaml", job(server, fault: ""))
            try workspace.write("job.yaml", job(server, fault: "&fault_404=3"))

            let clean = try await trawl(["fetch", "clean.yaml", "-o", "clean.jsonl", "-q"], in: workspace)
            #expect(clean.status == 0, "\(clean.stderr)")
            let reference = workspace.data("clean.jsonl")
            let expected = tagged("first", 30) + tagged("middle", 50) + tagged("last", 40)
            #expect(String(decoding: reference, as: UTF8.self) == expected)

            // --restart and no --state: the retry command must drop the one and add the other.
            let failed = try await trawl(
                ["fetch", "job.yaml", "-o", "out.jsonl", "--restart", "--report", "r.json", "--backoff-ms", "1"],
                in: workspace)
            #expect(failed.status == 1, "\(failed.stderr)")
            let stderr = failed.stderr
            #expect(stderr.contains("error: 1 page(s) failed after their retries:"), "\(stderr)")
            #expect(stderr.contains("  middle [middle] page 3 (page index 2, 1 attempts): "), "\(stderr)")
            #expect(stderr.contains("HTTP 404"), "\(stderr)")
            #expect(stderr.contains("its 2 page(s) before it (20 items) are kept"), "\(stderr)")
            #expect(
                stderr.contains("out.jsonl holds every item read, in job order, but not all of: middle (2 pages)."),
                "\(stderr)")

            // The good items are in the output, in job order; only the first unit's bytes are final.
            let partial = tagged("first", 30) + tagged("middle", 20) + tagged("last", 40)
            #expect(workspace.text("out.jsonl") == partial)
            let r = try report(workspace, "r.json")
            let outputs = try #require(r["outputs"] as? [[String: Any]])
            let output = try #require(outputs.first)
            #expect(output["settled_bytes"] as? Int == tagged("first", 30).utf8.count)
            #expect(output["bytes"] as? Int == partial.utf8.count)
            #expect(output["units"] as? Int == 2)
            let incomplete = try #require(output["incomplete"] as? [[String: Any]])
            #expect(incomplete.count == 1)
            #expect(incomplete.first?["unit"] as? String == "middle")
            #expect(incomplete.first?["pages"] as? Int == 2)
            #expect(incomplete.first?["items"] as? Int == 20)
            let failures = try #require(r["failures"] as? [[String: Any]])
            #expect(failures.count == 1)
            #expect(failures.first?["status"] as? Int == 404)
            #expect(failures.first?["kept_pages"] as? Int == 2)
            #expect(r["complete"] as? Bool == false)

            let marker = "retry only what failed: "
            let retryLine = try #require(stderr.split(separator: "\n").first { $0.hasPrefix(marker) }, "\(stderr)")
            let retry = String(retryLine.dropFirst(marker.count))
            #expect(!retry.contains("--restart"), "\(retry)")
            #expect(retry.hasPrefix("trawl fetch job.yaml -o out.jsonl --report r.json --backoff-ms 1 --state "))

            // Run the printed command as printed: only the missing pages are fetched, and the output ends as the
            // clean run's, byte for byte.
            server.resetStats()
            let retried = try await shell(retry, in: workspace)
            #expect(retried.status == 0, "\(retried.stderr)")
            #expect(firstDifference([UInt8](workspace.data("out.jsonl")), [UInt8](reference)) == nil)
            #expect(server.stats.requestsServed == 3, "the middle unit's pages 3 to 5 only")
            let after = try report(workspace, "r.json")
            #expect(after["complete"] as? Bool == true)
            #expect(after["resumed"] as? Bool == true)
        }
    }

    @Test("a search cap: --max-items (or max_items in the job file) stops each unit there, flagged in the report")
    func searchCap() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // 500 results announced; the API refuses pages past the first 100 (as GitHub's does past 1,000).
            let url = server.url("/paged/page?n=500&per_page=10&tag=s&result_cap=100&incomplete=2")
            let base = ["fetch", "--url", url, "--items", "items", "--paginate", "page", "--total", "total_count"]
            let refused = try await trawl(base + ["-o", "refused.jsonl", "-q"], in: workspace)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("HTTP 422"), "\(refused.stderr)")

            let capped = try await trawl(
                base + ["-o", "capped.jsonl", "--max-items", "100", "--report", "r.json"], in: workspace)
            #expect(capped.status == 0, "\(capped.stderr)")
            #expect(workspace.text("capped.jsonl") == tagged("s", 100))
            let cappedLine = "incomplete? items [items]: capped at 100 of 500 items (max_items 100: 10 of 50 pages)"
            #expect(capped.stderr.contains(cappedLine), "\(capped.stderr)")
            #expect(capped.stderr.contains("incomplete_results: true on 1 page(s) (page index 1)"), "\(capped.stderr)")
            let flags = try #require(try report(workspace, "r.json")["flags"] as? [[String: Any]])
            #expect(Set(flags.compactMap { $0["kind"] as? String }) == ["capped", "incomplete_results"])

            try workspace.write(
                "search.yaml",
                """
                sources:
                  - name: search
                    url: "\(url)"
                    paginate: {style: page, total_items: total_count}
                    items: items
                    max_pages: 3

                """)
            let fromFile = try await trawl(["fetch", "search.yaml", "-q", "--report", "f.json"], in: workspace)
            #expect(fromFile.status == 0, "\(fromFile.stderr)")
            #expect(workspace.text("search.jsonl") == tagged("s", 30))
            let fileFlags = try #require(try report(workspace, "f.json")["flags"] as? [[String: Any]])
            let pagesCap = "capped at 30 of 500 items (max_pages 3: 3 of 50 pages)"
            #expect(fileFlags.contains { $0["message"] as? String == pagesCap }, "\(fileFlags)")

            let bad = try await trawl(base + ["--max-items", "0"], in: workspace)
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("--max-items must be at least 1"), "\(bad.stderr)")
        }
    }

    @Test("off a terminal, progress is plain lines on stderr (no escape codes); -q prints none")
    func progressOffTerminal() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let arguments = [
                "fetch", "--url", server.url("/paged/page?n=30&per_page=10"), "--items", "items", "--paginate", "page",
                "--total-pages", "total_pages",
            ]
            let plain = try await trawl(arguments + ["-o", "a.jsonl"], in: workspace)
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(!plain.stderr.contains("\u{1B}"))
            #expect(!plain.stderr.contains("\r"))
            // The last progress line, then the summary (stderr too: stdout is for items only).
            let lines = plain.stderr.split(separator: "\n")
            let progress = lines.last { $0.hasPrefix("units ") && !$0.hasPrefix("units:") }
            #expect(progress?.hasPrefix("units 1/1  pages 3/3  items 30  ") == true, "\(plain.stderr)")
            #expect(lines.contains("units: 1 done (of 1)"), "\(plain.stderr)")
            #expect(plain.stdout.isEmpty, "\(plain.stdout)")
            let quiet = try await trawl(arguments + ["-o", "b.jsonl", "-q"], in: workspace)
            #expect(quiet.status == 0)
            #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
            #expect(quiet.stdout.isEmpty, "\(quiet.stdout)")
        }
    }

    @Test("--shard-count without JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID is a usage error, not a full run")
    func shardCountWithoutIndex() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write(
            "job.yaml", "sources:\n  - {name: a, url: \"http://127.0.0.1:9/x\", paginate: link, items: \"\"}\n")
        let result = try await trawl(["fetch", "job.yaml", "--shard-count", "3"], in: workspace)
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("--shard-count 3 was given but JOB_COMPLETION_INDEX"), "\(result.stderr)")
        #expect(result.stderr.contains("--shard I/3"), "\(result.stderr)")
        #expect(!workspace.exists("job.jsonl"))
        let disagree = try await trawl(["fetch", "job.yaml", "--shard", "0/2", "--shard-count", "3"], in: workspace)
        #expect(disagree.status == 2)
        #expect(disagree.stderr.contains("--shard 0/2 has 2 shards but --shard-count is 3"), "\(disagree.stderr)")
    }

    @Test("two demos at once each get a directory of their own")
    func concurrentDemos() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let arguments = ["demo", "--scale", "0.02", "--no-faults", "-q"]
        let one = try TrawlProcess(arguments, in: workspace, environment: [:])
        let two = try TrawlProcess(arguments, in: workspace, environment: [:])
        let statuses = [try await one.wait(), try await two.wait()]
        var directories: [String] = []
        for child in [one, two] {
            // The demo's last line names the directory: "output: DIR/{repos,events,charges}.jsonl".
            let line = child.stdout.split(separator: "\n").last { $0.hasPrefix("output: ") && $0.contains("/{") }
            let path = line.map { String($0.dropFirst("output: ".count).prefix { $0 != "{" }) }
            if let path { directories.append(path) }
        }
        defer { for directory in directories { try? FileManager.default.removeItem(atPath: directory) } }
        #expect(statuses == [0, 0], "\(one.stderr)\n\(two.stderr)")
        #expect(directories.count == 2)
        #expect(Set(directories).count == 2, "\(directories)")
        for directory in directories {
            #expect(FileManager.default.fileExists(atPath: directory + "repos.jsonl"), "\(directory)")
        }
    }
}
