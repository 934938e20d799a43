import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

@Suite("Adapters and auth", .hangGuard)
struct AdapterTests {
    struct EchoRoute: GetRoute {
        typealias Output = Echo
        var authentication: AuthRequirement = .allowed
        var path: RoutePath { "echo" }
    }

    /// Appends its tag to `X-Order`, or throws.
    struct Tagger: RequestAdapter {
        let tag: String
        var fails = false
        func adapt(_ request: inout Request, context: inout AdapterContext) async throws {
            if fails { throw TagError(tag: tag) }
            request.headers["X-Order"] = (request.headers["X-Order"].map { $0 + "," } ?? "") + tag
        }
    }

    struct TagError: Error, Equatable { let tag: String }

    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []
        var all: [String] { lock.withLock { names } }
        func add(_ name: String) { lock.withLock { names.append(name) } }
    }

    struct Recorder: RequestAdapter, RequestObserver {
        let calls: Calls
        func adapt(_ request: inout Request, context: inout AdapterContext) async throws { calls.add("adapt") }
        func willSend(_ request: Request) { calls.add("willSend") }
        func didReceive(_ response: RawResponse, for request: Request, duration: Duration) {
            calls.add("didReceive \(response.status)")
        }
        func didFail(_ error: any Error, for request: Request) { calls.add("didFail") }
    }

    @Test func adaptersRunInOrderAndTheRouteHookRunsLast() async throws {
        struct Hooked: GetRoute {
            typealias Output = Echo
            var path: RoutePath { "echo" }
            func adjust(_ request: inout Request) throws {
                request.headers["X-Order"] = (request.headers["X-Order"] ?? "") + ",hook"
            }
        }
        try await withServer { server in
            var api = api(server)
            api.adapters = [
                Tagger(tag: "a"), Tagger(tag: "b"), StaticHeadersAdapter(["X-Static": "s"]), Tagger(tag: "c"),
            ]
            let echo = try await api.send(Hooked())
            #expect(echo.header("X-Order") == ["a,b,c,hook"])
            #expect(echo.header("X-Static") == ["s"])
        }
    }

    @Test func anAdapterErrorStopsTheRequestAndReachesTheCaller() async throws {
        try await withServer { server in
            let calls = Calls()
            var api = api(server)
            api.adapters = [Tagger(tag: "a"), Tagger(tag: "b", fails: true), Recorder(calls: calls)]
            api.observers = [Recorder(calls: calls)]
            let error = await expectAPIError(NoErrorModel.self, .adapter) { _ = try await api.send(EchoRoute()) }
            #expect(error?.underlying as? TagError == TagError(tag: "b"))
            #expect(error?.request.headers["X-Order"] == "a")
            #expect(calls.all == ["didFail"])
            #expect(server.stats.requestsServed == 0)
        }
    }

    @Test func observersSeeWillSendThenDidReceive() async throws {
        try await withServer { server in
            let calls = Calls()
            var api = api(server)
            api.adapters = [Recorder(calls: calls)]
            api.observers = [Recorder(calls: calls)]
            _ = try await api.send(EchoRoute())
            #expect(calls.all == ["adapt", "willSend", "didReceive 200"])
        }
    }

    @Test func authRequirementGovernsCredentials() async throws {
        try await withServer { server in
            var api = api(server)
            api.adapters = [BearerTokenAdapter { "t1" }]
            do {
                let echo = try await api.send(EchoRoute(authentication: .allowed))
                #expect(echo.header("Authorization") == ["Bearer t1"])
            }
            do {
                let echo = try await api.send(EchoRoute(authentication: .none))
                #expect(echo.header("Authorization") == [])
            }
            do {
                let echo = try await api.send(EchoRoute(authentication: .required))
                #expect(echo.header("Authorization") == ["Bearer t1"])
            }

            api.adapters = [BearerTokenAdapter { nil }]
            do {
                let echo = try await api.send(EchoRoute(authentication: .allowed))
                #expect(echo.header("Authorization") == [])
            }
            _ = await expectAPIError(NoErrorModel.self, .authenticationRequired) {
                _ = try await api.send(EchoRoute(authentication: .required))
            }
        }
    }

    @Test func basicAuthAndAPIKeys() async throws {
        try await withServer { server in
            var api = api(server)
            api.adapters = [BasicAuthAdapter(username: "Aladdin", password: "open sesame")]
            do {
                let echo = try await api.send(EchoRoute())
                #expect(echo.header("Authorization") == ["Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="])
            }
            api.adapters = [APIKeyAdapter(.header("X-API-Key"), key: "k1")]
            do {
                let echo = try await api.send(EchoRoute())
                #expect(echo.header("x-api-key") == ["k1"])
            }
            api.adapters = [APIKeyAdapter(.query("api_key"), key: "k 2")]
            do {
                let echo = try await api.send(EchoRoute())
                #expect(echo.query == "api_key=k%202")
            }
            do {
                let echo = try await api.send(EchoRoute(authentication: .none))
                #expect(echo.query == "")
            }
        }
    }

    actor Tokens {
        var current = "stale"
        var refreshes = 0
        func refresh() {
            refreshes += 1
            current = "fresh"
        }
    }

    struct Protected: GetRoute {
        typealias Output = JSONValue
        var path: RoutePath { "protected" }
        var query: QueryParameters { ["token": "fresh"] }
    }

    @Test func refreshesOn401AndRetriesOnce() async throws {
        try await withServer { server in
            let tokens = Tokens()
            var api = api(server)
            api.adapters = [BearerTokenAdapter { await tokens.current }]
            api.retrier = RefreshOnUnauthorized { await tokens.refresh() }
            let value = try await api.send(Protected())
            #expect(value == ["ok": true])
            #expect(await tokens.refreshes == 1)
            #expect(server.stats.requestsServed == 2)
        }
    }

    @Test func aSecond401IsNotRetried() async throws {
        try await withServer { server in
            let tokens = Tokens()
            var api = api(server)
            api.adapters = [BearerTokenAdapter { "never-valid" }]
            api.retrier = RefreshOnUnauthorized { await tokens.refresh() }
            let error = await expectAPIError(NoErrorModel.self, .status) { _ = try await api.send(Protected()) }
            #expect(error?.status == 401)
            #expect(await tokens.refreshes == 1)
            #expect(server.stats.requestsServed == 2)
        }
    }
}
