import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// `trawl fetch URL` with no pagination flags (issue 21): each shape detected, said as the flags that pin it, and
/// walked to every item exactly once.
@Suite("trawl fetch URL: zero-configuration detection", .endToEnd)
struct DetectionCLITests {
    struct Shape: Sendable, CustomTestStringConvertible {
        let name: String
        let path: String
        let flags: String
        let count: Int
        var testDescription: String { name }
    }

    static let shapes: [Shape] = [
        .init(name: "GitHub", path: "/paged/link?n=47&per_page=10", flags: "--paginate link --items '$'", count: 47),
        .init(
            name: "DRF", path: "/paged/next?n=33&per_page=10",
            flags: "--paginate next:next --total count --items results",
            count: 33),
        .init(
            name: "Stripe", path: "/paged/cursor?n=31&limit=10",
            flags: "--paginate cursor:data.-1.id --cursor-param starting_after --items data", count: 31),
        .init(
            name: "Google APIs", path: "/shapes/google?n=25",
            flags: "--paginate cursor:nextPageToken --cursor-param pageToken --items items", count: 25),
        .init(
            name: "Slack", path: "/shapes/slack?n=23",
            flags: "--paginate cursor:response_metadata.next_cursor --cursor-param cursor --items members", count: 23),
        .init(
            name: "Notion", path: "/shapes/notion?n=21",
            flags: "--paginate cursor:next_cursor --cursor-param start_cursor --items results", count: 21),
        .init(
            name: "OData", path: "/shapes/odata?n=27", flags: #"--paginate 'next:@odata\.nextLink' --items value"#,
            count: 27),
        .init(
            name: "JSON:API", path: "/shapes/jsonapi?n=29", flags: "--paginate next:links.next --total meta.total --items data",
            count: 29),
        .init(
            name: "HAL", path: "/shapes/hal?n=24",
            flags: "--paginate next:_links.next.href --total total --items _embedded.orders", count: 24),
        .init(
            name: "Jira", path: "/shapes/jira?n=26",
            flags: "--paginate offset --page-param startAt --limit-param maxResults --page-size 10 --total total "
                + "--items issues", count: 26),
        .init(
            name: "page totals", path: "/paged/page?n=35&per_page=10",
            flags: "--paginate page --total-pages total_pages --items items", count: 35),
        .init(name: "single page", path: "/shapes/single?n=7", flags: "--paginate link --items data", count: 7),
    ]

    @Test("each API shape: the detected line first on stderr, every item exactly once", arguments: shapes)
    func shape(_ shape: Shape) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let url = server.url(shape.path)
            let result = try await trawl(["fetch", url, "-q", "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(first.hasPrefix("detected: \(shape.flags) (from the first page of \(url)"), "\(first)")
            #expect(first.contains("single page") == (shape.name == "single page"), "\(first)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<shape.count))
        }
    }

    @Test("the first page fetched for detection is page 1 of the walk, not fetched again")
    func firstPageOnce() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(
                ["fetch", server.url("/shapes/jsonapi?n=45"), "-q", "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let targets = server.requestLog.map(\.target).filter { $0.hasPrefix("/shapes/jsonapi") }
            #expect(targets.count == 5, "\(targets)")
            #expect(targets.filter { !$0.contains("page=") }.count == 1, "\(targets)")
        }
    }

    @Test("an ambiguous body: exit 2, the candidates with their key paths and counts, nothing written")
    func ambiguous() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(["fetch", server.url("/shapes/ambiguous"), "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 2)
            #expect(result.stderr.contains("--items users   (10 objects)"), "\(result.stderr)")
            #expect(result.stderr.contains("--items groups   (8 objects)"), "\(result.stderr)")
            #expect(!workspace.exists("out.jsonl"))
        }
    }

    @Test("a cursor with no known parameter: exit 2 naming its key path; --cursor-param then walks it")
    func unknownCursorParameter() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // `nextMarker` -> `marker`: derived from the key and verified on page 2 (issue 35), then walked.
            let derived = try await trawl(
                ["fetch", server.url("/shapes/marker?n=30"), "-q", "-o", "derived.jsonl"], in: workspace)
            #expect(derived.status == 0, "\(derived.stderr)")
            #expect(
                derived.stderr.hasPrefix("detected: --paginate cursor:nextMarker --cursor-param marker --items records"))
            #expect(derived.stderr.contains("  probe: --paginate cursor:nextMarker --cursor-param marker: page 2 ("))
            #expect(derived.stderr.contains("10 new items of the same shape (taken)"), "\(derived.stderr)")
            #expect(workspace.text("derived.jsonl") == itemLines(0..<30))
            // A parameter no rule derives: every probe fails (at most a handful), exit 2 naming the flag.
            let url = server.url("/shapes/marker?n=30&param=resume_from")
            let before = server.requestLog.count
            let refused = try await trawl(["fetch", url, "-o", "out.jsonl"], in: workspace)
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("'nextMarker'"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--cursor-param NAME"), "\(refused.stderr)")
            #expect(refused.stderr.contains("repeat page 1 (the parameter is ignored)"), "\(refused.stderr)")
            #expect(server.requestLog.count - before <= 5, "the first page and at most 4 probes")
            #expect(!workspace.exists("out.jsonl"))
            let walked = try await trawl(
                ["fetch", url, "--cursor-param", "resume_from", "-q", "-o", "out.jsonl"], in: workspace)
            #expect(walked.status == 0, "\(walked.stderr)")
            #expect(
                walked.stderr.hasPrefix(
                    "detected: --paginate cursor:nextMarker --cursor-param resume_from --items records"))
            #expect(workspace.text("out.jsonl") == itemLines(0..<30))
        }
    }

    @Test("an unknown shape: an error with the top-level keys and the flags to set")
    func unknownShape() async throws {
        try await TestServer.with { server in
            let result = try await trawl(["fetch", server.url("/echo")])
            #expect(result.status == 2)
            #expect(result.stderr.contains("top-level keys: body, bodyLength, headers, method, path, query"))
            #expect(result.stderr.contains("set --items KEYPATH"))
        }
    }

    @Test("--detect prints the line and a job-file snippet, fetches one page and writes nothing")
    func detectOnly() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            for flag in ["--detect", "--dry-run"] {
                let before = server.requestLog.count
                let result = try await trawl(["fetch", flag, server.url("/shapes/google?n=25")], in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stderr.hasPrefix("detected: --paginate cursor:nextPageToken --cursor-param pageToken"))
                #expect(
                    result.stdout.contains(
                        #"paginate: {style: cursor, cursor: "nextPageToken", cursor_param: "pageToken"}"#),
                    "\(result.stdout)")
                #expect(result.stdout.contains(#"items: "items""#))
                #expect(server.requestLog.count - before == 1)
                let written = try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path)
                    .filter { !$0.hasPrefix(".") }
                #expect(written.isEmpty, "\(written)")
            }
        }
    }

    @Test("the detected plan is kept in the state: a resumed run walks with it and does not detect again")
    func resumeUsesStoredPlan() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Secrets in the URL (found by the hostile sweep in the plan file) stay out of the state.
            let url = "http://user:pw-SECRET1@" + server.url("/paged/next?n=50&per_page=10&fault_5xx=3")
                .dropFirst("http://".count) + "&access_token=SECRET2"
            let arguments = ["fetch", url, "-q", "-o", "out.jsonl", "--state", "st", "--attempts", "1"]
            let failed = try await trawl(arguments, in: workspace)
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(workspace.exists("st/detected-plan.json"))
            for file in try FileManager.default.subpathsOfDirectory(atPath: workspace.path("st")) {
                let text = String(decoding: workspace.data("st/" + file), as: UTF8.self)
                #expect(!text.contains("SECRET1") && !text.contains("SECRET2"), "st/\(file) holds a secret")
            }
            let before = server.requestLog.count
            let resumed = try await trawl(arguments, in: workspace)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(
                resumed.stderr.hasPrefix("detected: --paginate next:next --total count --items results (stored in st"))
            let targets = server.requestLog.dropFirst(before).map(\.target)
            #expect(!targets.isEmpty)
            #expect(!targets.contains { !$0.contains("page=") }, "the first page was fetched again: \(targets)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<50))
        }
    }

    @Test("a later page contradicting the detected plan fails the unit instead of ending the list")
    func contradiction() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(["fetch", server.url("/shapes/flip?n=40"), "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 1)
            #expect(result.stderr.contains("no longer a URL"), "\(result.stderr)")
        }
    }

    @Test("a detected next URL or Link to another origin gets no credentials, as with given flags",
          arguments: ["next", "link"])
    func detectionKeepsOriginRules(_ style: String) async throws {
        try await TestServer.with { home in
            try await TestServer.with { other in
                let workspace = try Workspace()
                defer { workspace.remove() }
                let url = home.url("/paged/\(style)?n=50&per_page=10&total=0&next_origin=\(other.baseURL)")
                let result = try await trawl(
                    ["fetch", url, "-q", "-o", "out.jsonl", "-H", "Authorization: Bearer s3cret"], in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stderr.hasPrefix("detected: --paginate \(style == "next" ? "next:next" : "link")"))
                #expect(workspace.text("out.jsonl") == itemLines(0..<50))
                #expect(home.requestLog.count == 1)
                #expect(home.requestLog.allSatisfy { $0.headers["authorization"] != nil })
                #expect(other.requestLog.count == 4)
                #expect(other.requestLog.allSatisfy { $0.headers["authorization"] == nil }, "credentials leaked")
            }
        }
    }

    @Test("a job file's paginate: auto and absent items are detected per source; given ones are kept")
    func jobFileAuto() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write(
                "job.yaml",
                """
                sources:
                  - name: google
                    url: "\(server.url("/shapes/google?n=25"))"
                    paginate: auto
                  - name: hal
                    url: "\(server.url("/shapes/hal?n=24"))"
                    paginate: next:_links.next.href
                    items: auto
                  - name: drf
                    url: "\(server.url("/paged/next?n=33&per_page=10"))"
                    paginate: next:next
                    items: results

                """)
            let result = try await trawl(["fetch", "job.yaml", "-q", "--output-dir", "out"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("detected: ") }
            #expect(lines.count == 2, "\(result.stderr)")
            let google = "detected: --paginate cursor:nextPageToken --cursor-param pageToken"
            #expect(lines.first?.hasPrefix(google) == true, "\(lines)")
            #expect(lines.last?.hasPrefix("detected: --items _embedded.orders (from") == true, "\(lines)")
            #expect(workspace.text("out/google.jsonl") == itemLines(0..<25))
            #expect(workspace.text("out/hal.jsonl") == itemLines(0..<24))
            #expect(workspace.text("out/drf.jsonl") == itemLines(0..<33))
        }
    }

    @Test("the first page fetched for detection is retried like the walk's pages")
    func firstPageRetried() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let url = server.url("/paged/next?n=33&per_page=10&fault_5xx=1")
            let result = try await trawl(["fetch", url, "-q", "-o", "out.jsonl", "--backoff-ms", "10"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("detected: --paginate next:next --total count --items results"), "\(result.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<33))
        }
    }

    @Test("the detected line is terminal-safe: a key path with an escape sequence is shown escaped")
    func detectedLineIsTerminalSafe() async throws {
        let body = "{\"x\\u001b]0;owned\\u0007\":[{\"id\":1},{\"id\":2}]}"
        try await CannedServer.with(["/hostile": CannedServer.json(body)]) { server in
            let result = try await trawl(["fetch", "--detect", server.url("/hostile")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.hasPrefix("detected: --paginate link --items "), "\(result.stderr)")
            #expect(result.stderr.contains("\\u{1B}]0;owned\\u{7}"), "\(result.stderr)")
            #expect(!result.stderr.contains("\u{1B}"))
        }
    }
}
