import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// A route to the synthetic paginated API.
struct PagedThings: GetRoute {
    typealias Output = EmptyResponse
    let style: String
    let count: Int
    var extra: QueryParameters = [:]
    var path: RoutePath { "paged/\(style)" }
    var query: QueryParameters {
        let base: QueryParameters = ["n": .int(count), "per_page": 10]
        return base.merging(extra)
    }
}

struct ProtectedThings: GetRoute {
    typealias Output = EmptyResponse
    let count: Int
    var path: RoutePath { "paged/page" }
    var query: QueryParameters { ["n": .int(count), "per_page": 10, "token": "s3cret"] }
}

@Suite("Pagination through routes", .hangGuard)
struct PaginationRouteTests {
    @Test("items(of:) and pages(of:) walk a route's collection")
    func routeItems() async throws {
        try await withServer { server in
            let api = api(server)
            var items: [Thing] = []
            let sequence = try await api.items(
                of: PagedThings(style: "page", count: 33), as: Thing.self, at: "items",
                style: .page(totalPages: "total_pages"))
            for try await item in sequence { items.append(item) }
            #expect(items == expected(0..<33))
            var pageCount = 0
            let pages = try await api.pages(
                of: PagedThings(style: "link", count: 33), as: Thing.self, at: .root, style: .link())
            for try await _ in pages { pageCount += 1 }
            #expect(pageCount == 4)
        }
    }

    @Test("the adapter chain's credentials reach every page")
    func adaptersApplyToPages() async throws {
        try await withServer { server in
            var api = api(server)
            api.adapters = [BearerTokenAdapter(token: { "s3cret" })]
            var items: [Thing] = []
            let sequence = try await api.items(
                of: ProtectedThings(count: 25), as: Thing.self, at: "items", style: .page(totalPages: "total_pages"))
            for try await item in sequence { items.append(item) }
            #expect(items == expected(0..<25))

            api.adapters = []
            do {
                for try await _ in try await api.items(
                    of: ProtectedThings(count: 25), as: Thing.self, at: "items", style: .page()) {}
                Issue.record("expected the first page to fail without credentials")
            } catch let error as PaginationError {
                #expect(error.status == 401)
                #expect(error.apiError(NoErrorModel.self)?.kind == .status)
            }
        }
    }

    @Test("query editing replaces or appends one parameter")
    func queryEditing() {
        let request = Request(url: "https://x.test/items?page=1&q=a%20b#top")
        #expect(request.settingQuery("page", to: "2").url == "https://x.test/items?page=2&q=a%20b#top")
        #expect(request.settingQuery("after", to: "a&b").url == "https://x.test/items?page=1&q=a%20b&after=a%26b#top")
        #expect(Request(url: "https://x.test/items").settingQuery("page", to: "1").url == "https://x.test/items?page=1")
    }
}
