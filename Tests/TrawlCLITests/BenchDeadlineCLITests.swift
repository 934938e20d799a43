import Foundation
import Testing
import TrawlTestServer
import TrawlTestSupport

/// `trawl bench --json ARGUMENTS`: the exit status and the report.
private func benchJSON(_ arguments: [String]) async throws -> (status: Int32, report: [String: Any], stderr: String) {
    let result = try await trawl(["bench", "--json", "--quiet"] + arguments)
    let report = try #require(
        try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
        "\(result.stdout)\n\(result.stderr)")
    return (result.status, report, result.stderr)
}

/// Deadlines, per-request timeouts, spans with units and failures by status (issue 37, points 1-3).
@Suite("trawl bench: deadlines, timeouts and failures by status", .serialized, .endToEnd)
struct BenchDeadlineCLITests {
    @Test func aStalledServerIsCutOffAtTheDeadline() async throws {
        try await TestServer.with { server in
            let began = ContinuousClock.now
            let run = try await benchJSON(["-c", "2", "-d", "2s", server.url("/stall?after=10")])
            let wall = began.duration(to: .now)
            // Both requests stall: none succeeds (exit 1), both are cut off, none is an error.
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.report["cut_off"] as? Int == 2)
            #expect(run.report["failed"] as? Int == 0)
            #expect(run.report["requests"] as? Int == 0)
            // -d 2 plus a grace of 0.5 s; before, the run waited for the 30 s stall timeout (61 s in all).
            let seconds = try #require(run.report["duration_s"] as? Double)
            #expect(seconds >= 2 && seconds < 15, "\(seconds) s")
            #expect(wall < .seconds(25), "\(wall)")
        }
    }

    @Test func timeoutPerRequestAndTheZAlias() async throws {
        try await TestServer.with { server in
            let run = try await benchJSON([
                "-c", "2", "-z", "1500ms", "--timeout", "200ms", server.url("/json/small"), server.url("/delay/3000"),
            ])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.report["timeout_s"] as? Double == 0.2)
            let errors = try #require(run.report["errors"] as? [String: Int])
            #expect((errors["timeout"] ?? 0) >= 1, "\(errors)")
            #expect(errors.keys.allSatisfy { $0 == "timeout" }, "\(errors)")
            #expect((run.report["requests"] as? Int ?? 0) >= 1)
            let seconds = try #require(run.report["duration_s"] as? Double)
            #expect(seconds >= 1.5 && seconds < 10, "\(seconds) s")
        }
    }

    @Test func spansTakeUnitsEverywhere() async throws {
        try await TestServer.with { server in
            let run = try await benchJSON([
                "-c", "2", "-d", "0.3", "--warmup", "100ms", "--interval", "100ms", "--connect-timeout", "2s",
                server.url("/json/small"),
            ])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.report["warmup_s"] as? Double == 0.1)
            let seconds = try #require(run.report["duration_s"] as? Double)
            #expect(seconds >= 0.3, "\(seconds) s")
            let bad = try await trawl(["bench", "-d", "2 sec", server.url("/json/small")])
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("500ms"), "\(bad.stderr)")
        }
    }

    @Test func everyAnswerA404IsAFailedRun() async throws {
        try await TestServer.with { server in
            let run = try await benchJSON(["-n", "40", "-c", "2", server.url("/status/404")])
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.report["errors"] as? [String: Int] == ["http_4xx": 40])
            #expect(run.report["failed"] as? Int == 40)
            #expect(run.report["statuses"] as? [String: Int] == ["404": 40])
            #expect(run.report["expect_status"] as? String == "200-399")
        }
    }

    @Test func errorThresholdsJudgeStatusesUnlessExpected() async throws {
        try await TestServer.with { server in
            let urls = [server.url("/json/small"), server.url("/status/404")]
            let failing = try await benchJSON(["-n", "40", "-c", "2", "--threshold", "errors<1%"] + urls)
            #expect(failing.status == 3, "\(failing.stderr)")
            #expect(failing.report["errors"] as? [String: Int] == ["http_4xx": 20])
            #expect(failing.report["requests"] as? Int == 20)
            let passing = try await benchJSON(
                ["-n", "40", "-c", "2", "--threshold", "errors<1%", "--expect-status", "200,404"] + urls)
            #expect(passing.status == 0, "\(passing.stderr)")
            #expect(passing.report["errors"] as? [String: Int] == [:])
            #expect(passing.report["requests"] as? Int == 40)
            #expect(passing.report["expect_status"] as? String == "200,404")
            let bad = try await trawl(["bench", "--expect-status", "2xx", server.url("/json/small")])
            #expect(bad.status == 2)
        }
    }

    @Test func theSummaryComesBeforeTheClosingErrorLine() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let command = "trawl bench -n 20 -c 2 --quiet --threshold 'rps>100000000' '\(server.url("/json/small"))' 2>&1"
            let child = try TrawlProcess(
                ["-c", command], in: workspace, environment: [:], executable: URL(fileURLWithPath: "/bin/sh"))
            let status = try await child.wait()
            #expect(status == 3)
            let lines = child.stdout.split(separator: "\n").map(String.init)
            let summary = try #require(lines.firstIndex { $0.hasPrefix("  requests/s") }, "\(lines)")
            let verdict = try #require(lines.firstIndex { $0.hasPrefix("error: 1 threshold(s) failed") }, "\(lines)")
            #expect(summary < verdict, "\(lines)")
            #expect(verdict == lines.count - 1, "the error line is the last: \(lines)")
        }
    }
}
