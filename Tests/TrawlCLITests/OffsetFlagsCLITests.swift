import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// `--limit-param` for offset walks, and pagination flags that do not fit the style named as flags.
@Suite("CLI offset flags", .endToEnd)
struct OffsetFlagsCLITests {
    @Test("--limit-param names offset's limit parameter")
    func limitParam() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(
                ["fetch", "-q", "--url", server.url("/paged/offset?n=25&per_page=10"), "--paginate", "offset",
                 "--items", "items", "--total", "total", "--limit-param", "size", "--page-size", "10",
                 "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out.jsonl").split(separator: "\n").count == 25)
            let targets = server.requestLog.map(\.target).filter { $0.hasPrefix("/paged/offset") }
            #expect(!targets.isEmpty)
            #expect(targets.allSatisfy { $0.contains("size=10") && !$0.contains("limit=") }, "\(targets)")
        }
    }

    @Test("a pagination flag the style does not take is named, with the flags it does take")
    func flagsThatDoNotApply() async throws {
        let result = try await trawl(
            ["fetch", "--url", "http://127.0.0.1:9/", "--items", "items", "--paginate", "cursor:next", "--start", "2"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("--start does not apply to --paginate cursor"), "\(result.stderr)")
        #expect(result.stderr.contains("--cursor-param"))
        #expect(!result.stderr.contains("cursor_param"))
    }
}
