import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Testing
import TrawlTestSupport
import TrawlTestServer

/// The same command with the same `--state` on the second day (issue 35, point 4): a finished full refresh runs
/// again and says so, replacing its output only when the new snapshot is complete; an interrupted run resumes
/// and says how much it kept.
@Suite("trawl fetch --state: the second day", .endToEnd)
struct SecondDayCLITests {
    /// A one-source job; the item count and `fail_page` come from the environment, outside the job's fingerprint
    /// (the same job on another day, whose collection grew). The values are long: environment values are
    /// redacted from the state wherever they appear, and a resume puts the new ones back.
    static func job(_ server: TestServer) -> String {
        """
        sources:
          - name: feed
            url: "\(server.url("/paged/link?n=${N}&per_page=10&fail_page=${FAIL_PAGE}"))"
            paginate: link
            items: ""
        """
    }

    @Test("a finished job runs again: a new run, said on stderr; the new snapshot replaces the old when complete")
    func finishedJobRunsAgain() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", Self.job(server))
            let command = ["fetch", "job.yaml", "-o", "out.jsonl", "--state", "st", "--attempts", "1"]
            let first = try await trawl(command, in: workspace, environment: ["N": "000025", "FAIL_PAGE": "000000"])
            #expect(first.status == 0, "\(first.stderr)")
            let day1 = workspace.text("out.jsonl")
            #expect(day1.split(separator: "\n").count == 25)

            // Day 2: the feed grew, and one page fails for good: the new run ends incomplete, yesterday's
            // snapshot is untouched and the new one waits beside it.
            let failed = try await trawl(command, in: workspace, environment: ["N": "000035", "FAIL_PAGE": "000003"])
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(failed.stderr.contains("finished, so this is a new run"), "\(failed.stderr)")
            #expect(!failed.stderr.contains("already done in an earlier run"), "\(failed.stderr)")
            #expect(workspace.text("out.jsonl") == day1, "the previous snapshot is kept until the new one is complete")
            #expect(workspace.exists("out.jsonl.trawl-next"))

            // The same command again resumes that run and completes it: the output is replaced whole.
            let resumed = try await trawl(command, in: workspace, environment: ["N": "000035", "FAIL_PAGE": "000000"])
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(resumed.stderr.contains("resuming run "), "\(resumed.stderr)")
            #expect(resumed.stderr.contains(": 2 pages kept, 2 to go"), "\(resumed.stderr)")
            #expect(resumed.stderr.contains("resumed: 2 pages (20 items) were kept from the interrupted run; "
                + "with this run's: 4 pages, 35 items"), "\(resumed.stderr)")
            let day2 = workspace.text("out.jsonl")
            #expect(day2.split(separator: "\n").count == 35)
            #expect(day2.hasPrefix(day1))
            #expect(!workspace.exists("out.jsonl.trawl-next"))

            // Day 3, nothing changed: a new run again, the same snapshot.
            let third = try await trawl(command, in: workspace, environment: ["N": "000035", "FAIL_PAGE": "000000"])
            #expect(third.status == 0, "\(third.stderr)")
            #expect(third.stderr.contains("finished, so this is a new run"), "\(third.stderr)")
            #expect(third.stderr.contains("units: 1 done (of 1)"), "\(third.stderr)")
            #expect(workspace.text("out.jsonl") == day2)
        }
    }

    @Test("--restart after an interrupted refresh writes in place and leaves no FILE.trawl-next behind")
    func restartRemovesStagedSnapshot() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", Self.job(server))
            let command = ["fetch", "job.yaml", "-o", "out.jsonl", "--state", "st", "--attempts", "1"]
            let first = try await trawl(command, in: workspace, environment: ["N": "000025", "FAIL_PAGE": "000000"])
            #expect(first.status == 0, "\(first.stderr)")
            let failed = try await trawl(command, in: workspace, environment: ["N": "000035", "FAIL_PAGE": "000003"])
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(workspace.exists("out.jsonl.trawl-next"))
            let restarted = try await trawl(
                command + ["--restart"], in: workspace, environment: ["N": "000035", "FAIL_PAGE": "000000"])
            #expect(restarted.status == 0, "\(restarted.stderr)")
            #expect(!workspace.exists("out.jsonl.trawl-next"), "the discarded run's staged snapshot is removed")
            #expect(workspace.text("out.jsonl").split(separator: "\n").count == 35)
            // The next day's run finds a finished run, stages again and publishes: nothing lingers either.
            let next = try await trawl(command, in: workspace, environment: ["N": "000035", "FAIL_PAGE": "000000"])
            #expect(next.status == 0 && next.stderr.contains("finished, so this is a new run"), "\(next.stderr)")
            #expect(!workspace.exists("out.jsonl.trawl-next"))
        }
    }

    @Test("Ctrl-C: what was kept and the command that resumes, exit 130; that command finishes the job")
    func interruptedByCtrlC() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Serial pages that each wait 50 ms: the run is still going when the signal comes.
            let url = server.url("/paged/page?n=300&per_page=10&delay=50")
            let command = ["fetch", "--url", url, "--paginate", "page", "--items", "items", "-o", "out.jsonl",
                           "--state", "st", "-c", "1", "--per-host", "1"]
            let child = try TrawlProcess(command, in: workspace, environment: [:])
            let started = try await waitUntil(child) {
                (try? FileManager.default.contentsOfDirectory(atPath: workspace.path("st/segments")))?.isEmpty == false
            }
            #expect(started)
            child.process.terminate(SIGINT)
            let status = try await child.wait()
            #expect(status == 130, "\(child.stderr)")
            #expect(child.stderr.contains("interrupted: "), "\(child.stderr)")
            #expect(child.stderr.contains("is kept in st"), "\(child.stderr)")
            let line = child.stderr.split(separator: "\n").first { $0.hasPrefix("resume with: trawl fetch ") }
            #expect(line != nil, "\(child.stderr)")
            let resumed = try await trawl(command, in: workspace)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(resumed.stderr.contains("resuming run "), "\(resumed.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<300))
        }
    }
}
