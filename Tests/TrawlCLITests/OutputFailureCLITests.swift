import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// A closed stdout ends with curl's exit 23 and one short line; files that cannot be written are named with the
/// reason, never as a raw Foundation error.
@Suite("CLI output failures", .endToEnd)
struct OutputFailureCLITests {
    /// `trawl ARGUMENTS | head -c 100`, returning trawl's own exit status and stderr.
    func piped(_ arguments: String, in workspace: Workspace) async throws -> RunResult {
        let script = "trawl \(arguments) | head -c 100 > /dev/null; exit ${PIPESTATUS[0]}"
        let child = try TrawlProcess(
            ["-c", script], in: workspace, environment: [:], executable: URL(fileURLWithPath: "/bin/bash"))
        let status = try await child.wait()
        return RunResult(status: status, stdout: child.stdout, stderr: child.stderr)
    }

    @Test("get and extract into a pipe closed early: exit 23 and at most one short line")
    func closedStdout() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            for arguments in [
                "get -s '\(server.url("/bytes/5000000"))'",
                "extract -p items '\(server.url("/paged/page?n=200000&per_page=200000"))'",
            ] {
                let result = try await piped(arguments, in: workspace)
                #expect(result.status == 23, "\(arguments): \(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count <= 1, "\(result.stderr)")
                #expect(result.stderr.count < 100)
                #expect(!result.stderr.contains("Domain"))
            }
        }
    }

    @Test("get -o /dev/full: exit 23 naming the file and why")
    func fullDisk() async throws {
        try await TestServer.with { server in
            let result = try await trawl(["get", "-s", "-o", "/dev/full", server.url("/bytes/300000")])
            #expect(result.status == 23)
            #expect(result.stderr.contains("'/dev/full': No space left on device"), "\(result.stderr)")
        }
    }

    @Test("fetch: a report or state that cannot be written is named with the reason")
    func unwritableReportAndState() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("file", "")
            let source = ["fetch", "-q", "--url", server.url("/paged/page?n=30&per_page=10"), "--paginate", "page",
                          "--items", "items", "-o", "out.jsonl"]
            let report = try await trawl(source + ["--report", "file/report.json"], in: workspace)
            #expect(report.status == 1)
            #expect(report.stderr.contains("file/report.json"), "\(report.stderr)")
            #expect(report.stderr.contains("Not a directory"))
            #expect(!report.stderr.contains("Domain="))

            let state = try await trawl(source + ["--state", "file/state"], in: workspace)
            #expect(state.status == 1)
            #expect(state.stderr.contains("file/state"), "\(state.stderr)")
            #expect(state.stderr.contains("Not a directory"))
            #expect(!state.stderr.contains("Domain="))
        }
    }
}
