import Foundation
import Testing
import TrawlTestSupport
import Trawl

@Suite("Encodable query parameters", .hangGuard)
struct QueryEncodableTests {
    struct Filter: Encodable {
        let state: String
        let minStars: Int
    }

    enum Sort: String, Encodable {
        case stars, updated
    }

    struct Search: Encodable {
        let q: String
        let perPage: Int
        let labels: [String]
        let since: Date?
        let draft: Bool
        let sort: Sort
        let filter: Filter
        let id: Int64
    }

    @Test("declaration order, nils dropped, lists, nested objects, dates, enums, 64-bit ints")
    func encodesAStruct() throws {
        let search = Search(
            q: "swift nio", perPage: 100, labels: ["bug", "good first issue"], since: nil, draft: false,
            sort: .stars, filter: Filter(state: "open", minStars: 10), id: 9_007_199_254_740_993)
        let params = try QueryParameters(encoding: search)
        let pairs = params.pairs(arrays: .repeated).map { "\($0.name)=\($0.value)" }
        #expect(pairs == [
            "q=swift nio", "perPage=100", "labels=bug", "labels=good first issue", "draft=false", "sort=stars",
            "filter[state]=open", "filter[minStars]=10", "id=9007199254740993",
        ])
        #expect(params.pairs(arrays: .bracketed).filter { $0.name == "labels[]" }.count == 2)
    }

    @Test("dates are ISO 8601")
    func dates() throws {
        struct Since: Encodable { let since: Date }
        let params = try QueryParameters(encoding: Since(since: Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(params.pairs(arrays: .repeated).first?.value == "2023-11-14T22:13:20Z")
    }

    @Test("a top-level array or scalar is refused")
    func topLevelMustBeAnObject() {
        #expect(throws: EncodingError.self) { try QueryParameters(encoding: [1, 2]) }
        #expect(throws: EncodingError.self) { try QueryParameters(encoding: "q") }
    }

    @Test("a route can take its query from an Encodable value")
    func inARoute() throws {
        struct SearchRoute: GetRoute {
            typealias Output = EmptyResponse
            let search: Filter
            var path: RoutePath { "search" }
            var query: QueryParameters { (try? QueryParameters(encoding: search)) ?? [:] }
        }
        let api = API(baseURL: "https://api.example.com", client: Client())
        let request = try api.request(for: SearchRoute(search: Filter(state: "open", minStars: 5)))
        #expect(request.url == "https://api.example.com/search?state=open&minStars=5")
    }
}
