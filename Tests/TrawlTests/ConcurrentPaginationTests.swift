import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

@Suite("Concurrent pages and failures", .hangGuard)
struct ConcurrentPaginationTests {
    static let knownTotals = PagedCase.all.filter {
        ["page, total pages", "page, total items", "offset, total", "link, last", "link, relative"].contains($0.name)
    }

    @Test("concurrent pages arrive in order despite random delays", arguments: knownTotals)
    func concurrentInOrder(pagedCase: PagedCase) async throws {
        try await withServer { server in
            let paginator = paginator(server, pagedCase, count: 200, query: "&jitter=40", maxConcurrentPages: 6)
            let items = try await collect(paginator.items)
            #expect(items == expected(0..<200))
            #expect(server.stats.maxInFlight > 1)
            #expect(server.stats.maxInFlight <= 6)
        }
    }

    @Test("a consumer on the main actor gets every item and every page, in order")
    func mainActorConsumer() async throws {
        try await withServer { server in
            let pagedCase = try #require(Self.knownTotals.first)
            let (items, pages) = try await Self.consumeOnMainActor(
                paginator(server, pagedCase, count: 300, query: "&jitter=10"), paginator(server, pagedCase, count: 300))
            #expect(items == expected(0..<300))
            #expect(pages.count == 30 && pages.allSatisfy { $0 == 10 })
        }
    }

    /// Iterates on the main actor, as top-level code does (the iterators then read on the caller's actor).
    @MainActor
    private static func consumeOnMainActor(_ forItems: Paginator<Thing>, _ forPages: Paginator<Thing>) async throws
        -> (items: [Thing], pageSizes: [Int])
    {
        var items: [Thing] = []
        for try await item in forItems.items {
            MainActor.assertIsolated()
            items.append(item)
        }
        var pages: [Int] = []
        for try await page in forPages.pages {
            MainActor.assertIsolated()
            pages.append(page.items.count)
        }
        return (items, pages)
    }

    @Test("pages larger than the read-ahead budget are read ahead in part and streamed for the rest")
    func pagesLargerThanTheReadAhead() async throws {
        try await withServer { server in
            // 3 pages of 60,000 items (~1.6 MB each, over the 1 MB a planned page decodes ahead), 3 at once.
            let large = Paginator(
                Thing.self, client: Client(), request: Request(url: server.url("/paged/page?n=180000&per_page=60000")),
                items: "items", style: .page(totalPages: "total_pages"), maxConcurrentPages: 3)
            let items = try await collect(large.items)
            #expect(items.count == 180_000)
            #expect(items.first == Thing(id: 0, name: "item-0"))
            #expect(items.last == Thing(id: 179_999, name: "item-179999"))
            #expect(zip(items, items.dropFirst()).allSatisfy { $0.id + 1 == $1.id })
        }
    }

    @Test("the serial switch fetches one page at a time")
    func serialSwitch() async throws {
        try await withServer { server in
            let paginator = paginator(server, PagedCase.all[0], count: 60, query: "&delay=10", serial: true)
            let items = try await collect(paginator.items)
            #expect(items == expected(0..<60))
            #expect(server.stats.maxInFlight == 1)
        }
    }

    @Test("chains without a known total stay serial")
    func chainsAreSerial() async throws {
        try await withServer { server in
            for pagedCase in PagedCase.all where ["cursor", "next URL", "page, no total"].contains(pagedCase.name) {
                server.resetStats()
                let items = try await collect(paginator(server, pagedCase, count: 40, query: "&delay=5").items)
                #expect(items == expected(0..<40))
                #expect(server.stats.maxInFlight == 1, "\(pagedCase.name)")
            }
        }
    }

    @Test("a failed page names itself; earlier items were delivered", arguments: [false, true])
    func failedPage(serial: Bool) async throws {
        try await withServer { server in
            let pagedCase = PagedCase.all[0]
            let paginator = paginator(server, pagedCase, count: 100, query: "&fail_page=3&jitter=20", serial: serial)
            var received: [Thing] = []
            do {
                for try await item in paginator.items { received.append(item) }
                Issue.record("expected page 3 to fail")
            } catch let error as PaginationError {
                #expect(error.position == .number(3))
                #expect(error.index == 2)
                #expect(error.url.contains("page=3"))
                #expect((error.underlying as? TrawlError)?.status == 500)
                #expect("\(error)".contains("page 3"))
            }
            #expect(received == expected(0..<20))
        }
    }

    @Test("a failed cursor page names its cursor")
    func failedCursorPage() async throws {
        try await withServer { server in
            let paginator = paginator(server, PagedCase.all[6], count: 100, query: "&fail_page=2")
            var received: [Thing] = []
            do {
                for try await item in paginator.items { received.append(item) }
                Issue.record("expected page 2 to fail")
            } catch let error as PaginationError {
                #expect(error.position == .cursor("9"))
            }
            #expect(received == expected(0..<10))
        }
    }

    @Test("a failed first page fails the sequence")
    func failedFirstPage() async throws {
        try await withServer { server in
            let paginator = paginator(server, PagedCase.all[9], count: 100, query: "&fail_page=1")
            await #expect(throws: PaginationError.self) {
                _ = try await collect(paginator.items)
            }
        }
    }

    @Test("stopping early cancels the pages in flight and starts no more")
    func stopEarly() async throws {
        try await withServer { server in
            let paginator = paginator(server, PagedCase.all[0], count: 500, query: "&delay=5", maxConcurrentPages: 4)
            var taken: [Thing] = []
            for try await item in paginator.items {
                taken.append(item)
                if taken.count == 15 { break }
            }
            #expect(taken == expected(0..<15))
            // Page 1, then pages 2...5 (page 2 was being read when the loop stopped): 5 of 50 pages.
            #expect(server.stats.requestsServed <= 5)
        }
    }

    @Test("while page 2 is slow, only the pages the reorder buffer holds are fetched")
    func reorderBufferBound() async throws {
        try await withServer { server in
            let concurrent = 3
            let slow = Duration.seconds(2)
            let paginator = paginator(
                server, PagedCase.all[0], count: 100, query: "&delay=2000&delay_page=2",
                maxConcurrentPages: concurrent)
            let items = try await collect(paginator.items)
            #expect(items == expected(0..<100))
            let log = server.requestLog
            #expect(log.count == 10)
            // The page parameter is appended last (`delay_page=2` is not it).
            let page2 = try #require(log.first { $0.target.hasSuffix("&page=2") })
            // Page 2 was answered no earlier than `slow` after it arrived: everything that arrived before then
            // was fetched while it waited. That may only be page 1 and the `concurrent` pages from page 2 on
            // (a client that kept fetching would have asked for all ten pages by then).
            let whileWaiting = log.filter { $0.receivedAt < page2.receivedAt + slow }
            #expect(whileWaiting.count <= 1 + concurrent, "\(whileWaiting.map(\.target))")
            #expect(whileWaiting.contains { $0.target.hasSuffix("&page=1") })
        }
    }

    @Test("a client with two connections per host never has more than two pages in flight")
    func perHostLimit() async throws {
        try await withServer { server in
            var configuration = Client.Configuration()
            configuration.maxConnectionsPerHost = 2
            let client = Client(configuration: configuration)
            var paginator = paginator(server, PagedCase.all[0], count: 80, query: "&delay=300", maxConcurrentPages: 6)
            paginator.client = client
            let items = try await collect(paginator.items)
            #expect(items == expected(0..<80))
            #expect((1...2).contains(server.stats.maxInFlight), "\(server.stats.maxInFlight)")
        }
    }

    @Test("an explicit page range fetches its pages concurrently")
    func explicitRangeIsConcurrent() async throws {
        try await withServer { server in
            let range = PagedCase(
                name: "range", path: "/paged/page?total=0&per_page=10", items: "items", style: .page(pages: 1...8))
            let items = try await collect(paginator(server, range, count: 200, query: "&delay=500").items)
            #expect(items == expected(0..<80))
            #expect(server.stats.maxInFlight > 1)
            #expect(server.stats.requestsServed == 8)
        }
    }

    @Test("an API that asks for serial pages keeps exactly one request in flight")
    func serialAPI() async throws {
        try await withServer { server in
            var api = api(server)
            api.pagination.serial = true
            var items: [Thing] = []
            for try await item in try await api.items(
                of: PagedThings(style: "page", count: 50, extra: ["delay": 100]), as: Thing.self, at: "items",
                style: .page(totalPages: "total_pages"), maxConcurrentPages: 8, serial: false)
            {
                items.append(item)
            }
            #expect(items == expected(0..<50))
            #expect(server.stats.maxInFlight == 1)
            #expect(server.stats.requestsServed == 5)
        }
    }
}
