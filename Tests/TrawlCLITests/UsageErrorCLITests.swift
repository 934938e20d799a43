import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// Anything decided before a request is sent is a usage error: exit 2, the message, then the subcommand's usage
// (issue 22). Helpers in CLISupport.swift.

@Suite("usage errors are exit 2 with the subcommand's usage", .endToEnd)
struct UsageErrorCLITests {
    func expectUsage(
        _ arguments: [String], _ message: String, in workspace: Workspace,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let result = try await trawl(arguments, in: workspace)
        #expect(result.status == 2, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        let command = arguments[0]
        #expect(
            result.stderr.contains("Usage: trawl \(command) "), "\(arguments): \(result.stderr)",
            sourceLocation: sourceLocation)
    }

    @Test("bad URLs for get, extract and bench: scheme, whitespace, control characters, host, port")
    func badURLs() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let cases: [(String, String)] = [
            ("ftp://127.0.0.1/x", "scheme 'ftp' is not allowed"),
            ("file:///etc/passwd", "scheme 'file' is not allowed"),
            ("http://127.0.0.1:9/a b", "contains a space at byte 20"),
            ("http://127.0.0.1:9/a\r\nX: 1", "contains control character U+000D (CR)"),
            ("http://127.0.0.1:9/a\u{7F}", "contains control character U+007F (DEL)"),
            ("http:///x", "has no host"),
            ("127.0.0.1:9/x", "has no scheme or host"),
            ("http://127.0.0.1:99999/", "the port 99999 is out of range"),
            ("http://127.0.0.1:0/", "the port 0 is out of range"),
            ("http://127.0.0.1:8x/", "the port '8x' is not a number"),
        ]
        for (url, message) in cases {
            // get answers as curl does: exit 3 for a malformed URL, 1 for another scheme, before anything is sent;
            // a URL without a scheme is http.
            if !url.hasPrefix("127.") {
                let get = try await trawl(["get", url], in: workspace)
                #expect(get.status == (url.hasPrefix("http") ? 3 : 1), "\(url): \(get.stderr)")
                #expect(get.stderr.contains(message), "\(url): \(get.stderr)")
                // Named as given, quoted (a space shows), before any request is built.
                #expect(get.stderr.hasPrefix("error: '"), "\(url): \(get.stderr)")
            }
            try await expectUsage(["bench", url, "-n", "1"], message, in: workspace)
            if url.hasPrefix("http") { try await expectUsage(["extract", "--path", "a", url], message, in: workspace) }
        }
    }

    @Test("headers with CR, LF, NUL or DEL in the value, or a name that is not a token")
    func badHeaders() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let fetch = ["fetch", "--url", "http://127.0.0.1:9/", "--items", "", "--paginate", "link"]
        // (A NUL cannot be passed in an argument; the engine's own check covers it.)
        for header in ["X-A: b\rc", "X-A: b\nX-Injected: 1", "X-A: b\u{1}", "X-A: b\u{7F}", "X A: b", "X\r\nY: b"] {
            let message = header.hasPrefix("X-A") ? "-H X-A: the value contains" : "is not a token"
            try await expectUsage(["get", "http://127.0.0.1:9/", "-H", header], message, in: workspace)
            try await expectUsage(fetch + ["-H", header], message, in: workspace)
            try await expectUsage(["bench", "http://127.0.0.1:9/", "-H", header], message, in: workspace)
        }
        // The value may be a secret: it is never printed.
        let secret = try await trawl(["get", "http://127.0.0.1:9/", "-H", "Authorization: s3cret\r\n"], in: workspace)
        #expect(secret.status == 2)
        #expect(!secret.stderr.contains("s3cret"), "\(secret.stderr)")
    }

    @Test("fetch: a --url template that expands to a bad URL, an unsafe --name, --report naming -o, bad values")
    func fetchUsage() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let source = ["fetch", "--items", "items", "--paginate", "page"]
        try await expectUsage(
            source + ["--url", "ftp://127.0.0.1:9/{a}", "--matrix", "a=1,2"], "--url expands to 'ftp://127.0.0.1:9/1'",
            in: workspace)
        try await expectUsage(source + ["--url", "http://127.0.0.1:99999/"], "out of range", in: workspace)
        for name in ["../x", "a/b", ".hidden", "a\nb", ".."] {
            try await expectUsage(source + ["--url", "http://127.0.0.1:9/", "--name", name], "name", in: workspace)
        }
        let outside = workspace.directory.deletingLastPathComponent().appendingPathComponent("x.jsonl")
        #expect(!FileManager.default.fileExists(atPath: outside.path))
        try await expectUsage(
            source + ["--url", "http://127.0.0.1:9/", "-o", "out.jsonl", "--report", "./out.jsonl"],
            "--report ./out.jsonl names the output file too", in: workspace)
        try await expectUsage(source + ["--url", "http://127.0.0.1:9/", "--shard", "x"], "shard", in: workspace)
        // An axis no template uses would fetch the same pages once per value.
        try await expectUsage(
            source + ["--url", "http://127.0.0.1:9/?a={a}", "--matrix", "a=1,2", "--matrix", "unused=x,y"],
            "sources[0].matrix.unused: no template uses the axis 'unused'", in: workspace)
        try await expectUsage(
            ["fetch", "--url", "http://127.0.0.1:9/", "--items", "", "--paginate", "pagez"], "unknown style 'pagez'",
            in: workspace)
    }
}

@Suite("job files from pipes, directories and missing paths", .endToEnd)
struct JobFileSourceCLITests {
    @Test("a job file read from a pipe (process substitution) runs; its output is job.jsonl")
    func pipedJobFile() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let job = "sources:\n  - name: a\n    url: \"\(server.url("/paged/page?n=25&per_page=10"))\"\n"
                + "    items: items\n    paginate: page\n"
            try workspace.write("job.txt", job)
            // bash's <(…) is a pipe at /dev/fd/N, as `trawl fetch <(make-job)` gives it.
            let piped = try TrawlProcess(
                ["-c", "trawl fetch <(cat job.txt) -q"], in: workspace, environment: [:],
                executable: URL(fileURLWithPath: "/bin/bash"))
            let status = try await piped.wait()
            #expect(status == 0, "\(piped.stderr)")
            #expect(workspace.text("job.jsonl") == itemLines(0..<25))
        }
    }

    @Test("a directory or a missing job file is named, in words, exit 1")
    func unreadable() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try FileManager.default.createDirectory(atPath: workspace.path("jobs"), withIntermediateDirectories: true)
        let directory = try await trawl(["fetch", "jobs"], in: workspace)
        #expect(directory.status == 1)
        #expect(
            directory.stderr.hasPrefix("error: jobs: cannot read the job file: it is a directory"),
            "\(directory.stderr)")
        let missing = try await trawl(["fetch", "nowhere.yaml"], in: workspace)
        #expect(missing.status == 1)
        #expect(
            missing.stderr.hasPrefix("error: nowhere.yaml: cannot read the job file: no such file"),
            "\(missing.stderr)")
        for result in [directory, missing] { #expect(!result.stderr.contains("NSCocoaErrorDomain")) }
    }
}
