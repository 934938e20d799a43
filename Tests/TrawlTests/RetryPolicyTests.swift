import Synchronization
import Testing
import TrawlTestSupport
@testable import Trawl
import TrawlTestServer

/// A value shared by a test and the code it drives.
final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    var current: Value { value.withLock { $0 } }
}

/// Records each attempt's number and stamps it on the request, as a credential adapter would.
struct AttemptStamp: RequestAdapter {
    let attempts: Shared<[Int]>

    func adapt(_ request: inout Request, context: inout AdapterContext) async throws {
        attempts.value.withLock { $0.append(context.attempt) }
        request.headers["X-Attempt"] = String(context.attempt)
    }
}

/// A page route whose `adjust` hook counts its calls: every attempt must run it.
struct AdjustedThings: GetRoute {
    typealias Output = EmptyResponse
    let query: QueryParameters
    let adjusted: Shared<Int>
    var path: RoutePath { "paged/page" }

    func adjust(_ request: inout Request) throws {
        adjusted.value.withLock { $0 += 1 }
        request.headers["X-Adjusted"] = "yes"
    }
}

@Suite("One retry policy for send and every page", .hangGuard)
struct RetryPolicyTests {
    func quickPolicy(_ attempts: Int) -> RetryPolicy {
        RetryPolicy(attempts: attempts, backoff: .milliseconds(1), maxBackoff: .milliseconds(5))
    }

    @Test("a page answered 503 then 200 is tried again, prepared again (adapters, adjust) for the same page")
    func pageRetriedAndPreparedAgain() async throws {
        try await withServer { server in
            var api = api(server)
            let attempts = Shared<[Int]>([])
            api.adapters = [AttemptStamp(attempts: attempts)]
            api.retryPolicy = quickPolicy(3)
            let adjusted = Shared(0)
            let route = AdjustedThings(
                query: ["n": 30, "per_page": 10, "fault_5xx": "2", "fault_times": 2], adjusted: adjusted)
            var items: [Thing] = []
            for try await item in try await api.items(
                of: route, as: Thing.self, at: "items", style: .page(totalPages: "total_pages"), serial: true)
            {
                items.append(item)
            }
            #expect(items == expected(0..<30))
            // Prepared once for the walk, then once per retry of page 2 (attempts 1 and 2).
            #expect(attempts.current == [0, 1, 2])
            #expect(adjusted.current == 3)
            let page2 = server.requestLog.filter { $0.target.contains("page=2") }
            #expect(page2.map(\.status) == [503, 503, 200])
        }
    }

    @Test("a page still failing after the policy's attempts fails with the status and the number of attempts")
    func pageGivesUp() async throws {
        try await withServer { server in
            var api = api(server)
            api.retryPolicy = quickPolicy(2)
            let route = PagedThings(style: "page", count: 30, extra: ["fault_5xx": "2", "fault_times": 5])
            var items: [Thing] = []
            do {
                for try await item in try await api.items(
                    of: route, as: Thing.self, at: "items", style: .page(), serial: true)
                {
                    items.append(item)
                }
                Issue.record("expected the page to fail")
            } catch let error as PaginationError {
                #expect(error.status == 503)
                #expect(error.attempts == 2)
                #expect(error.index == 1)
            }
            #expect(items == expected(0..<10))
            #expect(server.requestLog.filter { $0.target.contains("page=2") }.count == 2)
        }
    }

    @Test("a 404 is not tried again; without a policy nothing is")
    func notRetried() async throws {
        try await withServer { server in
            var api = api(server)
            api.retryPolicy = quickPolicy(4)
            let missing = PagedThings(style: "page", count: 30, extra: ["fault_404": "1"])
            await #expect(throws: PaginationError.self) {
                for try await _ in try await api.items(of: missing, as: Thing.self, at: "items", style: .page()) {}
            }
            #expect(server.requestLog.filter { $0.target.contains("fault_404") }.count == 1)

            api.retryPolicy = .never
            let flaky = PagedThings(style: "page", count: 30, extra: ["fault_5xx": "1", "tag": "never"])
            await #expect(throws: PaginationError.self) {
                for try await _ in try await api.items(of: flaky, as: Thing.self, at: "items", style: .page()) {}
            }
            #expect(server.requestLog.filter { $0.target.contains("tag=never") }.count == 1)
        }
    }

    @Test("send tries a 503 again with the same policy, preparing the request again")
    func sendRetried() async throws {
        try await withServer { server in
            var api = api(server)
            let attempts = Shared<[Int]>([])
            api.adapters = [AttemptStamp(attempts: attempts)]
            api.retryPolicy = quickPolicy(3)
            let route = PagedThings(style: "page", count: 5, extra: ["fault_5xx": "1", "fault_times": 1])
            let response = try await api.response(for: route)
            #expect(response.status == 200)
            #expect(attempts.current == [0, 1])

            api.retryPolicy = quickPolicy(2)
            let down = PagedThings(style: "page", count: 5, extra: ["fault_5xx": "1", "fault_times": 9])
            do {
                _ = try await api.response(for: down)
                Issue.record("expected a 503")
            } catch let error as APIError<NoErrorModel> {
                #expect(error.status == 503)
            }
        }
    }

    @Test("a refreshed page keeps its page parameters and takes the fresh query credential")
    func refreshedPageTakesFreshQueryCredential() {
        let base = Request(url: "https://api.test/items?key=old&per_page=10&page=1")
        let page = Request(url: "https://api.test/items?key=old&per_page=10&page=4")
        let fresh = Request(url: "https://api.test/items?key=new&per_page=10&page=1")
        #expect(QueryEditing.page(page, of: base, on: fresh).url == "https://api.test/items?key=new&per_page=10&page=4")
        let next = Request(url: "https://api.test/v2/items?after=x")
        #expect(QueryEditing.page(next, of: base, on: fresh).url == "https://api.test/v2/items?after=x")
    }
}
