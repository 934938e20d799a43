import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// `/oauth/items` behind the test server's token endpoint.
struct OAuthThings: GetRoute {
    typealias Output = EmptyResponse
    let realm: String
    let count: Int
    var uses: Int = 1000
    var authentication: AuthRequirement { .required }
    var path: RoutePath { "oauth/items" }
    var query: QueryParameters { ["realm": .string(realm), "n": .int(count), "per_page": 10, "uses": .int(uses)] }
}

/// The token endpoint's counters for one realm.
struct OAuthStats: Decodable {
    var token_requests: Int
    var auth: [String]
    var scopes: [String]
    var rejected: Int

    static func of(_ realm: String, _ server: TestServer) async throws -> OAuthStats {
        let response = try await sharedClient.send(Request(url: server.url("/oauth/stats?realm=\(realm)")))
        return try JSONDecoder().decode(OAuthStats.self, from: Data(response.body))
    }
}

@Suite("OAuth2 client credentials", .hangGuard)
struct OAuth2ClientCredentialsTests {
    func adapter(
        _ server: TestServer, realm: String, secret: String = "s3cr3t+/ key", query: String = "",
        auth: OAuth2ClientCredentialsAdapter.ClientAuthentication = .basic, scope: String? = "read items"
    ) throws -> OAuth2ClientCredentialsAdapter {
        let url = server.url("/oauth/token?realm=\(realm)&id=app%3A1&secret=s3cr3t%2B%2F%20key\(query)")
        return try OAuth2ClientCredentialsAdapter(
            tokenURL: url, clientID: "app:1", clientSecret: secret, scope: scope, clientAuthentication: auth,
            client: sharedClient)
    }

    @Test("basic and post client authentication both reach the token endpoint, with the scope",
        arguments: [OAuth2ClientCredentialsAdapter.ClientAuthentication.basic, .post])
    func clientAuthentication(_ auth: OAuth2ClientCredentialsAdapter.ClientAuthentication) async throws {
        try await withServer { server in
            let realm = "auth-\(auth.rawValue)-\(UUID().uuidString.prefix(8))"
            let oauth = try adapter(server, realm: realm, auth: auth)
            let token = try await oauth.token()
            #expect(token == "\(realm)-1")
            let stats = try await OAuthStats.of(realm, server)
            #expect(stats.token_requests == 1)
            #expect(stats.auth == [auth.rawValue])
            #expect(stats.scopes == ["read items"])
            let basic = server.requestLog.filter { $0.target.hasPrefix("/oauth/token") }
                .map { $0.headers["authorization"] }
            #expect(basic.count == 1)
            #expect(((basic.first ?? nil)?.hasPrefix("Basic ") ?? false) == (auth == .basic))
        }
    }

    @Test("one token request serves every request waiting for a token")
    func singleFlight() async throws {
        try await withServer { server in
            let realm = "flight-\(UUID().uuidString.prefix(8))"
            let oauth = try adapter(server, realm: realm, query: "&delay_ms=150")
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 { group.addTask { try await oauth.token() } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(tokens) == ["\(realm)-1"])
            #expect(try await OAuthStats.of(realm, server).token_requests == 1)
        }
    }

    @Test("a token is asked for again before expires_in runs out, not before its margin")
    func expiryRefresh() async throws {
        try await withServer { server in
            let realm = "expiry-\(UUID().uuidString.prefix(8))"
            // expires_in 4 s, margin 1 s: renewed 3 s after it was issued.
            let url = server.url("/oauth/token?realm=\(realm)&id=app&secret=pw&ttl=4")
            let oauth = try OAuth2ClientCredentialsAdapter(
                tokenURL: url, clientID: "app", clientSecret: "pw", refreshMargin: .seconds(1), client: sharedClient)
            let start = ContinuousClock.now
            let first = try await oauth.token()
            let again = try await oauth.token()
            // On a machine so loaded that 3 s passed, the token was rightly renewed already.
            if ContinuousClock.now - start < .milliseconds(2900) { #expect(again == first) }
            try await Task.sleep(for: .milliseconds(3100))
            let second = try await oauth.token()
            #expect(second != first)
            #expect(try await OAuthStats.of(realm, server).token_requests == (again == first ? 2 : 3))
        }
    }

    @Test("a 401 on a page gets one new token and the walk goes on; a fresh token rejected again fails the page")
    func refreshOnUnauthorized() async throws {
        try await withServer { server in
            let realm = "401-\(UUID().uuidString.prefix(8))"
            var api = api(server)
            let oauth = try adapter(server, realm: realm)
            api.adapters = [oauth]
            api.retrier = oauth
            var items: [Thing] = []
            // Each token is good for 2 pages: pages 3 and 5 are answered 401 once, then sent with a new token.
            for try await item in try await api.items(
                of: OAuthThings(realm: realm, count: 50, uses: 2), as: Thing.self, at: "items",
                style: .page(totalPages: "total_pages"), serial: true)
            {
                items.append(item)
            }
            #expect(items == expected(0..<50))
            var stats = try await OAuthStats.of(realm, server)
            #expect(stats.token_requests == 3)
            #expect(stats.rejected == 2)

            // A token that is never accepted: one refresh, then the page fails with the 401.
            let never = "never-\(UUID().uuidString.prefix(8))"
            let strict = try adapter(server, realm: never)
            api.adapters = [strict]
            api.retrier = strict
            await #expect(throws: PaginationError.self) {
                for try await _ in try await api.items(
                    of: OAuthThings(realm: never, count: 50, uses: 0), as: Thing.self, at: "items",
                    style: .page(totalPages: "total_pages"), serial: true) {}
            }
            stats = try await OAuthStats.of(never, server)
            #expect(stats.token_requests == 2)
            #expect(stats.rejected == 2)
        }
    }

    @Test("a late 401 for a token already replaced keeps the new token")
    func lateUnauthorized() async throws {
        try await withServer { server in
            let realm = "late-\(UUID().uuidString.prefix(8))"
            let oauth = try adapter(server, realm: realm)
            let first = try await oauth.token()
            oauth.invalidate(first)
            let second = try await oauth.token()
            #expect(second != first)
            oauth.invalidate(first)  // another page rejected with the first token answers late
            #expect(try await oauth.token() == second)
            #expect(try await OAuthStats.of(realm, server).token_requests == 2)
        }
    }

    @Test("bad client credentials fail with the server's error and token_url, never the secret, and stick")
    func badCredentials() async throws {
        try await withServer { server in
            let realm = "bad-\(UUID().uuidString.prefix(8))"
            let oauth = try adapter(server, realm: realm, secret: "wrong-secret-value")
            do {
                _ = try await oauth.token()
                Issue.record("expected a refusal")
            } catch let error as TrawlError {
                let text = String(describing: error)
                #expect(text.contains("invalid_client"))
                #expect(text.contains("HTTP 401"))
                #expect(text.contains("/oauth/token"))
                #expect(text.contains("check client_id and client_secret"))
                #expect(!text.contains("wrong-secret-value"))
                #expect(error.status == 401)
            }
            await #expect(throws: TrawlError.self) { _ = try await oauth.token() }
            #expect(try await OAuthStats.of(realm, server).token_requests == 1)
        }
    }

    @Test("a token response that is not JSON, or too large, says so about the token endpoint, not about pages")
    func hostileTokenResponses() async throws {
        func answer(_ body: String) -> [UInt8] {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            return Array((head + body).utf8)
        }
        let huge = #"{"access_token":""# + String(repeating: "x", count: 200_000) + #"","expires_in":60}"#
        try await CannedServer.with(["/garbage": answer("<html>no</html>"), "/huge": answer(huge)]) { server in
            for (path, expected) in [("/garbage", "is not JSON"), ("/huge", "token response is over 64 KB")] {
                let oauth = try OAuth2ClientCredentialsAdapter(
                    tokenURL: server.url(path), clientID: "a", clientSecret: "b", client: sharedClient)
                do {
                    _ = try await oauth.token()
                    Issue.record("\(path): expected a failure")
                } catch let error as TrawlError {
                    let text = String(describing: error)
                    #expect(text.contains(expected), "\(text)")
                    #expect(!text.contains("--max-page-bytes") && !text.contains("curl 23"), "\(text)")
                }
            }
        }
    }

    @Test("the token URL must be https, except on a loopback host")
    func tokenURLScheme() throws {
        #expect(OAuth2ClientCredentialsAdapter.tokenURLProblem("https://auth.example.com/token") == nil)
        #expect(OAuth2ClientCredentialsAdapter.tokenURLProblem("http://127.0.0.1:8080/token") == nil)
        #expect(OAuth2ClientCredentialsAdapter.tokenURLProblem("http://localhost/token") == nil)
        #expect(OAuth2ClientCredentialsAdapter.tokenURLProblem("http://[::1]:9/token") == nil)
        let problem = OAuth2ClientCredentialsAdapter.tokenURLProblem("http://auth.example.com/token")
        #expect(problem?.contains("must be https") == true)
        #expect(throws: TrawlError.self) {
            try OAuth2ClientCredentialsAdapter(
                tokenURL: "http://auth.example.com/token", clientID: "a", clientSecret: "b", client: sharedClient)
        }
    }

    @Test("the adapter's redact hides the tokens it handed out and the secret")
    func redaction() async throws {
        try await withServer { server in
            let realm = "redact-\(UUID().uuidString.prefix(8))"
            let oauth = try adapter(server, realm: realm)
            let token = try await oauth.token()
            let text = oauth.redact("sent Bearer \(token) with s3cr3t+/ key")
            #expect(text == "sent Bearer REDACTED with REDACTED")
        }
    }
}
