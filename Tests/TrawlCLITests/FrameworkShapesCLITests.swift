import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// `trawl fetch URL` against the stock pagination classes of real frameworks (issue 35; their wire formats are
/// `FrameworkAPI`'s: flask-smorest's `X-Pagination`, Fractal's `meta.pagination`, python-eve's relative `_links`,
/// django-ninja's `count`, fastapi-pagination's CursorPage, json-server, GitLab, WordPress, `Content-Range`): each
/// walked exactly with no flags, items alone on stdout, and a total that lies is no exit 0.
@Suite("trawl fetch URL: real frameworks' pagination", .endToEnd)
struct FrameworkShapesCLITests {
    struct Shape: Sendable, CustomTestStringConvertible {
        let name: String
        let path: String
        let flags: String
        var testDescription: String { name }
    }

    static let shapes: [Shape] = [
        .init(
            name: "flask-smorest", path: "/frameworks/smorest?page=1&page_size=10", flags: "--paginate page --items '$'"),
        .init(
            name: "Fractal", path: "/frameworks/fractal",
            flags: "--paginate next:meta.pagination.links.next --total meta.pagination.total --items data"),
        .init(
            name: "python-eve", path: "/frameworks/eve",
            flags: "--paginate next:_links.next.href --total _meta.total --items _items"),
        .init(
            name: "django-ninja pages", path: "/frameworks/ninja?page=1&page_size=10",
            flags: "--paginate page --total count --items items"),
        .init(
            name: "django-ninja limit/offset", path: "/frameworks/ninja?limit=10&offset=0",
            flags: "--paginate offset --page-param offset --limit-param limit --page-size 10 --total count "
                + "--items items"),
        // No page size in the URL: page numbers tried on page 2 (23 new items of the same shape), then walked.
        .init(
            name: "django-ninja, page size left to the server", path: "/frameworks/ninja",
            flags: "--paginate page --total count --items items"),
        .init(
            name: "fastapi-pagination CursorPage", path: "/frameworks/fastapi-cursor?size=10",
            flags: "--paginate cursor:next_page --cursor-param cursor --items items"),
        .init(
            name: "json-server", path: "/frameworks/json-server?_page=1&_limit=10",
            flags: "--paginate page --page-param _page --items '$'"),
        .init(name: "GitLab", path: "/frameworks/gitlab?per_page=10", flags: "--paginate page --items '$'"),
        .init(name: "WordPress", path: "/frameworks/wordpress?per_page=10", flags: "--paginate page --items '$'"),
        .init(
            name: "Content-Range", path: "/frameworks/range?offset=0&limit=10",
            flags: "--paginate offset --page-param offset --limit-param limit --page-size 10 --items '$'"),
    ]

    @Test(
        "each framework: detected with no flags, every item once on stdout (-o -), nothing else there",
        arguments: shapes)
    func shape(_ shape: Shape) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let url = server.url(shape.path)
            let result = try await trawl(["fetch", url, "-o", "-"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == itemLines(0..<123), "\(shape.name): \(result.stdout.prefix(300))")
            let detected = result.stderr.split(separator: "\n").first { $0.hasPrefix("detected: ") }
            #expect(detected?.hasPrefix("detected: \(shape.flags) (") == true, "\(result.stderr)")
            // The summary is on stderr, and no file named '-' appeared.
            #expect(result.stderr.contains("units: 1 done (of 1)"), "\(result.stderr)")
            #expect(!workspace.exists("-"))
        }
    }

    @Test("a total announced in a header or a nested body field that the pages fall short of: exit 1, items kept")
    func shortOfAnnouncedTotal() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let cases = [
                ("/frameworks/smorest?page=1&page_size=10&lie=5", "128 items (the X-Pagination header)"),
                ("/frameworks/json-server?_page=1&_limit=10&lie=1", "124 items (the X-Total-Count header)"),
                ("/frameworks/gitlab?per_page=10&lie=20", "143 items (the X-Total header)"),
                ("/frameworks/fractal?lie=3", "126 items ('meta.pagination.total' in the body)"),
                ("/frameworks/range?offset=0&limit=10&lie=2", "125 items (the Content-Range header)"),
            ]
            for (path, said) in cases {
                let short = try await trawl(["fetch", server.url(path), "-o", "out.jsonl", "-q"], in: workspace)
                #expect(short.status == 1, "\(path): \(short.stderr)")
                #expect(
                    short.stderr.contains("the server announced \(said); 123 items were written ("), "\(short.stderr)")
                #expect(
                    short.stderr.contains("with no primary key, written items were compared, not distinct ones"),
                    "\(short.stderr)")
                #expect(short.stderr.contains("written: out.jsonl"), "\(short.stderr)")
                #expect(short.stderr.contains("--allow-short"), "\(short.stderr)")
                #expect(workspace.text("out.jsonl") == itemLines(0..<123), "every item read is kept")
                #expect(short.stdout.isEmpty)
                let allowed = try await trawl(
                    ["fetch", server.url(path), "-o", "out.jsonl", "-q", "--allow-short"], in: workspace)
                #expect(allowed.status == 0, "\(path): \(allowed.stderr)")
                #expect(workspace.text("out.jsonl") == itemLines(0..<123))
            }
            // The job file's key does what the flag does.
            try workspace.write(
                "job.yaml",
                """
                settings: {allow_short: true}
                sources:
                  - name: things
                    url: "\(server.url("/frameworks/smorest?page=1&page_size=10&lie=5"))"
                    paginate: page
                    items: $
                """)
            let job = try await trawl(["fetch", "job.yaml", "-o", "job.jsonl", "-q"], in: workspace)
            #expect(job.status == 0, "\(job.stderr)")
            #expect(workspace.text("job.jsonl") == itemLines(0..<123))
            try workspace.write("job.yaml", workspace.text("job.yaml").replacingOccurrences(of: "true", with: "false"))
            let strict = try await trawl(["fetch", "job.yaml", "-o", "job.jsonl", "-q"], in: workspace)
            #expect(strict.status == 1, "\(strict.stderr)")
        }
    }

    @Test("with a primary key, repeated items do not make up for lost ones: drift, 118 distinct of 123 announced")
    func distinctItemsAgainstTotal() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Each page starts one item before where the last ended: 13 pages of 10 lines (130 written, more than
            // the 123 announced), but only ids 0..<118 (the union of [9k, 9k+10) for k in 0..<13).
            func job(primaryKey: Bool) -> String {
                """
                sources:
                  - name: things
                    url: "\(server.url("/frameworks/smorest?page=1&page_size=10&shift=1"))"
                    paginate: page
                    items: $
                \(primaryKey ? "    primary_key: id" : "")
                """
            }
            try workspace.write("job.yaml", job(primaryKey: false))
            let lines = try await trawl(["fetch", "job.yaml", "-o", "out.jsonl", "-q"], in: workspace)
            #expect(lines.status == 0, "without a key only lines can be counted: \(lines.stderr)")
            #expect(workspace.text("out.jsonl").split(separator: "\n").count == 130)
            try workspace.write("job.yaml", job(primaryKey: true))
            // With a key, repeated items on a page walk are drift: re-read once, still short, so exit 1 naming the
            // distinct count against the total; --allow-drift keeps each key once.
            let short = try await trawl(["fetch", "job.yaml", "-o", "out.jsonl", "-q"], in: workspace)
            #expect(short.status == 1, "\(short.stderr)")
            #expect(short.stderr.contains("118 distinct keys of 123 announced"), "\(short.stderr)")
            #expect(short.stderr.contains("--allow-drift"), "\(short.stderr)")
            let allowed = try await trawl(
                ["fetch", "job.yaml", "-o", "out.jsonl", "-q", "--allow-drift"], in: workspace)
            #expect(allowed.status == 0, "\(allowed.stderr)")
            #expect(workspace.text("out.jsonl").split(separator: "\n").count == 118)
        }
    }

    @Test("explicit --paginate page reads X-Total-Pages too: no empty page asked for past the end")
    func explicitWalkReadsHeaderTotals() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(
                ["fetch", server.url("/frameworks/wordpress?per_page=10"), "--paginate", "page", "--items", "$",
                 "-o", "-", "-q"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == itemLines(0..<123))
            let pages = server.requestLog.filter { $0.target.hasPrefix("/frameworks/wordpress") }.count
            #expect(pages == 13, "13 pages, no 14th empty one: \(pages)")
        }
    }

    @Test("`trawl fetch URL -o -` pipes into a reader that sees only items; a run without -q still says its summary")
    func stdoutHoldsOnlyItems() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(
                ["fetch", server.url("/paged/link?n=25&per_page=10"), "-o", "-"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            for line in result.stdout.split(separator: "\n") {
                #expect(throws: Never.self) { _ = try jsonObject(line) }
            }
            #expect(result.stdout == itemLines(0..<25))
            #expect(result.stderr.contains("detected: --paginate link"), "\(result.stderr)")
            #expect(result.stderr.contains("fetched: 3 pages, 25 items"), "\(result.stderr)")
        }
    }

    @Test("fetch --help opens with the essentials (URL, --items, -o, --state), then --paginate, then the rest")
    func helpOpensWithEssentials() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let help = try await trawl(["fetch", "--help"], in: workspace, environment: ["COLUMNS": "80"])
        #expect(help.status == 0, "\(help.stderr)")
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let sections = lines.enumerated().filter { !$0.element.hasPrefix(" ") && $0.element.hasSuffix(":") }
        let names = sections.map { $0.element }
        #expect(Array(names.prefix(3)) == ["ARGUMENTS:", "ESSENTIALS:", "PAGINATION (DETECTED WHEN ABSENT):"],
                "\(names)")
        let essentials = try #require(sections.first { $0.element == "ESSENTIALS:" })
        #expect(essentials.offset < 30, "the essentials start on line \(essentials.offset + 1)")
        let next = try #require(sections.first { $0.offset > essentials.offset }).offset
        let block = lines[essentials.offset..<next].joined(separator: "\n")
        for flag in ["--url <url>", "--items <items>", "-o, --output <output>", "--state <state>"] {
            #expect(block.contains(flag), "\(flag) among the essentials: \(block)")
        }
        let pagination = lines[next..<min(next + 3, lines.count)].joined(separator: "\n")
        #expect(pagination.contains("--paginate <paginate>"), "\(pagination)")
    }

    @Test("DRF's 404 past the last page: the failure names --stop-on-status 404; with it, no error anywhere")
    func drfPastTheEnd() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // No total: the walk asks for page 4, which answers 404 as DRF's PageNumberPagination does.
            let url = server.url("/paged/page?n=100&per_page=10&total=0&fault_404=4&fault_times=99")
            let base = ["fetch", "--url", url, "--items", "items", "--paginate", "page", "-o", "out.jsonl"]
            let failed = try await trawl(base, in: workspace)
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("add --stop-on-status 404"), "\(failed.stderr)")
            let stopped = try await trawl(base + ["--stop-on-status", "404", "--report", "r.json"], in: workspace)
            #expect(stopped.status == 0, "\(stopped.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<30))
            #expect(stopped.stderr.contains("retries: 0 (failed attempts 0)"), "\(stopped.stderr)")
            #expect(!stopped.stderr.contains("errors 1"), "\(stopped.stderr)")
            #expect(int(try report(workspace, "r.json"), "totals", "requests") == 4)
        }
    }
}
