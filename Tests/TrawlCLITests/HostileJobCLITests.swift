import Foundation
import Testing
import TrawlTestServer
import TrawlTestSupport

/// The older hostile classes, end to end: secrets that must not cross an origin or reach a report or stderr, job
/// values that can never be sent, and a link planted where trawl makes its temporary state.
@Suite("Secrets across origins, values refused at read, planted state links", .endToEnd)
struct HostileJobCLITests {
    static let secret = "sess-VALUE-7731"

    func job(url: String, extra: String = "") -> String {
        """
        sources:
          - name: a
            url: "\(url)"
            paginate: link
            items: ""
        \(extra)
        """
    }

    @Test("a header whose value comes from ${VAR} is a credential whatever its name: not sent to another origin")
    func secretHeaderStaysHome() async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                let workspace = try Workspace()
                defer { workspace.remove() }
                let url = home.url("/paged/link?n=30&per_page=10&next_origin=\(other.baseURL)&next_origin_from=1")
                try workspace.write(
                    "job.yaml",
                    job(url: url, extra: "    headers: {X-Session: \"${SESS}\", X-Plain: visible}"))
                let result = try await trawl(
                    ["fetch", "job.yaml", "-o", "out.jsonl", "-q"], in: workspace, environment: ["SESS": Self.secret])
                #expect(result.status == 0, "\(result.stderr)")
                #expect(workspace.text("out.jsonl") == itemLines(0..<30))
                #expect(home.requestLog.allSatisfy { $0.headers["x-session"] == Self.secret })
                #expect(!other.requestLog.isEmpty)
                #expect(other.requestLog.allSatisfy { $0.headers["x-session"] == nil }, "the secret crossed")
                #expect(other.requestLog.allSatisfy { $0.headers["x-plain"] == "visible" })
            }
        }
    }

    @Test("a POST body holding a secret is not sent to another origin: the walk fails at that page, kept pages stay")
    func secretBodyStaysHome() async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                let workspace = try Workspace()
                defer { workspace.remove() }
                let url = home.url("/paged/link?n=30&per_page=10&next_origin=\(other.baseURL)&next_origin_from=1")
                try workspace.write(
                    "job.yaml", job(url: url, extra: "    method: POST\n    body: '{\"key\": \"${SESS}\"}'"))
                let result = try await trawl(
                    ["fetch", "job.yaml", "-o", "out.jsonl", "-q"], in: workspace, environment: ["SESS": Self.secret])
                #expect(result.status == 1, "\(result.stderr)")
                #expect(result.stderr.contains("request body holds a secret"), "\(result.stderr)")
                #expect(other.requestLog.isEmpty, "the body went to the other origin")
                #expect(workspace.text("out.jsonl") == itemLines(0..<10))
            }
        }
    }

    @Test("auth_token, private_token and session_token values are not in the report or on stderr")
    func moreQueryTokensAreRedacted() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let url = server.url(
                "/paged/link?n=10&per_page=10&auth_token=at-SECRET-1&private_token=pt-SECRET-2&session_token=st-SECRET-3"
                    + "&fail_page=1")
            let result = try await trawl(
                ["fetch", "--url", url, "--items", "", "--paginate", "link", "-o", "out.jsonl", "--report", "r.json",
                 "--backoff-ms", "1"], in: workspace)
            #expect(result.status == 1, "\(result.stderr)")
            let report = workspace.text("r.json")
            #expect(report.contains("auth_token=REDACTED"), "\(report)")
            for value in ["at-SECRET-1", "pt-SECRET-2", "st-SECRET-3"] {
                #expect(!report.contains(value) && !result.stderr.contains(value), "\(value)")
            }
        }
    }

    @Test("an error body echoing the literal token and query credential is shown redacted on stderr and in the report")
    func echoedTokenIsRedacted() async throws {
        let body = "{\"items\":[{\"id\":1}],\"echo\":\"Bearer tok-LITERAL-123 abc123secret\" oops}"
        try await CannedServer.with(["/echo": CannedServer.json(body)]) { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(
                ["fetch", "--url", server.url("/echo?access_token=abc123secret"), "--items", "items", "--paginate",
                 "link", "-H", "Authorization: Bearer tok-LITERAL-123", "-o", "out.jsonl", "--report", "r.json"],
                in: workspace)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("invalid JSON"), "\(result.stderr)")
            for value in ["tok-LITERAL-123", "abc123secret"] {
                #expect(!result.stderr.contains(value), "\(value): \(result.stderr)")
                #expect(!workspace.text("r.json").contains(value), "\(value)")
            }
        }
    }

    @Test("a URL with a NUL, a header name with a colon, a 1 MB header value: refused when the job is read (exit 2)")
    func unsendableValuesRefusedAtRead() async throws {
        try await CannedServer.with(["/a": CannedServer.json("[]")]) { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let cases: [(String, String)] = [
                (job(url: server.url("/a") + "\\0b"), "sources[0].url"),
                (job(url: server.url("/a"), extra: "    headers: {\"X-A: b\": c}"), "sources[0].headers.X-A: b"),
                (
                    job(url: server.url("/a"), extra: "    headers: {X-Big: \"\(String(repeating: "v", count: 1 << 20))\"}"),
                    "sources[0].headers.X-Big"
                ),
            ]
            for (text, field) in cases {
                try workspace.write("job.yaml", text)
                let result = try await trawl(["fetch", "job.yaml", "-o", "out.jsonl", "-q"], in: workspace)
                #expect(result.status == 2, "\(field): \(result.stderr.prefix(300))")
                #expect(result.stderr.contains(field), "\(field): \(result.stderr.prefix(300))")
                #expect(result.stderr.utf8.count < 4096)
            }
            #expect(server.requests("/a") == 0)
        }
    }

    @Test("a link planted at the temporary state directory is refused, never written through")
    func plantedTemporaryStateLink() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let elsewhere = workspace.path("elsewhere")
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: workspace.path("out.jsonl.trawl-state"), withDestinationPath: elsewhere)
            let result = try await trawl(
                ["fetch", "--url", server.url("/paged/link?n=30&per_page=10"), "--paginate", "link", "--items", "",
                 "-o", "out.jsonl", "-q"], in: workspace)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("out.jsonl.trawl-state is a symbolic link"), "\(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        }
    }
}
