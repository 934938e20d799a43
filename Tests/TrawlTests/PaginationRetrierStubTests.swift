import Synchronization
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// A token store whose refresh swaps in the good token.
final class RotatingToken: Sendable {
    private let state = Mutex((token: "expired", refreshes: 0))
    var current: String { state.withLock { $0.token } }
    var refreshes: Int { state.withLock { $0.refreshes } }
    func refresh() {
        state.withLock {
            $0.token = "s3cret"
            $0.refreshes += 1
        }
    }
}

struct StubbedThings: GetRoute {
    typealias Output = EmptyResponse
    var stub: Stub?
    var path: RoutePath { "paged/page" }
}

@Suite("Pagination: the API's retrier and stubs apply to every page", .hangGuard)
struct PaginationRetrierStubTests {
    @Test("a 401 on a page refreshes the token once and the walk goes on with it", arguments: [false, true])
    func refreshOnUnauthorized(serial: Bool) async throws {
        try await withServer { server in
            var api = api(server)
            let tokens = RotatingToken()
            api.adapters = [BearerTokenAdapter { tokens.current }]
            api.retrier = RefreshOnUnauthorized { tokens.refresh() }
            var items: [Thing] = []
            for try await item in try await api.items(
                of: ProtectedThings(count: 45), as: Thing.self, at: "items", style: .page(totalPages: "total_pages"),
                serial: serial)
            {
                items.append(item)
            }
            #expect(items == expected(0..<45))
            #expect(tokens.refreshes == 1)
            // The first page was answered 401 once; every other page went out with the new token.
            #expect(server.stats.requestsServed == 5 + 1)
        }
    }

    @Test("a page still rejected after the refresh fails with the status, not a loop")
    func refreshDoesNotLoop() async throws {
        try await withServer { server in
            var api = api(server)
            let refreshes = Mutex(0)
            api.adapters = [BearerTokenAdapter { "never-valid" }]
            api.retrier = RefreshOnUnauthorized { refreshes.withLock { $0 += 1 } }
            do {
                for try await _ in try await api.items(
                    of: ProtectedThings(count: 25), as: Thing.self, at: "items", style: .page()) {}
                Issue.record("expected a 401")
            } catch let error as PaginationError {
                #expect(error.status == 401)
                #expect(error.apiError(NoErrorModel.self)?.kind == .status)
            }
            #expect(refreshes.withLock { $0 } == 1)
            #expect(server.stats.requestsServed == 2)
        }
    }

    @Test("stubbed pages are extracted and decoded like real ones, with no network")
    func stubbedPages() async throws {
        var api = API(baseURL: "http://127.0.0.1:9", client: sharedClient, stubbing: .always)
        let page = Stub.json(#"{"items":[{"id":1,"name":"item-1"},{"id":2,"name":"item-2"}],"total_pages":1}"#)
        var items: [Thing] = []
        for try await item in try await api.items(
            of: StubbedThings(stub: page), as: Thing.self, at: "items", style: .page(totalPages: "total_pages"))
        {
            items.append(item)
        }
        #expect(items == [Thing(id: 1, name: "item-1"), Thing(id: 2, name: "item-2")])

        let failing = Stub.json(#"{"message":"down"}"#, status: 503)
        do {
            for try await _ in try await api.items(
                of: StubbedThings(stub: failing), as: Thing.self, at: "items", style: .page()) {}
            Issue.record("expected the stub's 503")
        } catch let error as PaginationError {
            #expect(error.status == 503)
            #expect(error.apiError(NoErrorModel.self)?.response?.isStub == true)
        }

        // A route without a stub fails while stubbing is always on (`StubPaginationTests` covers
        // `.whenAvailable`, where it goes to the network).
        api.stubbing = .always
        do {
            for try await _ in try await api.items(
                of: StubbedThings(stub: nil), as: Thing.self, at: "items", style: .page()) {}
            Issue.record("expected a missing-stub error")
        } catch let error as PaginationError {
            let missing = error.apiError(NoErrorModel.self)
            #expect(missing?.kind == .transport)
            #expect((missing?.underlying as? TrawlError)?.code == .invalidRequest)
        }
    }

    @Test("the API-key query adapter replaces its parameter instead of repeating it")
    func apiKeyQueryIsIdempotent() async throws {
        var request = Request(url: "https://x.test/items?api_key=old&page=2")
        var context = AdapterContext(authentication: .allowed, attempt: 1)
        try await APIKeyAdapter(.query("api_key"), key: "new").adapt(&request, context: &context)
        #expect(request.url == "https://x.test/items?api_key=new&page=2")
    }
}
