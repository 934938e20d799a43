import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@testable import Trawl

/// `PaginationStyle.graphQL(connection:)` and `inBody()` through the library's `API`, against the test server.
@Suite("Library GraphQL and body pagination", .hangGuard)
struct GraphQLPaginationTests {
    struct Item: Decodable, Sendable, Equatable { let id: Int; let name: String }
    struct Query: Encodable, Sendable { let query: String; let variables: [String: Int] }

    struct Items: PostRoute {
        var path: RoutePath { "graphql" }
        var query: QueryParameters { ["n": 23] }
        var body: RouteBody {
            .json(Query(
                query: "query($first: Int, $after: String) { items(first: $first, after: $after) { nodes { id name } pageInfo { hasNextPage endCursor } } }",
                variables: ["first": 5]))
        }
    }

    @Test("a Relay connection walked through the API: every item once, in order")
    func connection() async throws {
        try await TestServer.with { server in
            let api = API(baseURL: server.url("/"))
            var ids: [Int] = []
            for try await item in try await api.items(
                of: Items(), as: Item.self, at: "data.items.nodes", style: .graphQL(connection: "data.items"))
            {
                ids.append(item.id)
            }
            #expect(ids == Array(1...23))
            #expect(server.requestLog.filter { $0.target.hasPrefix("/graphql") }.count == 5)
        }
    }

    struct EdgeItems: PostRoute {
        var path: RoutePath { "graphql" }
        var query: QueryParameters { ["n": 23] }
        var body: RouteBody {
            .json(Query(
                query: "query($first: Int, $after: String) { items(first: $first, after: $after) { edges { cursor node { id name } } pageInfo { hasNextPage endCursor } } }",
                variables: ["first": 5]))
        }
    }

    @Test("read at the connection's edges, each item is its edge's node, with either decoder")
    func edges() async throws {
        try await TestServer.with { server in
            var api = API(baseURL: server.url("/"))
            var ids: [Int] = []
            for try await item in try await api.items(
                of: EdgeItems(), as: Item.self, at: "data.items.edges", style: .graphQL(connection: "data.items"))
            {
                ids.append(item.id)
            }
            #expect(ids == Array(1...23))
            // Foundation's decoder reads elements as JSON text: the edge is unwrapped the same way.
            api.decoder = FoundationPayloadDecoder()
            let pages = try await api.pages(
                of: EdgeItems(), as: Item.self, at: "data.items.edges", style: .graphQL(connection: "data.items"))
            var names: [String] = []
            for try await page in pages { names += page.items.map(\.name) }
            #expect(names.count == 23 && names.first == "item-1", "\(names)")
        }
        let style = PaginationStyle.graphQL(connection: "data.items")
        #expect(style.itemsAreEdges(at: "data.items.edges"))
        #expect(!style.itemsAreEdges(at: "data.items.nodes") && !style.itemsAreEdges(at: "data.other.edges"))
        #expect(!PaginationStyle.cursor(at: "next", param: "c").itemsAreEdges(at: "data.items.edges"))
    }

    @Test("a GraphQL style names its capture paths and rejects an answer with errors")
    func rejection() {
        let style = PaginationStyle.graphQL(connection: "data.repo.issues", cursorVariable: "cursor")
        #expect(style.inBody)
        #expect(style.capturePaths.contains("data.repo.issues.pageInfo.endCursor"))
        let head = ResponseHead(status: 200, headers: [:], url: "http://x.test/graphql")
        var page = PageResponse(
            request: Request(url: "http://x.test/graphql", method: .post, body: .string("{}")), position: .cursor(nil),
            itemCount: 3, captured: ["data.repo.issues.pageInfo.hasNextPage": .bool(false)], head: head)
        #expect(style.rejection(of: page) == nil)
        page.captured["errors.0"] = .object(["message": .string("rate\nlimited")])
        #expect(style.rejection(of: page) == #"the GraphQL answer holds errors: "rate\u000Alimited""#)
        #expect(PaginationStyle.cursor(at: "next", param: "c").rejection(of: page) == nil)
    }
}
