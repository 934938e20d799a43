import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// An item of the test server's `/paged/...` API.
struct Thing: Decodable, Sendable, Equatable {
    let id: Int
    let name: String
}

/// One way of paginating the synthetic API: the path and query, the items' key path and the style.
struct PagedCase: Sendable, CustomTestStringConvertible {
    let name: String
    let path: String
    let items: JSONKeyPath
    let style: PaginationStyle

    var testDescription: String { name }

    static let all: [PagedCase] = [
        PagedCase(
            name: "page, total pages", path: "/paged/page?per_page=10", items: "items",
            style: .page(totalPages: "total_pages")),
        PagedCase(
            name: "page, total items", path: "/paged/page", items: "items",
            style: .page(sizeParam: "per_page", size: 10, totalItems: "total_count")),
        PagedCase(name: "page, no total", path: "/paged/page?total=0", items: "items", style: .page()),
        PagedCase(
            name: "offset, total", path: "/paged/offset", items: "items", style: .offset(limit: 10, total: "total")),
        PagedCase(name: "offset, no total", path: "/paged/offset?total=0", items: "items", style: .offset(limit: 10)),
        PagedCase(
            name: "offset, no limit", path: "/paged/offset?total=0&limit=10", items: "items", style: .offset()),
        PagedCase(
            name: "cursor", path: "/paged/cursor?limit=10", items: "data",
            style: .cursor(at: "data.-1.id", param: "starting_after")),
        PagedCase(
            name: "cursor without has_more", path: "/paged/cursor?limit=10", items: "data",
            style: .cursor(at: "data.-1.id", param: "starting_after", hasMore: nil)),
        PagedCase(name: "next URL", path: "/paged/next?per_page=10", items: "results", style: .nextURL(at: "next")),
        PagedCase(name: "link, last", path: "/paged/link?per_page=10", items: .root, style: .link()),
        PagedCase(name: "link, no last", path: "/paged/link?per_page=10&total=0", items: .root, style: .link()),
        PagedCase(
            name: "link, relative", path: "/paged/link?per_page=10&relative=1", items: .root, style: .link()),
        PagedCase(
            name: "link, relative, no last", path: "/paged/link?per_page=10&relative=1&total=0", items: .root,
            style: .link()),
    ]
}

func paginator(
    _ server: TestServer, _ pagedCase: PagedCase, count: Int, query: String = "", maxConcurrentPages: Int = 4,
    serial: Bool = false
) -> Paginator<Thing> {
    let separator = pagedCase.path.contains("?") ? "&" : "?"
    let url = server.url(pagedCase.path + separator + "n=\(count)" + query)
    return Paginator(
        Thing.self, client: sharedClient, request: Request(url: url), items: pagedCase.items, style: pagedCase.style,
        maxConcurrentPages: maxConcurrentPages, serial: serial)
}

func collect(_ items: PaginatedItems<Thing>) async throws -> [Thing] {
    var all: [Thing] = []
    for try await item in items { all.append(item) }
    return all
}

func expected(_ range: Range<Int>) -> [Thing] {
    range.map { Thing(id: $0, name: "item-\($0)") }
}

@Suite("Pagination styles", .hangGuard)
struct PaginationStyleTests {
    @Test("every style yields exactly the items in order", arguments: PagedCase.all, [0, 1, 10, 95, 100])
    func everyStyle(pagedCase: PagedCase, count: Int) async throws {
        try await withServer { server in
            let items = try await collect(paginator(server, pagedCase, count: count).items)
            #expect(items == expected(0..<count))
        }
    }

    @Test("pages carry position, index, next and total")
    func pageMetadata() async throws {
        try await withServer { server in
            let pagedCase = PagedCase.all[1]
            var pages: [Page<Thing>] = []
            for try await page in paginator(server, pagedCase, count: 25).pages { pages.append(page) }
            #expect(pages.map(\.position) == [.number(1), .number(2), .number(3)])
            #expect(pages.map(\.index) == [0, 1, 2])
            #expect(pages.map(\.next) == [.number(2), .number(3), nil])
            #expect(pages.map(\.total) == [25, 25, 25])
            #expect(pages.map(\.items.count) == [10, 10, 5])
            #expect(pages.allSatisfy { $0.head.status == 200 })
        }
    }

    @Test("cursor pages name their cursor")
    func cursorPositions() async throws {
        try await withServer { server in
            let pagedCase = PagedCase.all[6]
            var positions: [PagePosition] = []
            for try await page in paginator(server, pagedCase, count: 30).pages { positions.append(page.position) }
            #expect(positions == [.cursor(nil), .cursor("9"), .cursor("19")])
        }
    }

    @Test("an explicit page range fetches exactly those pages")
    func explicitRange() async throws {
        try await withServer { server in
            let pagedCase = PagedCase(
                name: "range", path: "/paged/page?total=0&per_page=10", items: "items", style: .page(pages: 2...4))
            let items = try await collect(paginator(server, pagedCase, count: 100).items)
            #expect(items == expected(10..<40))
        }
    }

    @Test("caller's capture paths reach the page")
    func capturedFields() async throws {
        try await withServer { server in
            let url = server.url("/paged/page?n=15&per_page=10")
            let paginator = Paginator(
                Thing.self, client: sharedClient, request: Request(url: url), items: "items", style: .page(),
                capture: ["total_count"])
            var totals: [JSONValue?] = []
            for try await page in paginator.pages { totals.append(page.captured["total_count"]) }
            #expect(totals == [.number("15"), .number("15"), .number("15")])
        }
    }
}
