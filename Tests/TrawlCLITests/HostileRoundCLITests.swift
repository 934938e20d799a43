import Foundation
import Testing
import TrawlTestServer
import TrawlTestSupport

@Suite("Last round's features under hostile input, end to end", .endToEnd)
struct HostileRoundCLITests {
    @Test("plan --shards past the limit is a usage error at once, naming the flag and the limit")
    func planShardsAreBounded() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write(
            "job.yaml", "sources: [{name: a, url: \"http://127.0.0.1:9/a?u={u}\", paginate: link, items: \"\", "
                + "matrix: {u: \"1..3\"}}]\n")
        for arguments in [["1000000000"], ["9223372036854775807", "--json"]] {
            let result = try await trawl(["plan", "job.yaml", "--shards"] + arguments, in: workspace)
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("--shards must be at most 100000"), "\(result.stderr)")
        }
        let fine = try await trawl(["plan", "job.yaml", "--shards", "3"], in: workspace)
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    @Test("--detect escapes a C1 control (U+009B, CSI) in the job-file snippet on stdout as in the stderr line")
    func detectSnippetEscapesC1() async throws {
        let body = "{\"x\\u009b31m\":[{\"id\":1},{\"id\":2}]}"
        try await CannedServer.with(["/c1": CannedServer.json(body)]) { server in
            let result = try await trawl(["fetch", "--detect", server.url("/c1")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stdout.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "\(result.stdout)")
            #expect(result.stdout.contains("\\u009B31m"), "\(result.stdout)")
            #expect(!result.stderr.unicodeScalars.contains { (0x80...0x9F).contains($0.value) })
        }
    }

    @Test("a rate store answering a reply nested 200,000 deep is a store that does not answer, not a crash")
    func deepStoreReplyIsNotACrash() async throws {
        let deep = Array(String(repeating: "*1\r\n", count: 200_000).utf8)
        try await TestServer.with { server in
            try await RESPServer.with({ _ in deep }) { store in
                let workspace = try Workspace()
                defer { workspace.remove() }
                let result = try await trawl(
                    ["fetch", "--url", server.url("/paged/link?n=3"), "--items", "", "--paginate", "link",
                     "-o", "out.jsonl", "--rate", "50", "--rate-store", store.url], in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stderr.contains("does not answer"), "\(result.stderr)")
                #expect(workspace.text("out.jsonl").split(separator: "\n").count == 3)
            }
        }
    }
}
