import Testing
import Trawl
import TrawlTestServer

@Suite("Concurrent pages and failures", .timeLimit(.minutes(1)))
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

    @Test("stopping early cancels the pages in flight")
    func stopEarly() async throws {
        try await withServer { server in
            let paginator = paginator(server, PagedCase.all[0], count: 500, query: "&delay=5", maxConcurrentPages: 4)
            var taken: [Thing] = []
            for try await item in paginator.items {
                taken.append(item)
                if taken.count == 15 { break }
            }
            #expect(taken == expected(0..<15))
        }
    }
}
