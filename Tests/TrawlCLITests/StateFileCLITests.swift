import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// A state file trawl wrote and someone broke: the message names the file and what is wrong in a few words, never
/// Foundation's `DecodingError` dump.
@Suite("CLI: unreadable state files", .endToEnd)
struct StateFileCLITests {
    @Test("a broken marks.json or checkpoint.json is named with what is wrong, without a DecodingError dump")
    func brokenStateFiles() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try FileManager.default.createDirectory(atPath: workspace.path("st"), withIntermediateDirectories: true)
        try workspace.write("st/marks.json", "{garbage")
        let marks = try await trawl(["state", "show", "--state", "st"], in: workspace)
        #expect(marks.status == 1, "\(marks.stderr)")
        #expect(marks.stderr.contains("st/marks.json is unreadable (not valid JSON)"), "\(marks.stderr)")
        #expect(!marks.stderr.contains("DecodingError"), "\(marks.stderr)")

        try workspace.write("st/marks.json", #"{"version": "one"}"#)
        let wrongKind = try await trawl(["state", "show", "--state", "st"], in: workspace)
        #expect(wrongKind.stderr.contains("a value of the wrong kind at version"), "\(wrongKind.stderr)")
        #expect(!wrongKind.stderr.contains("DecodingError"), "\(wrongKind.stderr)")

        try await TestServer.with { server in
            try FileManager.default.createDirectory(atPath: workspace.path("job"), withIntermediateDirectories: true)
            try workspace.write("job/checkpoint.json", "[1, 2")
            let fetch = try await trawl(
                ["fetch", "--url", server.url("/paged/link?n=5"), "--items", "", "--paginate", "link", "--state", "job",
                 "-o", "out.jsonl", "-q"], in: workspace)
            #expect(fetch.status == 1, "\(fetch.stderr)")
            #expect(fetch.stderr.contains("checkpoint.json is unreadable (not valid JSON)"), "\(fetch.stderr)")
            #expect(fetch.stderr.contains("--restart"), "\(fetch.stderr)")
            #expect(!fetch.stderr.contains("DecodingError"), "\(fetch.stderr)")
        }
    }
}
