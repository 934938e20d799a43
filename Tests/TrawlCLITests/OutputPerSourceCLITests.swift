import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// A job of several sources never mixes their items in one file unasked (issue 35, point 9).
@Suite("trawl fetch JOB: one file per source by default", .endToEnd)
struct OutputPerSourceCLITests {
    static func job(_ server: TestServer) -> String {
        """
        sources:
          - name: links
            url: "\(server.url("/paged/link?n=25&per_page=10"))"
            paginate: link
            items: ""
          - name: pages
            url: "\(server.url("/paged/page?n=15&per_page=10"))"
            paginate: {style: page, total_pages: total_pages}
            items: items
        """
    }

    @Test("without -o: JOB/SOURCE.jsonl; with -o FILE: one file, and a note that no line names its source")
    func defaultIsAFilePerSource() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("daily.yaml", Self.job(server))
            let split = try await trawl(["fetch", "daily.yaml"], in: workspace)
            #expect(split.status == 0, "\(split.stderr)")
            #expect(workspace.text("daily/links.jsonl") == itemLines(0..<25))
            #expect(workspace.text("daily/pages.jsonl") == itemLines(0..<15))
            #expect(!workspace.exists("daily.jsonl"))
            #expect(!split.stderr.contains("note:"), "\(split.stderr)")

            let single = try await trawl(["fetch", "daily.yaml", "-o", "all.jsonl"], in: workspace)
            #expect(single.status == 0, "\(single.stderr)")
            #expect(workspace.text("all.jsonl") == itemLines(0..<25) + itemLines(0..<15))
            #expect(single.stderr.contains("note: the 2 sources of this job all go into all.jsonl"), "\(single.stderr)")
            let tagged = try await trawl(["fetch", "daily.yaml", "-o", "tagged.jsonl", "--with-meta"], in: workspace)
            #expect(tagged.status == 0, "\(tagged.stderr)")
            #expect(!tagged.stderr.contains("note:"), "\(tagged.stderr)")
        }
    }
}
