import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

// Conditional requests (issue 16) end to end: `trawl fetch --cache DIR` against `/feed/NAME`, which answers
// `If-None-Match` with 304 (without `Link`: the stored page's headers carry the walk on).

private func feedAll(_ server: TestServer, _ name: String, count: Int) -> String {
    (0..<count).compactMap { server.feedLine(name, id: $0) }.joined()
}

private func cachedArguments(_ server: TestServer, _ name: String, query: String = "", output: String) -> [String] {
    [
        "fetch", "--url", server.url("/feed/\(name)?per_page=10\(query)"), "--items", "", "--paginate", "link",
        "--cache", "cache", "-o", output, "-q", "--report", "report.json",
        "-H", "Authorization: Bearer t0ken",
    ]
}

private func statuses(_ server: TestServer, _ name: String) -> [Int] {
    server.requestLog.filter { $0.target.hasPrefix("/feed/\(name)") }.map(\.status)
}

@Suite("conditional requests end to end", .endToEnd)
struct ConditionalCLITests {
    @Test("304s reuse the stored pages (the job's cache is private: credentialed pages too); output = a full fetch")
    func notModifiedReusesStoredPages() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("c", count: 25)
            let first = try await trawl(cachedArguments(server, "c", output: "run1.jsonl"), in: workspace)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(workspace.text("run1.jsonl") == feedAll(server, "c", count: 25))
            server.resetRequestLog()
            let second = try await trawl(cachedArguments(server, "c", output: "run2.jsonl"), in: workspace)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(statuses(server, "c") == [304, 304, 304])
            #expect(server.requestLog.allSatisfy { $0.headers["if-none-match"] != nil })
            #expect(workspace.text("run2.jsonl") == workspace.text("run1.jsonl"))
            let totals = try #require(try report(workspace, "report.json")["totals"] as? [String: Any])
            #expect(totals["not_modified"] as? Int == 3)
            #expect(totals["items"] as? Int == 25)

            // New items change the last page: 304, 304, then 200s; the output is again the full collection.
            server.feedAdd("c", count: 10)
            server.resetRequestLog()
            let third = try await trawl(cachedArguments(server, "c", output: "run3.jsonl"), in: workspace)
            #expect(third.status == 0, "\(third.stderr)")
            #expect(statuses(server, "c") == [304, 304, 200, 200])
            #expect(workspace.text("run3.jsonl") == feedAll(server, "c", count: 35))

            // on_not_modified: skip writes nothing for the pages answered 304.
            server.resetRequestLog()
            let skipped = try await trawl(
                cachedArguments(server, "c", output: "run4.jsonl") + ["--on-not-modified", "skip"], in: workspace)
            #expect(skipped.status == 0, "\(skipped.stderr)")
            #expect(statuses(server, "c") == [304, 304, 304, 304])
            #expect(workspace.text("run4.jsonl").isEmpty)
            let skippedTotals = try #require(try report(workspace, "report.json")["totals"] as? [String: Any])
            #expect(skippedTotals["not_modified"] as? Int == 4)
            #expect(skippedTotals["items"] as? Int == 0)
        }
    }

    @Test("Cache-Control: no-store is honoured: nothing stored, no validators sent")
    func noStore() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("n", count: 15)
            let arguments = cachedArguments(server, "n", query: "&no_store=1", output: "out.jsonl")
            #expect(try await trawl(arguments, in: workspace).status == 0)
            server.resetRequestLog()
            let again = try await trawl(arguments, in: workspace)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(statuses(server, "n") == [200, 200])
            #expect(server.requestLog.allSatisfy { $0.headers["if-none-match"] == nil })
            #expect(files(under: workspace.path("cache")).filter { !$0.contains("/.tmp-") }.isEmpty)
        }
    }

    @Test("a stored body whose checksum does not match is never reused: the page is fetched again whole")
    func corruptBodyRefused() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            server.feedAdd("x", count: 5)
            let arguments = cachedArguments(server, "x", output: "out.jsonl")
            #expect(try await trawl(arguments, in: workspace).status == 0)
            let bodies = files(under: workspace.path("cache")).filter { $0.hasSuffix(".body") }
            #expect(bodies.count == 1)
            for body in bodies {
                var bytes = try Data(contentsOf: URL(fileURLWithPath: body))
                bytes[bytes.startIndex + 8] = UInt8(ascii: "9")
                try bytes.write(to: URL(fileURLWithPath: body))
            }
            server.resetRequestLog()
            let again = try await trawl(arguments, in: workspace)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(statuses(server, "x") == [304, 200])
            #expect(workspace.text("out.jsonl") == feedAll(server, "x", count: 5))
        }
    }
}
