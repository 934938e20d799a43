import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// Records every observer call as a line.
final class PageObserver: RequestObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var events: [String] { lock.withLock { lines } }

    func willSend(_ request: Request) { record("will \(page(request.url))") }

    func didReceive(_ response: RawResponse, for request: Request, duration: Duration) {
        record("did \(page(request.url)) \(response.status)")
    }

    func didFail(_ error: any Error, for request: Request) { record("fail \(page(request.url))") }

    private func record(_ line: String) { lock.withLock { lines.append(line) } }

    private func page(_ url: String) -> String {
        URLComponents(string: url)?.queryItems?.first { $0.name == "page" }?.value ?? "?"
    }
}

@Suite("Observers see every page", .hangGuard)
struct PaginationObserverTests {
    @Test("willSend and didReceive for each page fetched concurrently")
    func everyPage() async throws {
        try await withServer { server in
            var api = api(server)
            let observer = PageObserver()
            api.observers = [observer]
            var count = 0
            for try await _ in try await api.items(
                of: PagedThings(style: "page", count: 33), as: Thing.self, at: "items",
                style: .page(totalPages: "total_pages"))
            {
                count += 1
            }
            #expect(count == 33)
            let events = observer.events
            #expect(events.count == 8)
            for page in 1...4 {
                #expect(events.contains("will \(page)"))
                #expect(events.contains("did \(page) 200"))
            }
            #expect(events.firstIndex(of: "will 1") == 0 && events.firstIndex(of: "did 1 200") == 1)
        }
    }

    @Test("didFail for the page that fails")
    func failingPage() async throws {
        try await withServer { server in
            var api = api(server)
            let observer = PageObserver()
            api.observers = [observer]
            api.pagination.serial = true
            do {
                for try await _ in try await api.items(
                    of: FailingThings(), as: Thing.self, at: "items", style: .page(totalPages: "total_pages")) {}
                Issue.record("expected page 2 to fail")
            } catch is PaginationError {}
            // As with `send`: the rejected response is received, then the failure reported.
            #expect(observer.events == ["will 1", "did 1 200", "will 2", "did 2 500", "fail 2"])
        }
    }
}

struct FailingThings: GetRoute {
    typealias Output = EmptyResponse
    var path: RoutePath { "paged/page" }
    var query: QueryParameters { ["n": 33, "per_page": 10, "fail_page": 2] }
}
