import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// Redaction of credentials with names Trawl cannot guess (`apiToken`, `X-Session`), in logs and in the
/// descriptions of errors, as a user would print them: `"\(error)"`.
@Suite("Redaction of custom credential names", .hangGuard)
struct RedactionTests {
    static let secret = "tok-9f8e7d"

    struct Echoed: GetRoute {
        typealias Output = EmptyResponse
        var path: RoutePath { "echo" }
        var headers: HTTPHeaders { ["X-Session": "session-7c6b5a"] }
    }

    struct Failing: GetRoute {
        typealias Output = EmptyResponse
        var path: RoutePath { "status/500" }
    }

    struct TokenPages: GetRoute {
        typealias Output = EmptyResponse
        let query: QueryParameters
        var path: RoutePath { "paged/token" }
    }

    func tokenAPI(_ baseURL: String, client: Client = sharedClient) -> (API, LogCapture) {
        let capture = LogCapture()
        var api = API(baseURL: baseURL, client: client)
        api.adapters = [APIKeyAdapter(.query("apiToken"), key: Self.secret)]
        api.observers = [LoggingObserver(logger: capture.logger())]
        return (api, capture)
    }

    @Test("the API-key query adapter marks its parameter sensitive")
    func adapterMarksParameter() async throws {
        var request = Request(url: "https://x.test/items")
        var context = AdapterContext(authentication: .allowed)
        try await APIKeyAdapter(.query("apiToken"), key: Self.secret).adapt(&request, context: &context)
        #expect(request.sensitiveQueryParameters == ["apitoken"])
        #expect(Redaction.url(request.url, names: Redaction.queryNames(for: request))
            == "https://x.test/items?apiToken=REDACTED")
    }

    @Test("logs hide a custom query parameter and the client's sensitive headers")
    func logs() async throws {
        try await withServer { server in
            var configuration = Client.Configuration()
            configuration.sensitiveHeaders = ["X-Session"]
            let client = Client(configuration: configuration)
            let (api, capture) = tokenAPI(server.baseURL, client: client)
            _ = try await api.send(Echoed())
            let text = capture.all.joined(separator: "\n")
            #expect(!text.contains(Self.secret))
            #expect(!text.contains("session-7c6b5a"))
            #expect(text.contains("apiToken=REDACTED"))
            #expect(text.contains("X-Session: REDACTED"))
        }
    }

    @Test("a status error's description hides the parameter")
    func statusError() async throws {
        try await withServer { server in
            let (api, capture) = tokenAPI(server.baseURL)
            let error = await expectAPIError(NoErrorModel.self, .status) { _ = try await api.send(Failing()) }
            let text = "\(try #require(error))"
            #expect(!text.contains(Self.secret), "\(text)")
            #expect(text.contains("apiToken=REDACTED"), "\(text)")
            #expect(!capture.all.joined().contains(Self.secret))
        }
    }

    @Test("a transport error's description hides the parameter in the engine error's URL too")
    func transportError() async throws {
        let (api, capture) = tokenAPI("http://127.0.0.1:1")
        let error = await expectAPIError(NoErrorModel.self, .transport) { _ = try await api.send(Failing()) }
        let failure = try #require(error)
        let engineError = try #require(failure.underlying as? TrawlError)
        #expect(engineError.url.contains(Self.secret))  // the raw error keeps it, for the program
        let text = "\(failure)"
        #expect(!text.contains(Self.secret), "\(text)")
        #expect(text.contains("apiToken=REDACTED"), "\(text)")
        #expect(!capture.all.joined().contains(Self.secret))
    }

    @Test("a failed page's description hides the parameter")
    func paginationErrors() async throws {
        try await withServer { server in
            let (api, capture) = tokenAPI(server.baseURL)
            for query: QueryParameters in [
                ["n": 30, "per_page": 10, "fail_page": 2],  // HTTP 500 on page 2
                ["n": 30, "per_page": 10, "loop_to": 2],  // a cursor cycle
            ] {
                do {
                    for try await _ in try await api.items(
                        of: TokenPages(query: query), as: Thing.self, at: "items",
                        style: .cursor(at: "next_cursor", param: "cursor", hasMore: nil)) {}
                    Issue.record("expected a failure")
                } catch let error as PaginationError {
                    #expect(error.url.contains(Self.secret))
                    let text = "\(error)"
                    #expect(!text.contains(Self.secret), "\(text)")
                    #expect(text.contains("apiToken=REDACTED"), "\(text)")
                }
            }
            let logged = capture.all.joined(separator: "\n")
            #expect(logged.contains("bytes"))
            #expect(!logged.contains(Self.secret))
        }
    }

    @Test("URLs in free text are redacted; the text around them is kept")
    func freeText() {
        let names = Redaction.defaultQueryNames.union(["apitoken"])
        let text = "GET https://u:pw@x.io/a?apiToken=s3cret&q=1: failed [GET http://h/b?token=t2] (see https://d.io/x)."
        #expect(Redaction.text(text, names: names)
            == "GET https://REDACTED@x.io/a?apiToken=REDACTED&q=1: failed [GET http://h/b?token=REDACTED] "
                + "(see https://d.io/x).")
        #expect(Redaction.text("no urls here", names: names) == "no urls here")
    }
}
