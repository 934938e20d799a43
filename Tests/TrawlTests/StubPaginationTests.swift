import Synchronization
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// Counts the requests a stub answered.
final class StubCalls: Sendable {
    private let urls = Mutex<[String]>([])
    var all: [String] { urls.withLock { $0 } }
    func record(_ request: Request) { urls.withLock { $0.append(request.url) } }
}

/// `GET things?page=N`: three stubbed pages of items, then an empty one; no total anywhere.
struct StubbedPages: GetRoute {
    typealias Output = EmptyResponse
    let calls: StubCalls
    var path: RoutePath { "things" }
    var stub: Stub? {
        let pages: Stub = .pages([
            .json(#"{"items": [{"id": 1, "name": "item-1"}, {"id": 2, "name": "item-2"}]}"#),
            .json(#"{"items": [{"id": 3, "name": "item-3"}]}"#),
            .json(#"{"items": [{"id": 4, "name": "item-4"}]}"#),
            .json(#"{"items": []}"#),
        ])
        let calls = calls
        return .perRequest { request in
            calls.record(request)
            return pages.resolved(for: request)
        }
    }
}

/// `GET charges?starting_after=ID`: three stubbed Stripe-like pages, the last with `has_more: false`.
struct StubbedCursor: GetRoute {
    typealias Output = EmptyResponse
    let calls: StubCalls
    var path: RoutePath { "charges" }
    var stub: Stub? {
        let calls = calls
        return .perRequest { request in
            calls.record(request)
            switch request.queryValue("starting_after") {
            case nil: return .json(#"{"data": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], "has_more": true}"#)
            case "2": return .json(#"{"data": [{"id": 3, "name": "c"}], "has_more": true}"#)
            case "3": return .json(#"{"data": [{"id": 4, "name": "d"}], "has_more": false}"#)
            case let other: return .json(#"{"error": "unknown cursor \#(other ?? "")"}"#, status: 400)
            }
        }
    }
}

@Suite("Stubs that vary by page", .hangGuard)
struct StubPaginationTests {
    /// No server listens here: anything that reaches the network fails.
    static let offline = "http://127.0.0.1:1/v1"

    @Test("a stubbed .page() walk without a total ends at the first empty page")
    func pageWalk() async throws {
        let api = API(baseURL: Self.offline, client: sharedClient, stubbing: .always)
        let calls = StubCalls()
        var items: [Thing] = []
        for try await item in try await api.items(
            of: StubbedPages(calls: calls), as: Thing.self, at: "items", style: .page())
        {
            items.append(item)
        }
        #expect(items.map(\.id) == [1, 2, 3, 4])
        #expect(calls.all.map { $0.replacing(Self.offline, with: "") } == [
            "/things?page=1", "/things?page=2", "/things?page=3", "/things?page=4",
        ])
    }

    @Test("a stubbed cursor walk ends on has_more: false")
    func cursorWalk() async throws {
        let api = API(baseURL: Self.offline, client: sharedClient, stubbing: .always)
        let calls = StubCalls()
        var pages: [Page<Thing>] = []
        for try await page in try await api.pages(
            of: StubbedCursor(calls: calls), as: Thing.self, at: "data",
            style: .cursor(at: "data.-1.id", param: "starting_after"))
        {
            pages.append(page)
        }
        #expect(pages.map(\.position) == [.cursor(nil), .cursor("2"), .cursor("3")])
        #expect(pages.flatMap(\.items).map(\.name) == ["a", "b", "c", "d"])
        #expect(calls.all.count == 3)
    }

    @Test("with .whenAvailable a stubbed route is served by its stub and another goes to the network")
    func whenAvailable() async throws {
        try await withServer { server in
            var api = api(server)
            api.stubbing = .whenAvailable
            let calls = StubCalls()
            var stubbed: [Thing] = []
            for try await item in try await api.items(
                of: StubbedPages(calls: calls), as: Thing.self, at: "items", style: .page())
            {
                stubbed.append(item)
            }
            #expect(stubbed.map(\.id) == [1, 2, 3, 4])
            #expect(server.stats.requestsServed == 0)
            var real: [Thing] = []
            for try await item in try await api.items(
                of: PagedThings(style: "page", count: 25), as: Thing.self, at: "items", style: .page())
            {
                real.append(item)
            }
            #expect(real == expected(0..<25))
            #expect(server.stats.requestsServed == 4)
        }
    }

    @Test("a page past the stubbed pages is a clear 404")
    func pastTheEnd() async throws {
        let stub = Stub.pages([.json(#"{"items": [{"id": 1, "name": "x"}]}"#)])
        let served = stub.resolved(for: Request(url: "https://x.test/things?page=2"))
        #expect(served.status == 404)
        #expect(served.bodyText.contains("no stub for page=2"))
        #expect(stub.resolved(for: Request(url: "https://x.test/things")).status == 200)
    }

    @Test("send resolves a per-request stub too")
    func sendResolves() async throws {
        struct Echo: GetRoute {
            let word: String
            var path: RoutePath { "say" }
            var query: QueryParameters { ["word": .string(word)] }
            var stub: Stub? { .perRequest { .json(#"{"said": "\#($0.queryValue("word") ?? "")"}"#) } }
        }
        let api = API(baseURL: Self.offline, client: sharedClient, stubbing: .always)
        #expect(try await api.send(Echo(word: "hi")) == ["said": "hi"])
        #expect(try await api.send(Echo(word: "a b")) == ["said": "a b"])
    }
}
