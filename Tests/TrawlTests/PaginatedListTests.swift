import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// Pages `p=0, 2, 4…` of the page-style endpoint: a strategy defined outside the library.
struct EveryOtherPage: PaginationStrategy {
    func first(_ request: Request) -> PageRequest {
        PageRequest(request: request.settingQuery("page", to: "1"), position: .number(1))
    }

    func next(after page: PageResponse) -> PageRequest? {
        guard page.itemCount > 0, case .number(let number) = page.position else { return nil }
        let request = page.request.settingQuery("page", to: String(number + 2))
        return PageRequest(request: request, position: .number(number + 2))
    }
}

/// A broken strategy that asks for the same page again and again.
struct SamePageForever: PaginationStrategy {
    func first(_ request: Request) -> PageRequest { PageRequest(request: request, position: .cursor(nil)) }
    func next(after page: PageResponse) -> PageRequest? { PageRequest(request: page.request, position: .cursor("x")) }
}

@Suite("Paginated list and custom strategies", .hangGuard)
struct PaginatedListTests {
    @Test("a custom strategy drives the paginator")
    func customStrategy() async throws {
        try await withServer { server in
            let paginator = Paginator(
                Thing.self, client: sharedClient, request: Request(url: server.url("/paged/page?n=50&total=0")),
                items: "items", style: EveryOtherPage())
            let items = try await collect(paginator.items)
            #expect(items == expected(0..<10) + expected(20..<30) + expected(40..<50))
        }
    }

    @Test("a strategy that loops fails instead of repeating pages")
    func loopDetected() async throws {
        try await withServer { server in
            let paginator = Paginator(
                Thing.self, client: sharedClient, request: Request(url: server.url("/paged/page?n=50")),
                items: "items", style: SamePageForever())
            var received: [Thing] = []
            await #expect(throws: PaginationError.self) {
                for try await item in paginator.items { received.append(item) }
            }
            #expect(received == expected(0..<10))
        }
    }

    @Test("loads page by page until the end, then reports no more")
    func pageByPage() async throws {
        try await withServer { server in
            let list = PaginatedList(paginator(server, PagedCase.all[6], count: 25))
            #expect(await list.snapshot.hasMore)
            await list.refresh()
            #expect(await list.snapshot.items == expected(0..<10))
            await list.loadNextPage()
            await list.loadNextPage()
            let last = await list.snapshot
            #expect(last.items == expected(0..<25))
            #expect(!last.hasMore && !last.isLoading && !last.isEmpty && last.pagesLoaded == 3)
            await list.loadNextPage()
            #expect(await list.snapshot.pagesLoaded == 3)
        }
    }

    @Test("snapshots show loading and the accumulated items")
    func snapshots() async throws {
        try await withServer { server in
            let list = PaginatedList(paginator(server, PagedCase.all[0], count: 15))
            let stream = await list.snapshots()
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next()?.items.isEmpty == true)
            await list.loadNextPage()
            let seen = await iterator.next()
            #expect(seen?.isLoading == false)
            #expect(seen?.items == expected(0..<10))
            #expect(seen?.hasMore == true)
            await list.loadNextPage()
            let final = await list.snapshot
            #expect(final.hasMore == false)
            #expect(final.items == expected(0..<15))
        }
    }

    @Test("an empty collection is reported as empty")
    func empty() async throws {
        try await withServer { server in
            let list = PaginatedList(paginator(server, PagedCase.all[0], count: 0))
            await list.refresh()
            #expect(await list.snapshot.isEmpty)
        }
    }

    @Test("changing the query cancels the load in flight and starts over")
    func changeQuery() async throws {
        try await withServer { server in
            let list = PaginatedList(paginator(server, PagedCase.all[0], count: 30, query: "&delay=300"))
            let slow = Task { await list.loadNextPage() }
            try await Task.sleep(for: .milliseconds(50))
            await list.changeRequest { request in
                request = request.settingQuery("delay", to: "0").settingQuery("n", to: "3")
            }
            await slow.value
            let snapshot = await list.snapshot
            #expect(snapshot.items == expected(0..<3))
            #expect(snapshot.pagesLoaded == 1)
        }
    }

    @Test("a failed page is kept as the error and can be retried")
    func failure() async throws {
        try await withServer { server in
            let list = PaginatedList(paginator(server, PagedCase.all[0], count: 30, query: "&fail_page=2"))
            await list.refresh()
            await list.loadNextPage()
            let snapshot = await list.snapshot
            #expect(snapshot.error?.position == .number(2))
            #expect(snapshot.items == expected(0..<10))
            #expect(snapshot.hasMore)
            await list.setQuery("fail_page", to: "0")
            await list.loadNextPage()
            #expect(await list.snapshot.items == expected(0..<20))
        }
    }
}

/// Counts, per URL, the page requests an observer saw answered and those that failed as cancelled.
final class CancellationObserver: RequestObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var answered: [String] = []
    private var cancelledURLs: [String] = []

    var received: [String] { lock.withLock { answered } }
    var cancelled: [String] { lock.withLock { cancelledURLs } }

    func didReceive(_ response: RawResponse, for request: Request, duration: Duration) {
        lock.withLock { answered.append(request.url) }
    }

    func didFail(_ error: any Error, for request: Request) {
        let engineError = (error as? APIError<NoErrorModel>)?.underlying as? TrawlError
        guard engineError?.code == .cancelled else { return }
        lock.withLock { cancelledURLs.append(request.url) }
    }
}

/// The page-number API searched by tag (the server tags every item with it) and filtered by size and delay.
struct TagSearch: PaginatedRoute, GetRoute {
    typealias Output = EmptyResponse
    var page: Int?
    var search: String?
    var filter: SizeFilter?
    var searchParam: String { "tag" }
    var path: RoutePath { "paged/page" }
    var keyPath: JSONKeyPath? { "items" }
    var query: QueryParameters { paginationQuery.merging(["n": 25, "per_page": 10]) }
}

struct SizeFilter: PaginationFilter {
    var count: Int
    var delayMilliseconds = 0
    var parameters: QueryParameters { ["n": .int(count), "delay": .int(delayMilliseconds)] }
}

struct TaggedItem: Decodable, Sendable, Equatable {
    let id: Int
    let tag: String
}

@Suite("Paginated list over a paginated route", .hangGuard)
struct PaginatedRouteListTests {
    @Test("setFilter and setSearch go through the route and cancel the page in flight")
    func typedChanges() async throws {
        try await withServer { server in
            var api = api(server)
            let observer = CancellationObserver()
            api.observers = [observer]
            let slowFilter = SizeFilter(count: 25, delayMilliseconds: 20_000)
            let list = try await api.list(of: TagSearch(search: "a", filter: slowFilter), as: TaggedItem.self)
            let slowLoad = Task { await list.loadNextPage() }
            while server.requestLog.isEmpty && server.stats.requestsServed == 0 {
                try await Task.sleep(for: .milliseconds(5))
            }

            try await list.setFilter(SizeFilter(count: 3))
            await slowLoad.value
            var snapshot = await list.snapshot
            #expect(snapshot.items == (0..<3).map { TaggedItem(id: $0, tag: "a") })
            #expect(await list.route.filter?.count == 3)
            // The slow page was cancelled, not left to finish and be ignored.
            #expect(observer.cancelled.count == 1)
            #expect(observer.cancelled.allSatisfy { $0.contains("delay=20000") })
            #expect(!observer.received.contains { $0.contains("delay=20000") })

            try await list.setSearch("b")
            snapshot = await list.snapshot
            #expect(snapshot.items == (0..<3).map { TaggedItem(id: $0, tag: "b") })
            #expect(snapshot.pagesLoaded == 1 && !snapshot.isLoading)
            let route = await list.route
            #expect(route.search == "b" && route.filter?.count == 3)
            await list.loadNextPage()
            #expect(await list.snapshot.hasMore == false)
        }
    }
}
