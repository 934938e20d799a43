import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// A paginated route to the synthetic page-number API, with Opera's defaults.
struct SearchThings: PaginatedRoute, GetRoute {
    typealias Output = EmptyResponse
    var page: Int?
    var search: String?
    var filter: QueryParameters?
    var count = 33
    var path: RoutePath { "paged/page" }
    var keyPath: JSONKeyPath? { "items" }
    var query: QueryParameters { paginationQuery.merging(["n": .int(count), "per_page": 10]) }
}

struct LanguageFilter: PaginationFilter {
    var language: String
    var parameters: QueryParameters { ["language": .string(language)] }
}

/// A paginated route with its own parameter names, a typed filter and the default `query`.
struct CustomSearch: PaginatedRoute, GetRoute {
    typealias Output = EmptyResponse
    var page: Int?
    var search: String?
    var filter: LanguageFilter?
    var path: RoutePath { "search" }
    var pageParam: String { "p" }
    var searchParam: String { "term" }
    var firstPage: Int { 0 }
}

@Suite("Paginated routes and pagination settings", .hangGuard)
struct PaginatedRouteTests {
    @Test("page, search and filter go in the query with Opera's default names")
    func paginationQuery() throws {
        let api = API(baseURL: "https://x.test")
        let route = SearchThings(search: "a b")
        #expect(try api.request(for: route).url == "https://x.test/paged/page?q=a%20b&n=33&per_page=10")
        #expect(try api.request(for: route.withPage(3)).url
            == "https://x.test/paged/page?q=a%20b&page=3&n=33&per_page=10")
        let filtered = route.withPage(3).withFilter(["sort": "updated"])
        #expect(filtered.page == nil)
        #expect(try api.request(for: filtered).url
            == "https://x.test/paged/page?q=a%20b&sort=updated&n=33&per_page=10")
        let other = filtered.withPage(2).withSearch("c")
        #expect(other.page == nil && other.filter == ["sort": "updated"])
        #expect(try api.request(for: other.withSearch(nil)).url
            == "https://x.test/paged/page?sort=updated&n=33&per_page=10")
    }

    @Test("a route can rename the parameters and use a typed filter")
    func customNames() throws {
        let api = API(baseURL: "https://x.test")
        let route = CustomSearch(search: "swift").withFilter(LanguageFilter(language: "c")).withPage(1)
        #expect(try api.request(for: route).url == "https://x.test/search?term=swift&language=c&p=1")
        #expect(route.paginationStyle == .page(param: "p", start: 1))
        #expect(CustomSearch().paginationStyle == .page(param: "p", start: 0))
    }

    @Test("items(of:as:) walks a paginated route from its page at its key path")
    func routeItems() async throws {
        try await withServer { server in
            let api = api(server)
            var items: [Thing] = []
            for try await item in try await api.items(of: SearchThings(search: "x"), as: Thing.self) {
                items.append(item)
            }
            #expect(items == expected(0..<33))
            var positions: [PagePosition] = []
            var rest: [Thing] = []
            for try await page in try await api.pages(of: SearchThings().withPage(3), as: Thing.self) {
                positions.append(page.position)
                rest += page.items
            }
            // Without a total the walk ends at the first empty page (page 5).
            #expect(positions == [.number(3), .number(4), .number(5)])
            #expect(rest == expected(20..<33))
        }
    }

    @Test("the API's pagination settings are the defaults, and its serial switch wins")
    func settings() async throws {
        var api = API(baseURL: "https://x.test")
        let route = SearchThings()
        var paginator = try await api.paginator(route, of: Thing.self, at: "items", style: .page())
        #expect(paginator.maxConcurrentPages == 4 && !paginator.serial)
        api.pagination = PaginationSettings(maxConcurrentPages: 2)
        paginator = try await api.paginator(route, of: Thing.self, at: "items", style: .page())
        #expect(paginator.maxConcurrentPages == 2 && !paginator.serial)
        paginator = try await api.paginator(
            route, of: Thing.self, at: "items", style: .page(), maxConcurrentPages: 6, serial: true)
        #expect(paginator.maxConcurrentPages == 6 && paginator.serial)
        api.pagination.serial = true
        paginator = try await api.paginator(route, of: Thing.self, at: "items", style: .page(), serial: false)
        #expect(paginator.serial)
    }

    @Test("a serial API still yields every page in order")
    func serialAPI() async throws {
        try await withServer { server in
            var api = api(server)
            api.pagination.serial = true
            var items: [Thing] = []
            let sequence = try await api.items(
                of: SearchThings(count: 45), as: Thing.self, at: "items", style: .page(totalPages: "total_pages"))
            for try await item in sequence { items.append(item) }
            #expect(items == expected(0..<45))
        }
    }
}
