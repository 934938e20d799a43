import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// One API shape of the loopback server: what detection must find and how many items the walk must read.
struct DetectedShape: Sendable, CustomTestStringConvertible {
    let name: String
    let path: String
    let settings: [String]
    let items: String
    let count: Int

    var testDescription: String { name }

    static let all: [DetectedShape] = [
        .init(
            name: "GitHub (Link)", path: "/paged/link?n=47&per_page=10", settings: ["paginate=link"], items: "$",
            count: 47),
        .init(
            name: "DRF", path: "/paged/next?n=33&per_page=10", settings: ["paginate=next:next", "total=count"],
            items: "results",
            count: 33),
        .init(
            name: "Stripe", path: "/paged/cursor?n=31&limit=10",
            settings: ["paginate=cursor:data.-1.id", "cursor_param=starting_after"], items: "data", count: 31),
        .init(
            name: "Google APIs", path: "/shapes/google?n=25",
            settings: ["paginate=cursor:nextPageToken", "cursor_param=pageToken"], items: "items", count: 25),
        .init(
            name: "Slack", path: "/shapes/slack?n=23",
            settings: ["paginate=cursor:response_metadata.next_cursor", "cursor_param=cursor"], items: "members",
            count: 23),
        .init(
            name: "Notion", path: "/shapes/notion?n=21",
            settings: ["paginate=cursor:next_cursor", "cursor_param=start_cursor"], items: "results", count: 21),
        .init(
            name: "OData", path: "/shapes/odata?n=27", settings: [#"paginate=next:@odata\.nextLink"#],
            items: "value", count: 27),
        .init(
            name: "JSON:API", path: "/shapes/jsonapi?n=29", settings: ["paginate=next:links.next", "total=meta.total"],
            items: "data",
            count: 29),
        .init(
            name: "HAL", path: "/shapes/hal?n=24", settings: ["paginate=next:_links.next.href", "total=total"],
            items: "_embedded.orders", count: 24),
        .init(
            name: "Jira", path: "/shapes/jira?n=26",
            settings: ["paginate=offset", "param=startAt", "limit_param=maxResults", "limit=10", "total=total"],
            items: "issues", count: 26),
        .init(
            name: "offset/limit", path: "/shapes/offset?n=22",
            settings: ["paginate=offset", "param=offset", "limit_param=limit", "limit=10", "total=total"],
            items: "results", count: 22),
        .init(
            name: "page totals", path: "/paged/page?n=35&per_page=10",
            settings: ["paginate=page", "total_pages=total_pages"], items: "items", count: 35),
        .init(name: "single page", path: "/shapes/single?n=7", settings: ["paginate=link"], items: "data", count: 7),
    ]
}

@Suite("Pagination detection", .hangGuard)
struct PaginationDetectionTests {
    @Test("each API shape is detected and walked: every item exactly once", arguments: DetectedShape.all)
    func detectsAndWalks(_ shape: DetectedShape) async throws {
        try await withServer { server in
            let (paginator, detection) = try await Paginator<Thing>.detecting(
                client: sharedClient, request: Request(url: server.url(shape.path)))
            #expect(detection.settings.map { "\($0.name)=\($0.value)" } == shape.settings)
            #expect(detection.items.description == shape.items)
            #expect(detection.isSinglePage == (shape.name == "single page"))
            server.resetStats()
            var ids: [Int] = []
            for try await thing in paginator.items { ids.append(thing.id) }
            #expect(ids == Array(0..<shape.count))
            // The first page was fetched for detection and replayed, not fetched again (page styles that
            // add their parameter to the first request ask for it once more).
            let pages = (shape.count + 9) / 10
            let firstAgain = ["paginate=page", "paginate=offset"].contains(shape.settings.first ?? "") ? 1 : 0
            #expect(server.stats.requestsServed == pages - 1 + firstAgain)
        }
    }

    @Test("an ambiguous body names every candidate array with its count")
    func ambiguous() async throws {
        try await withServer { server in
            do {
                _ = try await Paginator<Thing>.detecting(
                    client: sharedClient, request: Request(url: server.url("/shapes/ambiguous")))
                Issue.record("expected an ambiguity")
            } catch let error as PaginationDetectionError {
                #expect(error.kind == .ambiguousItems)
                #expect(error.candidates.map { "\($0.path)=\($0.count)" } == ["users=10", "groups=8"])
            }
        }
    }

    @Test("a cursor with no known request parameter is an error naming its key path")
    func unknownCursorParameter() async throws {
        try await withServer { server in
            do {
                _ = try await Paginator<Thing>.detecting(
                    client: sharedClient, request: Request(url: server.url("/shapes/marker?n=30&param=resume_from")))
                Issue.record("expected an unknown cursor parameter")
            } catch let error as PaginationDetectionError {
                #expect(error.kind == .unknownCursorParameter)
                #expect(error.cursorPath?.description == "nextMarker")
            }
        }
    }

    @Test("a body with no array of objects is an unknown shape listing its top-level keys")
    func unknownShape() throws {
        let body: JSONValue = ["status": "ok", "count": 3, "names": ["a", "b"]]
        #expect {
            try PaginationDetection.detect(body: body, headers: HTTPHeaders(), url: "https://api.example.com/x")
        } throws: { error in
            let error = error as? PaginationDetectionError
            return error?.kind == .unknownShape && error?.topLevelKeys == ["count", "names", "status"]
        }
    }

    @Test("an offset body without its limit takes the size from the URL (or the page) and walks every item")
    func offsetWithoutLimit() async throws {
        try await withServer { server in
            // The test server's offset style answers {"items":[…],"offset":0,"total":95}: no limit key.
            let (paginator, detection) = try await Paginator<Thing>.detecting(
                client: sharedClient, request: Request(url: server.url("/paged/offset?n=95&per_page=10")))
            #expect(detection.settings.map { "\($0.name)=\($0.value)" }
                == ["paginate=offset", "param=offset", "limit_param=per_page", "limit=10", "total=total"])
            var ids: [Int] = []
            for try await thing in paginator.items { ids.append(thing.id) }
            #expect(ids == Array(0..<95))
        }
        let body: JSONValue = ["data": .array([["id": 1], ["id": 2]]), "skip": 0, "total": 9]
        let detection = try PaginationDetection.detect(body: body, headers: HTTPHeaders(), url: "https://a.example/x")
        #expect(detection.settings.map { "\($0.name)=\($0.value)" }
            == ["paginate=offset", "param=skip", "limit_param=limit", "limit=2", "total=total"])
    }

    @Test("a page announcing more items than it holds, with no way to reach them, is not a single page")
    func unreachedTotalIsAnError() throws {
        let url = "https://api.example.com/x"
        for body: JSONValue in [
            ["items": .array([["id": 1], ["id": 2]]), "total_count": 50],
            ["data": .array([["id": 1], ["id": 2]]), "meta": ["count": 40]],
        ] {
            #expect {
                try PaginationDetection.detect(body: body, headers: HTTPHeaders(), url: url)
            } throws: { error in
                let error = error as? PaginationDetectionError
                return error?.kind == .unknownShape && error?.message.contains("would lose the rest") == true
            }
        }
        // A total equal to what the page holds is a single page.
        let whole: JSONValue = ["items": .array([["id": 1], ["id": 2]]), "total_count": 2]
        #expect(try PaginationDetection.detect(body: whole, headers: HTTPHeaders(), url: url).isSinglePage)
    }

    @Test("a later page whose next URL became a bare token fails the walk instead of ending it")
    func contradictionFails() async throws {
        try await withServer { server in
            let (paginator, detection) = try await Paginator<Thing>.detecting(
                client: sharedClient, request: Request(url: server.url("/shapes/flip?n=40")))
            #expect(detection.settings.first?.value == "next:links.next")
            var ids: [Int] = []
            do {
                for try await thing in paginator.items { ids.append(thing.id) }
                Issue.record("expected the walk to fail at page 2")
            } catch let error as PaginationError {
                #expect("\(error)".contains("no longer a URL"))
            }
            #expect(ids == Array(0..<20))
        }
    }

    @Test("a small dominant array beside a large one is not the items; similar sizes are ambiguous")
    func dominance() throws {
        func objects(_ count: Int) -> JSONValue { .array(Array(repeating: ["id": 1] as JSONValue, count: count)) }
        let url = "https://api.example.com/x"
        let clear = try PaginationDetection.detect(
            body: ["data": objects(20), "included": objects(3)], headers: HTTPHeaders(), url: url)
        #expect(clear.items.description == "data")
        #expect(throws: PaginationDetectionError.self) {
            try PaginationDetection.detect(
                body: ["a": objects(20), "b": objects(10)], headers: HTTPHeaders(), url: url)
        }
    }
}
