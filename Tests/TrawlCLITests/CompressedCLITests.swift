import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// A gzip page cut before its trailer is never exit 0 with short output: `get` fails, `fetch` retries the page as
/// truncated and then fails naming the URL and the page.
@Suite("CLI: a compressed body cut before its trailer", .endToEnd)
struct CompressedCLITests {
    @Test("get and fetch exit 1 naming the URL; fetch retried the page")
    func cutGzipPage() async throws {
        let json = Array(("{\"items\":[" + (0..<5000).map(String.init).joined(separator: ",") + "]}").utf8)
        let whole = try CompressedBodies.compress(json)
        let cut = Array(whole.dropLast(8))
        let responses: [String: [UInt8]] = [
            "/cut": CannedServer.response(
                "HTTP/1.1 200 OK", ["Content-Encoding: gzip", "Content-Length: \(cut.count)"], body: cut),
            "/whole": CannedServer.response(
                "HTTP/1.1 200 OK", ["Content-Encoding: gzip", "Content-Length: \(whole.count)"], body: whole),
        ]
        try await CannedServer.with(responses) { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let get = try await trawl(["get", "-s", server.url("/cut")], in: workspace)
            #expect(get.status == 18, "\(get.stderr)")
            #expect(get.stderr.contains("ended before its end marker"), "\(get.stderr)")
            let fine = try await trawl(["get", "-s", server.url("/whole")], in: workspace)
            #expect(fine.status == 0, "\(fine.stderr)")
            #expect(fine.stdout.utf8.elementsEqual(json))
            let asCurl = try await trawl(["get", "-s", "--compressed", server.url("/whole")], in: workspace)
            #expect(asCurl.status == 0, "\(asCurl.stderr)")
            #expect(asCurl.stdout.utf8.elementsEqual(json), "curl's --compressed decodes too")

            let fetch = try await trawl(
                ["fetch", "--url", server.url("/cut"), "--items", "items", "--paginate", "link", "-o", "out.jsonl",
                 "-q", "--backoff-ms", "1"],
                in: workspace)
            #expect(fetch.status == 1, "\(fetch.stderr)")
            #expect(fetch.stderr.contains(server.url("/cut")), "\(fetch.stderr)")
            #expect(fetch.stderr.contains("ended before its end marker"), "\(fetch.stderr)")
            #expect(server.requests("/cut") > 2, "retried as a truncated transfer")
            #expect(workspace.text("out.jsonl").isEmpty)
        }
    }
}
