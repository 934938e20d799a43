import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// Careless flags, hostile paths and servers: a usage error (exit 2) or a failure naming what (exit 1), never a
// crash (issue 22). Helpers in CLISupport.swift.

@Suite("hostile input end to end: no crash, the right exit status", .endToEnd)
struct HostileInputCLITests {
    @Test("one-character relative directories for --state, --output-dir and -o are created, not a crash")
    func oneCharacterDirectories() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let url = server.url("/paged/page?n=25&per_page=10")
            let source = ["fetch", "--url", url, "--items", "items", "--paginate", "page", "-q"]
            let state = try await trawl(source + ["--state", "s", "-o", "n/out.jsonl"], in: workspace)
            #expect(state.status == 0, "\(state.stderr)")
            #expect(workspace.text("n/out.jsonl") == itemLines(0..<25))
            #expect(workspace.exists("s"))
            let directory = try await trawl(source + ["--state", "t/", "--output-dir", "o"], in: workspace)
            #expect(directory.status == 0, "\(directory.stderr)")
            #expect(workspace.text("o/items.jsonl") == itemLines(0..<25))
        }
    }
}

extension HostileInputCLITests {
    @Test("nan, inf, 1e300 and 0 for a seconds or rate flag are usage errors naming the flag")
    func floatingPointFlags() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let fetch = ["fetch", "--url", "http://127.0.0.1:9/", "--items", "items", "--paginate", "page"]
        let cases: [([String], String)] = [
            (["get", "http://127.0.0.1:9/", "--max-time", "1e300"], "--max-time"),
            (["get", "http://127.0.0.1:9/", "--max-time", "nan"], "--max-time"),
            (["get", "http://127.0.0.1:9/", "--max-time", "inf"], "--max-time"),
            (["get", "http://127.0.0.1:9/", "--max-time", "0"], "--max-time"),
            (fetch + ["--timeout", "1e30"], "--timeout"),
            (fetch + ["--max-wait", "1e30"], "--max-wait"),
            (fetch + ["--max-wait", "nan"], "--max-wait"),
            (fetch + ["--rate", "1e-300"], "--rate"),
            (fetch + ["--rate", "inf"], "--rate"),
            (["bench", "http://127.0.0.1:9/", "-d", "1e300"], "-d"),
            (["bench", "http://127.0.0.1:9/", "--warmup", "inf"], "--warmup"),
            (["bench", "http://127.0.0.1:9/", "--rate", "1e-300"], "--rate"),
            (["demo", "--scale", "1e300"], "--scale"),
        ]
        for (arguments, flag) in cases {
            let result = try await trawl(arguments, in: workspace)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("is invalid for '\(flag)"), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"), "\(arguments): \(result.stderr)")
        }
    }

    @Test("a total of Int64.max and a Retry-After of 1e400: bounded, the walk ends, nothing traps")
    func hugeServerNumbers() async throws {
        let huge = String(Int64.max)
        let page = "{\"items\":[{\"id\":1}],\"total_count\":\(huge),\"total_pages\":\(huge)}"
        let limited = CannedServer.json("{}", status: "429 Too Many Requests", headers: ["Retry-After: 1e400"])
        let sequences: [String: [[UInt8]]] = [
            "/pages": [CannedServer.json(page)],
            "/limited": [limited, CannedServer.json("{\"items\":[{\"id\":2}]}")],
        ]
        try await CannedServer.with(sequences: sequences) { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            for totals in [["--total-pages", "total_pages"], ["--total", "total_count", "--page-size", "10"]] {
                let result = try await trawl(
                    ["fetch", "--url", server.url("/pages"), "--items", "items", "--paginate", "page",
                     "--max-pages", "3", "-q", "-o", "pages.jsonl"] + totals, in: workspace)
                #expect(result.status == 0, "\(totals): \(result.stderr)")
                #expect(workspace.text("pages.jsonl") == String(repeating: "{\"id\":1}\n", count: 3))
            }
            let limited = try await trawl(
                ["fetch", "--url", server.url("/limited"), "--items", "items", "--paginate", "link",
                 "--max-wait", "0.05", "--backoff-ms", "1", "-o", "limited.jsonl", "--report", "report.json"],
                in: workspace)
            #expect(limited.status == 0, "\(limited.stderr)")
            #expect(workspace.text("limited.jsonl") == "{\"id\":2}\n")
            let report = try jsonObject(workspace.data("report.json"))
            #expect("\(report)".contains("capped"), "\(report)")
        }
    }
}

extension HostileInputCLITests {
    @Test("-X and a job file's method take one RFC 9110 token: anything else is refused before sending")
    func methodIsAToken() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let smuggle = "GET /EVIL HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET"
            for method in [smuggle, "GET /EVIL", "", "GET\n"] {
                let get = try await trawl(["get", "-X", method, server.url("/echo")], in: workspace)
                #expect(get.status == 2, "\(method.debugDescription): \(get.stderr)")
                #expect(get.stderr.contains("is invalid for '-X"), "\(get.stderr)")
                let fetch = try await trawl(
                    ["fetch", "--url", server.url("/echo"), "--items", "", "--paginate", "link", "--request", method],
                    in: workspace)
                #expect(fetch.status == 2, "\(method.debugDescription): \(fetch.stderr)")
                #expect(fetch.stderr.contains("is invalid for '--request"), "\(fetch.stderr)")
                let bench = try await trawl(["bench", server.url("/echo"), "-n", "1", "-X", method], in: workspace)
                #expect(bench.status == 2, "\(method.debugDescription): \(bench.stderr)")
            }
            try workspace.write(
                "job.yaml",
                "sources:\n  - name: a\n    url: \(server.url("/echo"))\n    method: \"GET /EVIL HTTP/1.1\\r\\nX: 1\"\n"
                    + "    items: ''\n    paginate: link\n")
            let job = try await trawl(["fetch", "job.yaml", "-q"], in: workspace)
            #expect(job.status == 1, "\(job.stderr)")
            #expect(job.stderr.contains("sources[0].method"), "\(job.stderr)")
            #expect(job.stderr.contains("is not an HTTP method"), "\(job.stderr)")
            #expect(server.stats.requestsServed == 0)
            let token = try await trawl(["get", "-X", "PROPFIND", server.url("/echo")], in: workspace)
            #expect(token.status == 0, "\(token.stderr)")
            #expect(token.stdout.contains("\"method\":\"PROPFIND\""), "\(token.stdout)")
        }
    }
}

extension HostileInputCLITests {
    @Test("a proxy that is down is named as the proxy, not the server; no_proxy still reaches the server")
    func proxyDown() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let proxied = try await trawl(
                ["get", "-s", server.url("/json/small")], in: workspace,
                environment: ["http_proxy": "http://user:pw@127.0.0.1:9"])
            #expect(proxied.status == 7)
            #expect(
                proxied.stderr.contains("the proxy http://REDACTED@127.0.0.1:9 refused the connection"),
                "\(proxied.stderr)")
            #expect(!proxied.stderr.contains("check that the server is up"), "\(proxied.stderr)")
            #expect(!proxied.stderr.contains("pw"), "\(proxied.stderr)")
            let bypassed = try await trawl(
                ["get", "-s", server.url("/json/small")], in: workspace,
                environment: ["http_proxy": "http://127.0.0.1:9", "no_proxy": "127.0.0.1"])
            #expect(bypassed.status == 0, "\(bypassed.stderr)")
        }
    }
}

extension HostileInputCLITests {
    @Test("fetch: a scalar, an object or a duplicated key where the page's items array should be fails the page")
    func itemsNotAnArray() async throws {
        let responses: [String: [UInt8]] = [
            "/scalar": CannedServer.json(#"{"items":5}"#),
            "/object": CannedServer.json(#"{"items":{"id":1}}"#),
            "/null": CannedServer.json(#"{"items":null}"#),
            "/twice": CannedServer.json(#"{"items":[{"id":1}],"items":[{"id":2}]}"#),
        ]
        try await CannedServer.with(responses) { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            for (path, message) in [
                ("/scalar", "is not an array"), ("/object", "is not an array"), ("/null", "is not an array"),
                ("/twice", "appears twice"),
            ] {
                let result = try await trawl(
                    ["fetch", "--url", server.url(path), "--items", "items", "--paginate", "link", "--attempts", "1",
                     "-o", "out.jsonl", "--restart"], in: workspace)
                #expect(result.status == 1, "\(path): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(path): \(result.stderr)")
                #expect(result.stderr.contains(server.url(path)), "\(path): \(result.stderr)")
                #expect(workspace.text("out.jsonl").isEmpty, "\(path): \(workspace.text("out.jsonl"))")
            }
        }
    }
}

extension HostileInputCLITests {
    @Test("extract URL keeps the elements completed before a truncated body, as extract FILE does")
    func extractURLKeepsCompletedElements() async throws {
        let items = (0..<50).map { "{\"id\":\($0),\"pad\":\"\(String(repeating: "x", count: 20))\"}" }
        let text = "{\"items\":[" + items.joined(separator: ",") + ",{\"id\":50,\"pa"
        let body = Array(text.utf8)
        let responses: [String: [UInt8]] = [
            "/cut": CannedServer.response(
                "HTTP/1.1 200 OK", ["Content-Type: application/json", "Content-Length: \(body.count + 500)"], body: body)
        ]
        try await CannedServer.with(responses) { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("cut.json", text)
            let fromFile = try await trawl(["extract", "--path", "items", "cut.json"], in: workspace)
            #expect(fromFile.status == 1)
            let fromURL = try await trawl(["extract", "--path", "items", server.url("/cut")], in: workspace)
            #expect(fromURL.status == 1)
            #expect(fromURL.stderr.contains("the body ended after"), "\(fromURL.stderr)")
            #expect(fromURL.stdout == items.joined(separator: "\n") + "\n")
            #expect(fromURL.stdout == fromFile.stdout)
        }
    }
}
