import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// A realistic item of `/paged/...?tag=X`, with snake_case keys in the JSON (`created_at`).
struct TaggedThing: Decodable, Sendable, Equatable {
    let id: Int
    let tag: String
    let createdAt: String
}

/// The test server's JSON error body: `{"error": "...", "page": 2}`.
struct ServerError: Decodable, Sendable, Equatable {
    let error: String
    let page: Int
}

struct FailingPages: GetRoute {
    typealias Output = EmptyResponse
    typealias ErrorModel = ServerError
    var path: RoutePath { "paged/page" }
    var query: QueryParameters { ["n": 30, "per_page": 10, "fail_page": 2] }
}

/// A route whose status check differs from 2xx.
struct PickyPages: GetRoute {
    typealias Output = EmptyResponse
    typealias ErrorModel = ServerError
    let accepted: Set<Int>
    var path: RoutePath { "paged/page" }
    var query: QueryParameters { ["n": 30, "per_page": 10, "fail_page": 2] }
    func isAcceptable(status: Int) -> Bool { accepted.contains(status) }
}

struct SnakeRoute: GetRoute {
    typealias Output = EmptyResponse
    var decoder: (any PayloadDecoding)?
    var path: RoutePath { "paged/page" }
    var query: QueryParameters { ["n": 25, "per_page": 10, "tag": "t"] }
}

@Suite("Pagination decodes and checks pages as send does", .hangGuard)
struct PaginationDecodingTests {
    static let snakeCaseStreaming: StreamingPayloadDecoder = {
        var decoder = JSONItemDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return StreamingPayloadDecoder(decoder)
    }()

    static let snakeCaseFoundation = FoundationPayloadDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    func walk(_ api: API, _ route: SnakeRoute) async throws -> [TaggedThing] {
        var items: [TaggedThing] = []
        for try await item in try await api.items(
            of: route, as: TaggedThing.self, at: "items", style: .page(totalPages: "total_pages"))
        {
            items.append(item)
        }
        return items
    }

    @Test("the API's decoder (convertFromSnakeCase) decodes every item of every page")
    func apiDecoder() async throws {
        try await withServer { server in
            for decoder in [Self.snakeCaseStreaming, Self.snakeCaseFoundation] as [any PayloadDecoding] {
                var api = api(server)
                api.decoder = decoder
                let items = try await walk(api, SnakeRoute())
                #expect(items.map(\.id) == Array(0..<25))
                #expect(items.allSatisfy { $0.tag == "t" && $0.createdAt.hasPrefix("2024-") })
                let json = SyntheticItems.json(id: 7, tag: "t")
                #expect(json.contains("\"created_at\":\"\(items[7].createdAt)\""))
            }
        }
    }

    @Test("a route's own decoder wins over the API's")
    func routeDecoder() async throws {
        try await withServer { server in
            let plain = api(server)
            // The API's default decoder has no key conversion: `createdAt` is missing and the page fails.
            await #expect(throws: PaginationError.self) { _ = try await walk(plain, SnakeRoute()) }
            let items = try await walk(plain, SnakeRoute(decoder: Self.snakeCaseFoundation))
            #expect(items.count == 25)
        }
    }

    @Test("a page answered with a JSON 500 carries the route's decoded error model")
    func typedErrorBody() async throws {
        try await withServer { server in
            var received: [Thing] = []
            do {
                for try await item in try await api(server).items(
                    of: FailingPages(), as: Thing.self, at: "items", style: .page(totalPages: "total_pages"),
                    serial: true)
                {
                    received.append(item)
                }
                Issue.record("expected page 2 to fail")
            } catch let error as PaginationError {
                #expect(error.position == .number(2))
                #expect(error.status == 500)
                #expect(error.errorModel(ServerError.self) == ServerError(error: "page 2 failed on purpose", page: 2))
                let apiError = try #require(error.apiError(ServerError.self))
                #expect(apiError.kind == .status)
                #expect(apiError.bodyExcerpt.contains("failed on purpose"))
                #expect(apiError.request.url.contains("page=2"))
            }
            #expect(received == expected(0..<10))
        }
    }

    @Test("the route's status check judges every page")
    func routeStatusCheck() async throws {
        try await withServer { server in
            let api = api(server)
            // Rejects 200: the first page fails on its status, with the model of its (item) body absent.
            do {
                for try await _ in try await api.items(
                    of: PickyPages(accepted: [201]), as: Thing.self, at: "items", style: .page()) {}
                Issue.record("expected the first page to be rejected")
            } catch let error as PaginationError {
                #expect(error.index == 0)
                #expect(error.status == 200)
                #expect(error.apiError(ServerError.self)?.kind == .status)
            }
            // Accepts 500: page 2 is read as a page, and fails because its body has no items.
            var received: [Thing] = []
            do {
                for try await item in try await api.items(
                    of: PickyPages(accepted: [200, 500]), as: Thing.self, at: "items", style: .page(), serial: true)
                {
                    received.append(item)
                }
                Issue.record("expected page 2 to fail to decode")
            } catch let error as PaginationError {
                #expect(error.position == .number(2))
                #expect(error.apiError(ServerError.self)?.kind == .decoding)
                #expect("\(error)".contains("no value at 'items'"), "\(error)")
            }
            #expect(received == expected(0..<10))
        }
    }
}
