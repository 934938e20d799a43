import Foundation
import Testing
import TrawlTestServer
import TrawlTestSupport

/// docs/jobs.md's daily job (issue 16: incremental, dependent, conditional and OAuth2 in one file), run twice
/// against the loopback server with its example URLs pointed there.
@Suite("docs/jobs.md's daily job end to end", .endToEnd)
struct DailyJobCLITests {
    /// The YAML block of docs/jobs.md's "A daily job" section.
    static func documentedJob() throws -> String {
        try codeBlock("yaml", after: "## A daily job", in: try docsFile("jobs.md")) + "\n"
    }

    static func pointed(_ job: String, at server: TestServer) throws -> String {
        let replacements = [
            "https://auth.example.com/oauth/token":
                server.url("/oauth/token?realm=daily&id=${CLIENT_ID}&secret=${CLIENT_SECRET}"),
            "https://api.example.com/teams?per_page=100": server.url("/feed/teams?per_page=2"),
            "https://api.example.com/teams/{teams.id}/members?per_page=100":
                server.url("/family/kids/") + "{teams.id}?n=3&per_page=2",
            "https://api.example.com/events?per_page=100": server.url("/feed/events?per_page=5"),
        ]
        var job = job
        for (from, to) in replacements {
            #expect(job.contains(from), "docs/jobs.md's daily job no longer names \(from)")
            job = job.replacingOccurrences(of: from, with: to)
        }
        return job
    }

    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    @Test("two runs: teams from the cache, members per team with _parent, only the new events; one token per run")
    func twoDailyRuns() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("daily.yaml", try Self.pointed(try Self.documentedJob(), at: server))
            server.feedAdd("teams", count: 3)
            server.feedAdd("events", count: 12)
            let environment = ["CLIENT_ID": "app", "CLIENT_SECRET": "s3cret"]
            let arguments = ["fetch", "daily.yaml", "--state", "daily.state", "--output-dir", "out", "-q",
                             "--report", "report.json"]

            let first = try await trawl(arguments, in: workspace, environment: environment)
            #expect(first.status == 0, "\(first.stderr)")
            let teams = workspace.text("out/teams.jsonl")
            #expect(teams == (0..<3).compactMap { server.feedLine("teams", id: $0) }.joined())
            let members = Self.lines(workspace.text("out/members.jsonl"))
            #expect(members.count == 9)
            for (index, line) in members.enumerated() {
                let item = try jsonObject(Substring(line))
                #expect((item["_parent"] as? [String: Any])?["id"] as? Int == index / 3)
                #expect(item["parent"] as? String == String(index / 3))
                #expect(item["k"] as? Int == index % 3)
            }
            let runs1 = try FileManager.default.contentsOfDirectory(atPath: workspace.path("out/events"))
            #expect(runs1.count == 1)
            #expect(workspace.text("out/events/" + runs1[0])
                == (0..<12).compactMap { server.feedLine("events", id: $0) }.joined())
            #expect(!workspace.text("report.json").contains("s3cret"))
            let files = FileManager.default.enumerator(atPath: workspace.directory.path)?.allObjects as? [String] ?? []
            #expect(!files.isEmpty)
            #expect(!files.contains { workspace.text($0).contains("s3cret") }, "a file keeps the client secret")

            // A day later: 4 new events, 1 changed; the teams are unchanged (304 from the cache).
            server.feedAdd("events", count: 4)
            server.feedTouch("events", id: 11)
            server.resetRequestLog()
            let second = try await trawl(arguments, in: workspace, environment: environment)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(workspace.text("out/teams.jsonl") == teams)
            #expect(server.requestLog.filter { $0.target.hasPrefix("/feed/teams") }.map(\.status) == [304, 304])
            #expect(Self.lines(workspace.text("out/members.jsonl")) == members)
            let runs2 = try FileManager.default.contentsOfDirectory(atPath: workspace.path("out/events"))
                .filter { $0 != runs1[0] }
            #expect(runs2.count == 1)
            #expect(workspace.text("out/events/" + runs2[0])
                == [12, 13, 14, 15, 11].compactMap { server.feedLine("events", id: $0) }.joined())
            let totals = try #require(try report(workspace, "report.json")["totals"] as? [String: Any])
            #expect(totals["not_modified"] as? Int == 2)
            // One token request per run, every page of the run carrying it.
            #expect(server.requestLog.filter { $0.target.hasPrefix("/oauth/token") }.count == 1)
            #expect(server.requestLog.filter { !$0.target.hasPrefix("/oauth/") }
                .allSatisfy { $0.headers["authorization"]?.hasPrefix("Bearer daily-") == true })
        }
    }
}
