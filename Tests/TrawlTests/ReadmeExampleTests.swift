// BEGIN README "Routes and pagination": a copy of README.md's swift block, checked by readmeBlockIsVerbatim.
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
// END README

import Testing
import TrawlTestSupport
import TrawlTestServer

@Suite("README routes example", .hangGuard)
struct ReadmeExampleTests {
    static func root() -> URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }

    /// The swift block of README's "Routes and pagination" section.
    static func readmeBlock() throws -> String { try readmeBlock(after: "## Routes and pagination") }

    /// The first swift block in README.md after `marker`.
    static func readmeBlock(after marker: String) throws -> String {
        let readme = try String(contentsOf: root().appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: marker))
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```swift\n"))
        let close = try #require(rest[open.upperBound...].range(of: "\n```\n"))
        return String(rest[open.upperBound..<close.lowerBound])
    }

    /// The copy at the top of this file, between the BEGIN and END lines.
    static func compiledCopy() throws -> String { try compiledCopy(in: #filePath) }

    /// The copy at the top of the test file `path`, between its `// BEGIN README` and `// END README` lines.
    static func compiledCopy(in path: String) throws -> String {
        let source = try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
        let begin = try #require(source.range(of: "// BEGIN README"))
        let firstLine = try #require(source[begin.upperBound...].range(of: "\n"))
        let end = try #require(source.range(of: "\n// END README"))
        return String(source[firstLine.upperBound..<end.lowerBound])
    }

    @Test("the compiled copy is README's block, character for character")
    func readmeBlockIsVerbatim() throws {
        let readme = try Self.readmeBlock()
        let copy = try Self.compiledCopy()
        #expect(readme.contains("func repoNames(matching"))
        if readme != copy {
            let readmeLines = readme.split(separator: "\n", omittingEmptySubsequences: false)
            let copyLines = copy.split(separator: "\n", omittingEmptySubsequences: false)
            let first = zip(readmeLines, copyLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(readmeLines.count, copyLines.count)
            Issue.record("""
                README.md's Routes and pagination block and ReadmeExampleTests.swift differ at line \(first + 1):
                README: \(first < readmeLines.count ? String(readmeLines[first]) : "<end>")
                copy:   \(first < copyLines.count ? String(copyLines[first]) : "<end>")
                """)
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

    @Test("the README's search loop runs against the test server")
    func searchLoopRuns() async throws {
        try await TestServer.with { server in
            let names = try await repoNames(matching: "http client", api: gitHub(baseURL: server.baseURL))
            #expect(names == (0..<250).map { "item-\($0)" })
            let targets = Set(server.requestLog.map(\.target))
            #expect(targets == Set((1...3).map { "/search/repositories?q=http%20client&per_page=100&page=\($0)" }))
        }
    }
}
