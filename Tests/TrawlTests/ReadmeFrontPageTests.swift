// BEGIN DOC README.md "The Swift library": a copy of its swift block, checked by docBlockIsVerbatim.
import Trawl   // .product(name: "Trawl", package: "Trawl")

struct Listing: Decodable, Sendable { let id: Int; let name: String }

struct SearchListings: GetRoute {
    let term: String
    var path: RoutePath { "search/repositories" }
    var query: QueryParameters { ["q": .string(term), "per_page": 100] }
}

// Every page of the search: fetched concurrently once the total is known, items decoded as each body streams in.
func listingNames(matching term: String, api: API) async throws -> [String] {
    var names: [String] = []
    for try await listing in try await api.items(
        of: SearchListings(term: term), as: Listing.self, at: "items",
        style: .page(sizeParam: "per_page", size: 100, totalItems: "total_count")) {
        names.append(listing.name)
    }
    return names
}
// END DOC

import Testing
import TrawlTestServer
import TrawlTestSupport

@Suite("README's Swift library example", .hangGuard)
struct ReadmeFrontPageTests {
    /// The swift block of README.md's "The Swift library" section.
    static func docBlock() throws -> String {
        try codeBlock("swift", after: "### The Swift library", in: try repositoryFile("README.md"))
    }

    @Test("the compiled copy is README's block, character for character")
    func docBlockIsVerbatim() throws {
        if let difference = firstDifference(
            documented: try Self.docBlock(), copy: try compiledCopy(), documentedIn: "README.md's Swift block") {
            Issue.record(Comment(rawValue: difference))
        }
    }

    @Test("the search loop walks every page of the test server's search, as README says it is called")
    func searchLoopRuns() async throws {
        try await TestServer.with { server in
            let names = try await listingNames(matching: "http client", api: API(baseURL: server.baseURL))
            #expect(names == (0..<250).map { "item-\($0)" })
            let targets = Set(server.requestLog.map(\.target))
            #expect(targets == Set((1...3).map { "/search/repositories?q=http%20client&per_page=100&page=\($0)" }))
        }
    }
}
