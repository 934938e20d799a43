import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

@Suite("Logging and redaction", .hangGuard)
struct LoggingTests {
    struct Secretive: GetRoute {
        typealias Output = EmptyResponse
        var path: RoutePath { "echo" }
        var query: QueryParameters { ["access_token": "tok-secret", "q": "visible"] }
        var headers: HTTPHeaders { ["Cookie": "sid=cookie-secret", "X-Trace": "trace-1"] }
    }

    @Test func logsRequestsWithCredentialsRedacted() async throws {
        try await withServer { server in
            let capture = LogCapture()
            var api = api(server)
            api.adapters = [
                BearerTokenAdapter { "bearer-secret" }, APIKeyAdapter(.header("X-Custom-Key"), key: "key-secret"),
                APIKeyAdapter(.query("api_key"), key: "query-secret"),
            ]
            api.observers = [LoggingObserver(logger: capture.logger())]
            _ = try await api.send(Secretive())
            let lines = capture.all
            let text = lines.joined(separator: "\n")
            #expect(lines.count == 3)
            for secret in ["bearer-secret", "key-secret", "query-secret", "tok-secret", "cookie-secret"] {
                #expect(!text.contains(secret), "\(secret) leaked")
            }
            let url = server.url("/echo?access_token=REDACTED&q=visible&api_key=REDACTED")
            #expect(lines.contains { $0.hasPrefix("info: GET \(url) -> 200 in ") && $0.contains("ms, ") })
            #expect(text.contains("Authorization: REDACTED"))
            #expect(text.contains("X-Custom-Key: REDACTED"))
            #expect(text.contains("Cookie: REDACTED"))
            #expect(text.contains("X-Trace: trace-1"))
        }
    }

    @Test func failuresAreLoggedRedacted() async throws {
        struct Down: GetRoute {
            var path: RoutePath { "x" }
            var query: QueryParameters { ["token": "t-secret"] }
        }
        let capture = LogCapture()
        var api = API(baseURL: "http://user:pw-secret@127.0.0.1:1", client: sharedClient)
        api.observers = [LoggingObserver(logger: capture.logger())]
        _ = await expectAPIError(NoErrorModel.self, .transport) { _ = try await api.send(Down()) }
        let text = capture.all.joined(separator: "\n")
        #expect(text.contains("failed"))
        #expect(!text.contains("t-secret"))
        #expect(!text.contains("pw-secret"))
    }

    @Test func redactionHelpers() {
        #expect(
            Redaction.url("https://u:p@x.io/a?API_KEY=1&q=2&token=&sig#frag", names: Redaction.defaultQueryNames)
                == "https://REDACTED@x.io/a?API_KEY=REDACTED&q=2&token=REDACTED&sig#frag")
        let headers = Redaction.headers(["authorization": "x", "Accept": "y"], names: Redaction.defaultHeaderNames)
        #expect(headers.description == "authorization: REDACTED\nAccept: y")
    }
}
