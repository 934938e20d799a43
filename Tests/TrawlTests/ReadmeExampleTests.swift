import Foundation
import Testing
import Trawl
import TrawlTestServer

// The README's routes example, verbatim (it must keep compiling), then run against the test server.

struct Repo: Decodable, Sendable, Equatable {
    let id: Int
    let name: String
}

/// One endpoint: a struct route.
struct SearchRepos: GetRoute {
    let term: String
    var path: RoutePath { "search/repositories" }
    var query: QueryParameters { ["q": .string(term), "per_page": 100] }
}

/// Several endpoints: an enum of routes with associated values.
enum GitHub: GetRoute {
    case repo(owner: String, name: String)
    case rateLimit

    var path: RoutePath {
        switch self {
        case .repo(let owner, let name): "repos/\(owner)/\(name)"
        case .rateLimit: "rate_limit"
        }
    }
}

func makeGitHubAPI(baseURL: String = "https://api.github.com") -> API {
    API(baseURL: baseURL, headers: ["Accept": "application/vnd.github+json"],
        adapters: [BearerTokenAdapter(token: { ProcessInfo.processInfo.environment["GITHUB_TOKEN"] })])
}

/// The README's search loop; `style` walks `page=1,2,…` and stops at `total_count` items.
func searchRepos(_ api: API, term: String) async throws -> [Repo] {
    var found: [Repo] = []
    for try await repo in try await api.items(
        of: SearchRepos(term: term), as: Repo.self, at: "items",
        style: .page(sizeParam: "per_page", size: 100, totalItems: "total_count")) {
        found.append(repo)
    }
    return found
}

@Suite("README routes example")
struct ReadmeExampleTests {
    @Test func routesBuildTheDocumentedURLs() throws {
        let api = makeGitHubAPI()
        let search = try api.request(for: SearchRepos(term: "http client"))
        #expect(search.url == "https://api.github.com/search/repositories?q=http%20client&per_page=100")
        #expect(search.headers["Accept"] == "application/vnd.github+json")
        let repo = try api.request(for: GitHub.repo(owner: "apple", name: "swift nio"))
        #expect(repo.url == "https://api.github.com/repos/apple/swift%20nio")
    }

    /// The same kind of loop against the test server's paginated API (no internet in tests).
    @Test func paginatedItemsLoopRuns() async throws {
        struct Paged: GetRoute {
            var path: RoutePath { "paged/page" }
            var query: QueryParameters { ["n": 25, "per_page": 10] }
        }
        try await TestServer.with { server in
            let api = makeGitHubAPI(baseURL: server.baseURL)
            var names: [String] = []
            for try await repo in try await api.items(
                of: Paged(), as: Repo.self, at: "items", style: .page(totalPages: "total_pages")) {
                names.append(repo.name)
            }
            #expect(names == (0..<25).map { "item-\($0)" })
        }
    }
}
