// BEGIN DOC docs/library.md "Routes and pagination": a copy of its swift block, checked by docBlockIsVerbatim.
import Foundation
import Trawl

struct Repo: Decodable, Sendable { let id: Int; let name: String }

struct SearchRepos: GetRoute {                       // one endpoint: a struct
    let term: String
    var path: RoutePath { "search/repositories" }
    var query: QueryParameters { ["q": .string(term), "per_page": 100] }
}

enum GitHub: GetRoute {                              // several: an enum with associated values
    case repo(owner: String, name: String)
    case rateLimit
    var path: RoutePath {                            // interpolated values are percent-encoded segments
        switch self {
        case .repo(let owner, let name): "repos/\(owner)/\(name)"
        case .rateLimit: "rate_limit"
        }
    }
}

func gitHub(baseURL: String = "https://api.github.com") -> API {
    API(baseURL: baseURL, headers: ["Accept": "application/vnd.github+json"],
        adapters: [BearerTokenAdapter(token: { ProcessInfo.processInfo.environment["GITHUB_TOKEN"] })])
}

func swiftRepo(api: API = gitHub()) async throws -> JSONValue {
    try await api.send(GitHub.repo(owner: "apple", name: "swift"))   // JSONValue by default
}

// Every page of a search, items decoded as each body streams in; with a known total the pages
// are fetched concurrently and still come out in order.
func repoNames(matching term: String, api: API = gitHub()) async throws -> [String] {
    var names: [String] = []
    for try await repo in try await api.items(
        of: SearchRepos(term: term), as: Repo.self, at: "items",
        style: .page(sizeParam: "per_page", size: 100, totalItems: "total_count")) {
        names.append(repo.name)
    }
    return names
}
// END DOC

import Testing
import TrawlTestServer
import TrawlTestSupport

@Suite("docs/library.md routes example", .hangGuard)
struct ReadmeExampleTests {
    /// The swift block of docs/library.md's "Routes and pagination" section.
    static func docBlock() throws -> String {
        try codeBlock("swift", after: "## Routes and pagination", in: try docsFile("library.md"))
    }

    @Test("the compiled copy is docs/library.md's block, character for character")
    func docBlockIsVerbatim() throws {
        let documented = try Self.docBlock()
        #expect(documented.contains("func repoNames(matching"))
        if let difference = firstDifference(
            documented: documented, copy: try compiledCopy(), documentedIn: "docs/library.md's routes block") {
            Issue.record(Comment(rawValue: difference))
        }
    }

    @Test("the routes build the documented URLs")
    func routesBuildTheDocumentedURLs() throws {
        let api = gitHub()
        let search = try api.request(for: SearchRepos(term: "http client"))
        #expect(search.url == "https://api.github.com/search/repositories?q=http%20client&per_page=100")
        #expect(search.headers["Accept"] == "application/vnd.github+json")
        let repo = try api.request(for: GitHub.repo(owner: "apple", name: "swift nio"))
        #expect(repo.url == "https://api.github.com/repos/apple/swift%20nio")
    }

    @Test("the documented search loop runs against the test server")
    func searchLoopRuns() async throws {
        try await TestServer.with { server in
            let names = try await repoNames(matching: "http client", api: gitHub(baseURL: server.baseURL))
            #expect(names == (0..<250).map { "item-\($0)" })
            let targets = Set(server.requestLog.map(\.target))
            #expect(targets == Set((1...3).map { "/search/repositories?q=http%20client&per_page=100&page=\($0)" }))
        }
    }
}
