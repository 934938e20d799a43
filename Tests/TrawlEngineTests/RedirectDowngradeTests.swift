import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

// A redirect that changes only the scheme (https to http on the same host and port, or the default ports the
// other way round) is a change of origin: the credentials must not follow it onto plain HTTP.

/// nginx with TLS on one port that also answers plain HTTP on that same port: nginx reads a plain request sent to
/// its TLS port whole and hands it to `error_page 497`, which here answers with the request's credentials, so a test
/// sees exactly what reached the http side.
private enum SchemeSwitchingServer {
    /// The plain-HTTP answer: path, then every header a redirect must strip or keep, `[]` when absent.
    static let plainReply =
        "plain $uri auth=[$http_authorization] cookie=[$http_cookie] proxy=[$http_proxy_authorization] "
        + "key=[$http_x_api_key] default=[$http_x_default_secret] keep=[$http_x_keep]"

    static func start() async throws -> NginxTLSServer {
        try await NginxTLSServer { port in
            """
            error_page 497 = @plain;
            location = /start { return 302 http://127.0.0.1:\(port)/landing; }
            location / { return 200 "tls $uri auth=[$http_authorization]"; }
            location @plain { return 200 "\(plainReply)"; }
            """
        }
    }
}

@Suite("Redirects that change only the scheme strip credentials", .hangGuard)
struct RedirectDowngradeTests {
    /// Pairs of URLs that differ in scheme only: the same host and the same port once defaults are filled in.
    static let schemeOnlyChanges: [(from: String, to: String)] = [
        ("https://api.example:8443/a", "http://api.example:8443/b"),
        ("https://api.example/a", "http://api.example:443/b"),
        ("https://api.example:80/a", "http://api.example/b"),
        ("http://api.example/a", "https://api.example:80/b"),
        ("http://api.example:443/a", "https://api.example/b"),
    ]

    @Test func aSchemeChangeAloneCrossesTheOrigin() {
        for (from, to) in Self.schemeOnlyChanges {
            #expect(Origin(url: from)?.host == Origin(url: to)?.host)
            #expect(Origin(url: from)?.port == Origin(url: to)?.port, "\(from) and \(to) share a port")
            #expect(RedirectStep.next(status: 302, method: .get, from: from, location: to)
                == .follow(url: to, method: .get, keepsBody: true, crossesOrigin: true), "\(from) -> \(to)")
        }
    }

    @Test func theTrackerStripsCredentialsOnASchemeChangeAlone() throws {
        var config = Client.Configuration()
        config.sensitiveHeaders = ["X-Default-Secret"]
        for (from, to) in Self.schemeOnlyChanges {
            var request = Request(url: from)
            request.headers = [
                "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic x",
                "X-Api-Key": "k", "X-Keep": "visible",
            ]
            request.sensitiveHeaders = ["x-api-key"]
            var tracker = RedirectTracker(request: request, configuration: config)
            let outcome = TransferOutcome(
                head: ResponseHead(status: 302, headers: ["Location": to], url: from), body: [], redirectURL: to)
            let next = try #require(try tracker.next(after: outcome, request: request))
            #expect(next.url == to)
            for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key"] {
                #expect(next.headers[name] == nil, "\(name) follows \(from) -> \(to)")
            }
            #expect(next.headers["X-Keep"] == "visible")
            // The client's default headers are left out by name when the request is prepared.
            #expect(next.strippedHeaders.isSuperset(of: ["authorization", "cookie", "x-api-key", "x-default-secret"]))
        }
    }

    @Test("https://127.0.0.1:P/ redirecting to http://127.0.0.1:P/: nothing secret reaches the http side")
    func downgradeOnTheSamePortEndToEnd() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"), "scripts/ensure-deps installs nginx")
        let server = try await SchemeSwitchingServer.start()
        var config = Client.Configuration()
        config.tls.caFile = server.certificatePath
        config.defaultHeaders = ["X-Default-Secret": "d"]
        config.sensitiveHeaders = ["x-default-secret"]
        let client = Client(configuration: config)
        var request = Request(url: "https://127.0.0.1:\(server.port)/start")
        request.headers = [
            "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic x",
            "X-Api-Key": "k", "X-Keep": "visible",
        ]
        request.sensitiveHeaders = ["X-API-KEY"]
        let result = await Result { try await client.send(request) }
        await server.stop()
        let response = try result.get()
        #expect(response.status == 200)
        #expect(response.url == "http://127.0.0.1:\(server.port)/landing")
        #expect(response.head.redirects == ["http://127.0.0.1:\(server.port)/landing"])
        #expect(response.bodyText
            == "plain /landing auth=[] cookie=[] proxy=[] key=[] default=[] keep=[visible]")
    }
}
