import Testing
import TrawlTestSupport
import Trawl

@Suite("Stubs", .hangGuard)
struct StubTests {
    struct User: Decodable, Sendable, Equatable {
        let id: Int
        let login: String
    }

    struct Me: GetRoute {
        typealias Output = User
        var path: RoutePath { "me" }
        var keyPath: JSONKeyPath? { "user" }
        var authentication: AuthRequirement { .required }
        var stub: Stub? { .json(#"{"user": {"id": 7, "login": "octocat"}}"#) }
    }

    struct Failing: GetRoute {
        struct Problem: Decodable, Sendable, Equatable { let message: String }
        typealias ErrorModel = Problem
        var stub: Stub? { .json(#"{"message": "rate limited"}"#, status: 429) }
        var path: RoutePath { "limited" }
    }

    struct Broken: GetRoute {
        struct Offline: Error, Equatable {}
        var stub: Stub? { .failure(Offline(), delay: .milliseconds(20)) }
        var path: RoutePath { "broken" }
    }

    struct Unstubbed: GetRoute {
        var path: RoutePath { "nothing" }
    }

    /// No server listens here: anything that reaches the network fails.
    static func offlineAPI(_ stubbing: StubBehavior) -> API {
        API(baseURL: "http://127.0.0.1:1/v1", client: sharedClient, adapters: [BearerTokenAdapter { "t" }],
            stubbing: stubbing)
    }

    @Test func stubsGoThroughAdaptersAndDecoding() async throws {
        let calls = AdapterTests.Calls()
        var api = Self.offlineAPI(.always)
        api.observers = [AdapterTests.Recorder(calls: calls)]
        let me = try await api.send(Me())
        #expect(me == User(id: 7, login: "octocat"))
        #expect(calls.all == ["willSend", "didReceive 200"])
        let raw = try await api.response(for: Me())
        #expect(raw.isStub)
        #expect(raw.url == "http://127.0.0.1:1/v1/me")

        api.adapters = []
        _ = await expectAPIError(NoErrorModel.self, .authenticationRequired) { _ = try await api.send(Me()) }
    }

    @Test func stubbedErrorsAndStatusesActLikeRealOnes() async throws {
        let api = Self.offlineAPI(.always)
        let status = await expectAPIError(Failing.Problem.self, .status) { _ = try await api.send(Failing()) }
        #expect(status?.status == 429)
        #expect(status?.errorModel == Failing.Problem(message: "rate limited"))

        let clock = ContinuousClock()
        let start = clock.now
        let failure = await expectAPIError(NoErrorModel.self, .transport) { _ = try await api.send(Broken()) }
        #expect(failure?.underlying as? Broken.Offline == Broken.Offline())
        #expect(clock.now - start >= .milliseconds(20))
    }

    @Test func stubbingModesGlobalAndPerRoute() async throws {
        struct ForcedStub: GetRoute {
            var path: RoutePath { "forced" }
            var stub: Stub? { .json("[1]") }
            var stubbing: StubBehavior? { .always }
        }
        let always = Self.offlineAPI(.always)
        let missing = await expectAPIError(NoErrorModel.self, .transport) { _ = try await always.send(Unstubbed()) }
        #expect((missing?.underlying as? TrawlError)?.code == .invalidRequest)

        let whenAvailable = Self.offlineAPI(.whenAvailable)
        let me = try await whenAvailable.send(Me())
        #expect(me.id == 7)
        _ = await expectAPIError(NoErrorModel.self, .transport) { _ = try await whenAvailable.send(Unstubbed()) }

        let never = Self.offlineAPI(.never)
        _ = await expectAPIError(NoErrorModel.self, .transport) { _ = try await never.send(Me()) }
        let forced = try await never.send(ForcedStub())
        #expect(forced == [1])
    }
}
