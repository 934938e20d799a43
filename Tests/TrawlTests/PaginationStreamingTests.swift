import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// Records the body size of every page response an observer is told about.
final class SizeObserver: RequestObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var sizes: [String: Int] = [:]

    var all: [String: Int] { lock.withLock { sizes } }

    func didReceive(_ response: RawResponse, for request: Request, duration: Duration) {
        lock.withLock { sizes[request.url] = response.bodySize }
    }
}

@Suite("Pages stream: sizes reach observers, items arrive before the page ends", .hangGuard)
struct PaginationStreamingTests {
    @Test("observers and the logger get each page's real size")
    func pageSizes() async throws {
        try await withServer { server in
            var api = api(server)
            let sizes = SizeObserver()
            let capture = LogCapture()
            api.observers = [sizes, LoggingObserver(logger: capture.logger(), headersLevel: nil)]
            var count = 0
            for try await _ in try await api.items(
                of: PagedThings(style: "page", count: 25), as: Thing.self, at: "items",
                style: .page(totalPages: "total_pages"))
            {
                count += 1
            }
            #expect(count == 25)
            let observed = sizes.all
            #expect(observed.count == 3)
            for (url, size) in observed {
                let body = try await sharedClient.send(Request(url: url)).body
                #expect(size == body.count, "\(url)")
                #expect(size > 0)
                #expect(capture.all.contains { $0.contains("-> 200 in ") && $0.hasSuffix(", \(size) bytes ") })
            }
            #expect(!capture.all.contains { $0.contains(" 0 bytes") })
        }
    }

    @Test("the first item arrives while the rest of its page is still on the way")
    func itemsBeforePageEnds() async throws {
        try await withServer { server in
            // Page 1 sends its head and half its body, then holds the connection open and silent.
            for serial in [true, false] {
                // A fault hits a request target once: each walk gets its own target.
                var request = Request(url: server.url("/paged/page?n=30&per_page=10&fault_hold=1&walk=\(serial)"))
                request.timeouts.stall = .seconds(20)  // a reader that waited for the whole page would fail here
                let paginator = Paginator(
                    Thing.self, client: sharedClient, request: request, items: "items",
                    style: .page(totalPages: "total_pages"), serial: serial)
                var first: [Thing] = []
                for try await item in paginator.items {
                    first.append(item)
                    if first.count == 3 { break }
                }
                #expect(first == expected(0..<3))
            }
            let firstPages = server.requestLog.filter { $0.target.contains("page=1") || !$0.target.contains("page=") }
            #expect(firstPages.count == 2)
        }
    }
}
