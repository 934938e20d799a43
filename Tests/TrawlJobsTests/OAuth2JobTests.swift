import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@testable import Trawl
@testable import TrawlJobs

@Suite("Jobs with OAuth2 client credentials", .hangGuard)
struct OAuth2JobTests {
    static let environment = ["OAUTH_ID": "app-7", "OAUTH_SECRET": "sekrit-Value-9"]

    /// The realm's counters: `{"token_requests":N,"auth":[…],"scopes":[…],"rejected":M}`.
    func stats(_ realm: String, _ server: TestServer) async throws -> [String: Any] {
        let response = try await Client().send(Request(url: server.url("/oauth/stats?realm=\(realm)")))
        return try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
    }

    func job(_ server: TestServer, realm: String, tokenQuery: String, items: String, extra: String = "") -> String {
        """
        settings:
          per_host: 8
          backoff_ms: 5
          auth:
            type: oauth2_client_credentials
            token_url: "\(server.url("/oauth/token?realm=\(realm)&id=${OAUTH_ID}&secret=${OAUTH_SECRET}"))\(tokenQuery)"
            client_id: ${OAUTH_ID}
            client_secret: ${OAUTH_SECRET}
            scope: items:read
            client_auth: post
        sources:
          - name: things
            url: "\(server.url("/oauth/items?realm=\(realm)\(items)"))"
            paginate: {style: page, total_pages: total_pages}
            items: items
        \(extra)
        """
    }

    @Test("a token refreshed mid-walk is requested once with 8 pages in flight, and no secret is stored")
    func refreshedOnceWithPagesInFlight() async throws {
        try await TestServer.with { server in
            let realm = "job-\(UUID().uuidString.prefix(8))"
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // 40 pages, each token good for 25 requests: the pages in flight when it runs out are answered 401,
            // and one new token (answered after 100 ms, while more pages wait) serves them all and the rest.
            let text = job(
                server, realm: realm, tokenQuery: "&delay_ms=100", items: "&n=400&per_page=10&uses=25&delay=20")
            let job = try Job.parse(text, environment: Self.environment)
            var options = JobRunOptions(
                output: .file(directory + "/out.jsonl"), stateDirectory: directory + "/state",
                environment: Self.environment)
            options.pagesInFlightPerUnit = 8
            let report = try await JobRunner(job: job, options: options).run()
            #expect(report.complete)
            #expect(report.failures.isEmpty)
            #expect(fileText(directory + "/out.jsonl") == expectedLines(0..<400))
            let counts = try await stats(realm, server)
            #expect(counts["token_requests"] as? Int == 2)
            #expect(counts["auth"] as? [String] == ["post", "post"])
            #expect(counts["scopes"] as? [String] == ["items:read", "items:read"])
            let rejected = counts["rejected"] as? Int ?? 0
            #expect((1...8).contains(rejected))
            #expect(server.stats.maxInFlight >= 4)
            // Neither the secret nor a token is in the state directory.
            let state = directory + "/state"
            for file in try FileManager.default.subpathsOfDirectory(atPath: state) {
                let content = fileText(state + "/" + file)
                #expect(!content.contains("sekrit-Value-9"), "\(file)")
                #expect(!content.contains("\(realm)-1") && !content.contains("\(realm)-2"), "\(file)")
            }
        }
    }

    @Test("bad client credentials fail the units with the server's error and token_url, once, without the secret")
    func badCredentials() async throws {
        try await TestServer.with { server in
            let realm = "jobbad-\(UUID().uuidString.prefix(8))"
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // The server expects another secret than the one the job sends.
            let text = job(server, realm: realm, tokenQuery: "", items: "&n=30&per_page=10")
                .replacingOccurrences(of: "&secret=${OAUTH_SECRET}", with: "&secret=another")
                .replacingOccurrences(of: "items: items\n", with: "items: items\n    matrix: {n: [1, 2, 3]}\n")
                .replacingOccurrences(of: "&n=30", with: "&n={n}0")
            let job = try Job.parse(text, environment: Self.environment)
            let options = JobRunOptions(output: .file(directory + "/out.jsonl"), environment: Self.environment)
            let report = try await JobRunner(job: job, options: options).run()
            #expect(!report.complete)
            #expect(report.units.failed == 3)
            #expect(report.failures.count == 3)
            for failure in report.failures {
                #expect(failure.error.contains("invalid_client"), "\(failure.error)")
                #expect(failure.error.contains("/oauth/token"), "\(failure.error)")
                #expect(failure.error.contains("check client_id and client_secret"), "\(failure.error)")
                #expect(!failure.error.contains("sekrit-Value-9"), "\(failure.error)")
            }
            #expect(try await stats(realm, server)["token_requests"] as? Int == 1)
            // auth:'s ${NAME} values are among the job's secrets: whatever text holds them is redacted.
            let redactor = job.redactor(environment: Self.environment)
            #expect(redactor.redact("id app-7, secret sekrit-Value-9") == "id ${OAUTH_ID}, secret ${OAUTH_SECRET}")
        }
    }

    @Test("a page the origin guard stripped of credentials (another origin) gets no token")
    func noTokenAcrossOrigins() async throws {
        try await TestServer.with { server in
            let realm = "origin-\(UUID().uuidString.prefix(8))"
            let oauth = try OAuth2ClientCredentialsAdapter(
                tokenURL: server.url("/oauth/token?realm=\(realm)&id=a&secret=b"), clientID: "a", clientSecret: "b",
                client: Client())
            let authorizer = PageAuthorizer(adapter: .success(oauth))
            let same = try await authorizer.authorize(Request(url: server.url("/oauth/items")))
            #expect(same.headers["Authorization"] == "Bearer \(realm)-1")
            var elsewhere = Request(url: "http://127.0.0.2:9/items")
            elsewhere.strippedHeaders = ["authorization"]
            #expect(try await authorizer.authorize(elsewhere).headers["Authorization"] == nil)
        }
    }

    @Test("auth: errors name the key: type, client_auth, an http token URL, an unset variable")
    func authKeyErrors() throws {
        func problem(_ lines: [String], environment: [String: String] = OAuth2JobTests.environment) -> String {
            let base = [
                "type: oauth2_client_credentials", "client_id: ${OAUTH_ID}", "client_secret: ${OAUTH_SECRET}",
            ].filter { line in
                !lines.contains { $0.prefix(while: { $0 != ":" }) == line.prefix(while: { $0 != ":" }) }
            }
            let text = """
                sources:
                  - name: things
                    url: https://api.example.com/items
                    paginate: link
                    items: $
                    auth:

                """ + (base + lines).map { "      " + $0 + "\n" }.joined()
            do {
                _ = try Job.parse(text, environment: environment)
                return "parsed"
            } catch {
                return error.description
            }
        }
        let url = "token_url: https://a.example.com/t"
        #expect(problem([url, "type: bearer"]).contains("unknown auth type"))
        #expect(problem([url, "client_auth: jwt"]).contains("unknown client_auth 'jwt'"))
        let http = problem(["token_url: http://a.example.com/t"])
        #expect(http.contains("sources[0].auth.token_url") && http.contains("must be https"), "\(http)")
        #expect(problem(["token_url: http://127.0.0.1:9/t", "client_auth: post"]) == "parsed")
        #expect(problem([url], environment: [:]).contains("environment variable OAUTH_ID is not set"))
        #expect(problem([]).contains("token_url is missing"))
    }
}
