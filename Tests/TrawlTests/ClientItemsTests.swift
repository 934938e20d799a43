import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import Trawl
import TrawlJSON
import TrawlTestServer

private struct Product: Decodable, Sendable, Equatable {
    let id: Int
    let name: String
    let tags: [String]
    let price: Double
    let inStock: Bool
}

private func withServer(_ body: (TestServer) async throws -> Void) async throws {
    try await TestServer.with(body)
}

@Suite("Items streamed from a response", .hangGuard)
struct ClientItemsTests {
    @Test func decodesItemsAndCapturesSideFields() async throws {
        try await withServer { server in
            var decoder = JSONItemDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            let stream = Client().items(
                Product.self, at: "items", in: Request(url: server.url("/json/small")),
                capture: ["total_count", "has_more", "meta.unicode"], decoder: decoder)
            var products: [Product] = []
            for try await product in stream { products.append(product) }
            #expect(products.map(\.name) == ["anchor", "buoy", "cleat", "dock line", "fender"])
            #expect(products[2] == Product(id: 3, name: "cleat", tags: ["steel"], price: 8.75, inStock: false))
            let summary = try #require(stream.summary)
            #expect(summary.elementCount == 5)
            #expect(summary.captured["total_count"] == .number("5"))
            #expect(summary.captured["has_more"] == .bool(false))
            #expect(summary.captured["meta.unicode"] == .string("café ⚓"))
            #expect(stream.head?.status == 200)
        }
    }

    @Test func nonSuccessStatusIsAnError() async throws {
        try await withServer { server in
            let stream = Client().items(JSONValue.self, at: "items", in: Request(url: server.url("/status/503")))
            do {
                for try await _ in stream { Issue.record("no item expected") }
                Issue.record("expected an error")
            } catch let error as TrawlError {
                #expect(error.code == .unexpectedStatus)
                #expect(error.status == 503)
                #expect(error.message == "HTTP 503 instead of the JSON collection at 'items'")
                #expect(String(decoding: error.bodyExcerpt, as: UTF8.self).contains("503"))
            }
        }
    }

    @Test func malformedBodyReportsWhereAndKeepsEarlierItems() async throws {
        try await withServer { server in
            // /bytes serves binary pattern bytes: not JSON from the first byte on.
            let stream = Client().items(JSONValue.self, at: "items", in: Request(url: server.url("/bytes/64")))
            do {
                for try await _ in stream {}
                Issue.record("expected an error")
            } catch let error as TrawlError {
                #expect(error.code == .invalidBody)
                let json = try #require(error.underlying as? JSONError)
                #expect(json.byteOffset == 0)
            }
        }
    }

    @Test func itemsAtAnotherKeyPathOfTheEcho() async throws {
        try await withServer { server in
            var request = Request(url: server.url("/echo"))
            request.headers = ["X-One": "1", "X-Two": "2"]
            let stream = Client().items([String].self, at: "headers", in: request, capture: ["method"])
            var names: [String] = []
            for try await pair in stream { names.append(pair[0]) }
            #expect(names.contains("X-One") && names.contains("X-Two"))
            #expect(stream.summary?.captured["method"] == .string("GET"))
        }
    }

    @Test func missingCollectionIsAnError() async throws {
        try await withServer { server in
            let stream = Client().items(JSONValue.self, at: "nope", in: Request(url: server.url("/json/small")))
            do {
                for try await _ in stream { Issue.record("no item expected") }
                Issue.record("expected an error")
            } catch let error as TrawlError {
                #expect(error.code == .invalidBody)
                #expect(error.message == "the body has no value at 'nope'")
            }
        }
    }

    @Test func transportErrorsPassThrough() async throws {
        try await withServer { server in
            let stream = Client().items(JSONValue.self, at: "items", in: Request(url: server.url("/short/10")))
            do {
                for try await _ in stream {}
                Issue.record("expected an error")
            } catch let error as TrawlError {
                // The short body is not JSON either; whichever is noticed first, the error says so.
                #expect(error.code == .truncated || error.code == .invalidBody)
            }
        }
    }

    /// A page whose head announces the whole body, then about half of it (valid JSON up to there), then a TCP
    /// RST or a clean close: the engine's transport error comes through as it is (not as malformed JSON), after
    /// every item the half held.
    @Test(arguments: [
        ("fault_reset", TrawlError.Code.receiveFailed, 56),  // CURLE_RECV_ERROR
        ("fault_trunc", TrawlError.Code.truncated, 18),  // CURLE_PARTIAL_FILE
    ])
    func transportErrorAfterValidItemsPassesThrough(fault: String, code: TrawlError.Code, curlCode: Int) async throws {
        struct Item: Decodable, Sendable { let id: Int; let name: String }
        try await withServer { server in
            let target = server.url("/paged/page?n=100&per_page=100&page=1&\(fault)=1")
            let stream = Client().items(Item.self, at: "items", in: Request(url: target))
            var ids: [Int] = []
            do {
                for try await item in stream { ids.append(item.id) }
                Issue.record("expected an error")
            } catch let error as TrawlError {
                #expect(error.code == code, "\(error)")
                #expect(error.curlCode == curlCode)
                #expect(error.underlying == nil, "a transport error, not \(String(describing: error.underlying))")
            }
            // The page's second request is answered whole: the server cut the first after half its bytes, so
            // every item whose closing brace was in that half has been delivered, in order.
            let whole = try await Client().send(Request(url: target)).body
            let half = whole.prefix(whole.count / 2)
            let complete = half.filter { $0 == UInt8(ascii: "}") }.count
            #expect(complete > 10)
            #expect(ids == Array(0..<complete))
        }
    }
}
