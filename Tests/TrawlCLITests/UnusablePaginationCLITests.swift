import Foundation
import Testing
import TrawlTestServer
import TrawlTestSupport

/// A page whose own items are read and valid but whose pagination data cannot go on keeps its items: they are
/// written, then the walk fails naming the page (exit 1); a run resuming the unit fails there again without writing
/// them twice.
@Suite("Unusable pagination data: the page's items are kept, then the walk fails", .endToEnd)
struct UnusablePaginationCLITests {
    static func page(_ ids: [Int], _ rest: String = "") -> String {
        "{\"items\":[" + ids.map { "{\"id\":\($0)}" }.joined(separator: ",") + "]" + rest + "}"
    }

    static func linked(_ ids: [Int], next: String) -> [UInt8] {
        CannedServer.json(page(ids), headers: ["Link: <\(next)>; rel=\"next\""])
    }

    /// Path, paginate flag, answers in turn, the ids expected in the output.
    static let cases: [(String, String, [[UInt8]], [Int])] = [
        ("/object", "cursor:next_cursor", [CannedServer.json(page([1, 2], ",\"next_cursor\":{\"a\":1}"))], [1, 2]),
        ("/array", "cursor:next_cursor", [CannedServer.json(page([1, 2], ",\"next_cursor\":[1]"))], [1, 2]),
        (
            "/number", "cursor:next_cursor",
            [CannedServer.json(page([1, 2], ",\"next_cursor\":5")), CannedServer.json(page([3, 4], ",\"next_cursor\":5"))],
            [1, 2, 3, 4]
        ),
        ("/more", "cursor:next_cursor", [CannedServer.json(page([1, 2], ",\"has_more\":true"))], [1, 2]),
        ("/self", "link", [linked([1, 2], next: "/self")], [1, 2]),
        (
            "/repeat", "cursor:next_cursor",
            [CannedServer.json(page([1], ",\"next_cursor\":\"c1\"")), CannedServer.json(page([2], ",\"next_cursor\":\"c1\""))],
            [1, 2]
        ),
    ]

    @Test("a cursor that is an object, an array, a repeating number; has_more without a cursor; a self link")
    func pageItemsAreKept() async throws {
        var sequences: [String: [[UInt8]]] = [:]
        for (path, _, answers, _) in Self.cases { sequences[path] = answers }
        try await CannedServer.with(sequences: sequences) { server in
            for (path, paginate, _, ids) in Self.cases {
                let workspace = try Workspace()
                defer { workspace.remove() }
                let result = try await trawl(
                    ["fetch", "--url", server.url(path), "--items", "items", "--paginate", paginate, "-q",
                     "-o", "out.jsonl"], in: workspace)
                #expect(result.status == 1, "\(path): \(result.stderr)")
                #expect(result.stderr.contains(server.url(path)), "\(path): \(result.stderr)")
                #expect(workspace.text("out.jsonl") == ids.map { "{\"id\":\($0)}\n" }.joined(), "\(path)")
            }
        }
    }

    @Test("an A -> B -> A cycle keeps A's and B's items; a resumed run fails there again and writes nothing twice")
    func cycleKeepsItemsAndResumeFailsAgain() async throws {
        let sequences: [String: [[UInt8]]] = [
            "/a": [Self.linked([1], next: "/b")], "/b": [Self.linked([2], next: "/a")],
        ]
        try await CannedServer.with(sequences: sequences) { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let arguments = [
                "fetch", "--url", server.url("/a"), "--items", "items", "--paginate", "link", "-q", "-o", "out.jsonl",
                "--state", "st",
            ]
            let first = try await trawl(arguments, in: workspace)
            #expect(first.status == 1, "\(first.stderr)")
            #expect(first.stderr.contains("a pagination loop"), "\(first.stderr)")
            #expect(workspace.text("out.jsonl") == "{\"id\":1}\n{\"id\":2}\n")
            let requests = server.requests("/a") + server.requests("/b")
            let again = try await trawl(arguments, in: workspace)
            #expect(again.status == 1, "\(again.stderr)")
            #expect(again.stderr.contains("a pagination loop"), "\(again.stderr)")
            #expect(workspace.text("out.jsonl") == "{\"id\":1}\n{\"id\":2}\n")
            #expect(server.requests("/a") + server.requests("/b") == requests)
        }
    }
}
