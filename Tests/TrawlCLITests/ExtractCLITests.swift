import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@Suite("trawl extract", .endToEnd)
struct ExtractCLITests {
    @Test("a file: one compact element per line, side fields on stderr, --count on the last line")
    func file() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write("doc.json", #"{"data": {"results": [ {"id": 1, "tags": [ "a" ]}, {"id": 2} ]}, "next": "c2"}"#)
        let lines = try await trawl(["extract", "--path", "data.results", "--side", "next", "doc.json"], in: workspace)
        #expect(lines.status == 0, "\(lines.stderr)")
        #expect(lines.stdout == "{\"id\":1,\"tags\":[\"a\"]}\n{\"id\":2}\n")
        #expect(lines.stderr.contains(#"next: "c2""#))
        let count = try await trawl(["extract", "-p", "data.results", "--count", "doc.json"], in: workspace)
        #expect(count.stdout == "2\n")

        let missing = try await trawl(["extract", "-p", "items", "doc.json"], in: workspace)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("items is not in the document"), "\(missing.stderr)")
        let absent = try await trawl(["extract", "-p", "items", "nope.json"], in: workspace)
        #expect(absent.status == 1)
        #expect(absent.stderr.contains("cannot open 'nope.json'"))
    }

    @Test("bad JSON keeps the elements before the error and names the byte offset")
    func badJSONKeepsEarlierElements() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write("bad.json", #"{"items": [1, 2, {"a": tru}]}"#)
        let result = try await trawl(["extract", "-p", "items", "bad.json"], in: workspace)
        #expect(result.status == 1)
        #expect(result.stdout == "1\n2\n")
        // What is wrong, in which input, at which byte (and line and column), inside which element.
        #expect(result.stderr.hasPrefix("error: bad.json: invalid JSON: "), "\(result.stderr)")
        #expect(result.stderr.contains("at byte 26, line 1, column 27, in items.2.a"), "\(result.stderr)")
    }

    @Test("a URL is streamed through the engine, with headers; a non-2xx status is an error with the body")
    func url() async throws {
        try await TestServer.with { server in
            let page = try await trawl(["extract", "-p", "items", server.url("/paged/page?n=250&per_page=100&page=3")])
            #expect(page.status == 0, "\(page.stderr)")
            #expect(page.stdout == itemLines(200..<250))

            let count = try await trawl(
                ["extract", "-p", "items", "--count", "--side", "total_pages",
                 server.url("/paged/page?n=250&per_page=100&page=1")])
            #expect(count.stdout == "100\n")
            #expect(count.stderr.contains("total_pages: 3"), "\(count.stderr)")

            let echo = try await trawl(["extract", "-p", "headers", "-H", "X-Trawl-Test: 42", server.url("/echo")])
            #expect(echo.stdout.contains(#"["X-Trawl-Test","42"]"#), "\(echo.stdout)")

            let notFound = try await trawl(["extract", "-p", "items", server.url("/status/404")])
            #expect(notFound.status == 1)
            #expect(notFound.stderr.contains("HTTP 404 from"), "\(notFound.stderr)")
            #expect(notFound.stderr.contains(#"{"status":404}"#), "\(notFound.stderr)")

            // A body cut by a reset: the engine's error, naming the request and what happened to it.
            let cutURL = server.url("/paged/page?n=250&per_page=100&page=1&fault_reset=1")
            let cut = try await trawl(["extract", "-p", "items", cutURL])
            #expect(cut.status == 1)
            #expect(cut.stderr.hasPrefix("error: GET \(cutURL): receiving failed after "), "\(cut.stderr)")
            #expect(cut.stderr.contains("body bytes (connection reset"), "\(cut.stderr)")
            #expect(cut.stderr.contains("[curl 56: "), "\(cut.stderr)")
            // The elements completed before the reset are kept: whole lines, in order, the page's first ones.
            let kept = cut.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(kept.count > 10 && kept.last == "", "\(kept.count - 1) lines kept")
            #expect(itemLines(0..<100).hasPrefix(cut.stdout), "\(cut.stdout.suffix(200))")

            let badHeader = try await trawl(["extract", "-p", "items", "-H", "nocolon", server.url("/echo")])
            #expect(badHeader.status == 2)
            #expect(badHeader.stderr.contains("header 'nocolon' must look like 'Name: value'"), "\(badHeader.stderr)")
            #expect(server.requestLog.filter { $0.target == "/echo" }.count == 1, "the bad header was sent")
        }
    }
}
