import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// The test server's `token` style: `{"items":[...],"next_cursor":"c10"}`, `""` after the last page.
let tokenStyle = PaginationStyle.cursor(at: "next_cursor", param: "cursor", hasMore: nil)

func tokenPaginator(_ server: TestServer, _ query: String) -> Paginator<Thing> {
    Paginator(
        Thing.self, client: sharedClient, request: Request(url: server.url("/paged/token?per_page=10&" + query)),
        items: "items", style: tokenStyle)
}

@Suite("Pagination ends and loops", .hangGuard)
struct PaginationLoopTests {
    @Test("an empty next cursor ends the walk instead of asking for the first page again")
    func emptyCursorEnds() async throws {
        try await withServer { server in
            let items = try await collect(tokenPaginator(server, "n=25").items)
            #expect(items == expected(0..<25))
            #expect(server.stats.requestsServed == 3)
            #expect(!server.requestLog.contains { $0.target.contains("cursor=&") || $0.target.hasSuffix("cursor=") })
        }
    }

    @Test("a null next cursor ends the walk")
    func nullCursorEnds() async throws {
        try await withServer { server in
            let items = try await collect(tokenPaginator(server, "n=25&end=null").items)
            #expect(items == expected(0..<25))
            #expect(server.stats.requestsServed == 3)
        }
    }

    @Test("a cursor cycle A -> B -> A fails with the page and URL, after every page before it")
    func cursorCycle() async throws {
        try await withServer { server in
            var received: [Thing] = []
            do {
                for try await item in tokenPaginator(server, "n=30&loop_to=2").items { received.append(item) }
                Issue.record("expected a pagination loop error")
            } catch let error as PaginationError {
                #expect(error.position == .cursor("c10"))
                #expect(error.index == 3)
                #expect(error.url.contains("cursor=c10"))
                let text = "\(error)"
                #expect(text.contains("cursor c10"), "\(text)")
                #expect(text.contains("cursor c20"), "\(text)")
                #expect(text.contains("page index 1"), "\(text)")
                #expect(text.contains("pagination loop"), "\(text)")
                #expect(text.contains("/paged/token?"), "\(text)")
            }
            #expect(received == expected(0..<30))
            #expect(server.stats.requestsServed == 3)
        }
    }

    @Test("a paginated list stops at a cursor cycle with the loop as its error")
    func listCursorCycle() async throws {
        try await withServer { server in
            let list = PaginatedList(tokenPaginator(server, "n=30&loop_to=2"))
            for _ in 0..<5 { await list.loadNextPage() }
            let snapshot = await list.snapshot
            #expect(snapshot.items == expected(0..<30))
            #expect(!snapshot.hasMore)
            #expect(snapshot.error?.position == .cursor("c10"))
            #expect(server.stats.requestsServed == 3)
        }
    }

    /// `PaginationStyle.next(after:)` is also what bulk jobs and `trawl bench` call: the end is decided there.
    @Test("empty cursors and next URLs end the chain in the style itself")
    func styleEnds() {
        func response(_ captured: [JSONKeyPath: JSONValue]) -> PageResponse {
            PageResponse(
                request: Request(url: "https://x.test/items"), position: .cursor("a"), itemCount: 3,
                captured: captured, head: ResponseHead(status: 200, url: "https://x.test/items"))
        }
        let cursor = PaginationStyle.cursor(at: "next", param: "cursor", hasMore: nil)
        #expect(cursor.next(after: response(["next": .string("")])) == nil)
        #expect(cursor.next(after: response(["next": .string("  ")])) == nil)
        #expect(cursor.next(after: response(["next": .null])) == nil)
        #expect(cursor.next(after: response([:])) == nil)
        #expect(cursor.next(after: response(["next": .string("b")]))?.position == .cursor("b"))
        let nextURL = PaginationStyle.nextURL(at: "next")
        #expect(nextURL.next(after: response(["next": .string("")])) == nil)
        let relative = nextURL.next(after: response(["next": .string("?page=2")]))
        #expect(relative?.request.url == "https://x.test/items?page=2")
    }
}
