import Testing
import TrawlTestSupport
import Trawl

@Suite("URL building", .hangGuard)
struct URLBuildingTests {
    private func url(
        _ base: String, _ path: RoutePath, _ query: QueryParameters = [:], _ arrays: ArrayEncoding = .repeated
    ) -> String {
        URLBuilder.url(base: base, path: path, query: query, arrays: arrays)
    }

    @Test func joinsWithExactlyOneSlash() {
        #expect(url("http://h/api/", "/users") == "http://h/api/users")
        #expect(url("http://h/api", "users") == "http://h/api/users")
        #expect(url("http://h/api//", "//users/") == "http://h/api/users/")
        #expect(url("http://h", "") == "http://h")
        #expect(url("http://h/", "") == "http://h/")
        #expect(url("http://h", "a/b") == "http://h/a/b")
    }

    @Test func encodesInterpolatedValuesAsOneSegment() {
        let name = "a/b c?d#e%f"
        #expect(url("http://h", "repos/\(name)/issues") == "http://h/repos/a%2Fb%20c%3Fd%23e%25f/issues")
        #expect(RoutePath(segments: ["x y", "é", "a+b:c@d"]).encoded == "x%20y/%C3%A9/a+b:c@d")
        #expect(url("http://h", "items/\(42)") == "http://h/items/42")
    }

    @Test func literalPathTextIsKeptButMadeLegal() {
        #expect(RoutePath("a b/c%2Fd").encoded == "a%20b/c%2Fd")
        #expect(RoutePath(encoded: "already%20done").encoded == "already%20done")
    }

    @Test func encodesQueryNamesAndValuesStrictlyInOrder() {
        let query: QueryParameters = [
            "q": "a b&c=d+e", "page": 2, "ratio": 0.5, "draft": false, "skipped": nil, "ünï": "café",
        ]
        #expect(
            url("http://h", "s", query)
                == "http://h/s?q=a%20b%26c%3Dd%2Be&page=2&ratio=0.5&draft=false&%C3%BCn%C3%AF=caf%C3%A9")
    }

    @Test func arraysRepeatedBracketedOrCommaSeparated() {
        let query: QueryParameters = ["tags": ["x", "y z", nil], "n": 1]
        #expect(url("http://h", "s", query, .repeated) == "http://h/s?tags=x&tags=y%20z&n=1")
        #expect(url("http://h", "s", query, .bracketed) == "http://h/s?tags%5B%5D=x&tags%5B%5D=y%20z&n=1")
        #expect(url("http://h", "s", query, .commaSeparated) == "http://h/s?tags=x%2Cy%20z&n=1")
    }

    @Test func appendsToAnExistingBaseQuery() {
        #expect(url("http://h/v1?key=k", "items", ["a": "1"]) == "http://h/v1/items?key=k&a=1")
        #expect(url("http://h/v1?key=k", "items") == "http://h/v1/items?key=k")
    }

    @Test func formBodiesUsePlusForSpaces() {
        let form: QueryParameters = ["name": "J Doe", "note": "a&b=c", "list": ["1", "2"]]
        #expect(URLBuilder.formBody(form, arrays: .repeated) == "name=J+Doe&note=a%26b%3Dc&list=1&list=2")
    }

    @Test func routeBuildsTheRequest() throws {
        struct Search: GetRoute {
            let term: String
            var path: RoutePath { "search/\(term)" }
            var query: QueryParameters { ["sort": "stars"] }
            var parameters: QueryParameters { ["q": "swift nio", "langs": ["swift", "c"]] }
            var arrayEncoding: ArrayEncoding { .bracketed }
            var headers: HTTPHeaders { ["Accept": "text/plain"] }
            var timeout: Duration? { .seconds(3) }
        }
        let api = API(baseURL: "https://api.example.com/v2/", headers: ["Accept": "application/json", "X-A": "1"])
        let request = try api.request(for: Search(term: "a/b"))
        #expect(request.method == .get)
        #expect(
            request.url
                == "https://api.example.com/v2/search/a%2Fb?sort=stars&q=swift%20nio&langs%5B%5D=swift&langs%5B%5D=c")
        #expect(request.headers.values(for: "accept") == ["text/plain"])
        #expect(request.headers["x-a"] == "1")
        #expect(request.timeouts.total == .seconds(3))
        #expect(request.body == nil)
    }

    @Test func methodProtocolsFixTheMethod() {
        struct P: PostRoute { var path: RoutePath { "p" } }
        struct U: PutRoute { var path: RoutePath { "p" } }
        struct A: PatchRoute { var path: RoutePath { "p" } }
        struct D: DeleteRoute { var path: RoutePath { "p" } }
        struct H: HeadRoute { var path: RoutePath { "p" } }
        struct O: OptionsRoute { var path: RoutePath { "p" } }
        struct T: TraceRoute { var path: RoutePath { "p" } }
        struct C: ConnectRoute { var path: RoutePath { "p" } }
        let methods: [HTTPMethod] = [P().method, U().method, A().method, D().method, H().method, O().method,
            T().method, C().method]
        #expect(methods.map(\.rawValue) == ["POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "CONNECT"])
    }
}
