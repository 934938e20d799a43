import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// A URL past the 64 KiB cap is bad usage (exit 2) naming where it came from, in a few lines: never megabytes of
/// stderr and a libcurl internal (`curl 3: No URL set`).
@Suite("CLI: a URL past the length cap is a usage error", .endToEnd)
struct URLCapCLITests {
    let long = "http://127.0.0.1:9/items?q=" + String(repeating: "x", count: 100_000)

    @Test("get (exit 3), fetch --url (exit 2) and a job file's url (exit 1): naming the argument, the flag or the field")
    func urlTooLong() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let get = try await trawl(["get", "-s", long], in: workspace)
        #expect(get.status == 3, "curl's malformed URL: \(get.stderr.prefix(500))")
        #expect(get.stderr.contains("bytes long, over the limit of 65536 bytes"), "\(get.stderr.prefix(500))")
        #expect(get.stderr.utf8.count < 2000, "\(get.stderr.utf8.count) bytes of stderr")

        let fetch = try await trawl(
            ["fetch", "--url", long, "--items", "items", "--paginate", "link", "-o", "out.jsonl", "-q"],
            in: workspace)
        #expect(fetch.status == 2, "\(fetch.stderr.prefix(500))")
        #expect(fetch.stderr.contains("--url"), "\(fetch.stderr.prefix(500))")
        #expect(fetch.stderr.contains("over the limit of 65536 bytes"), "\(fetch.stderr.prefix(500))")
        #expect(fetch.stderr.utf8.count < 2000, "\(fetch.stderr.utf8.count) bytes of stderr")

        let huge = "http://127.0.0.1:9/items?q=" + String(repeating: "y", count: 5 << 20)
        try workspace.write("job.yaml", "sources:\n  - name: big\n    url: \"\(huge)\"\n    items: items\n")
        let job = try await trawl(["fetch", "job.yaml", "-o", "out.jsonl", "-q"], in: workspace)
        // In a job file it is a job file error (exit 1, like every other mistake in the file's content).
        #expect(job.status == 1, "\(job.stderr.prefix(500))")
        #expect(job.stderr.contains("sources[0].url"), "\(job.stderr.prefix(500))")
        #expect(job.stderr.contains("over the limit of 65536 bytes"), "\(job.stderr.prefix(500))")
        #expect(job.stderr.utf8.count < 2000, "\(job.stderr.utf8.count) bytes of stderr")
        #expect(!job.stderr.contains("curl"), "\(job.stderr.prefix(500))")
    }
}
