import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

@Suite("Routes and pages: relative next URLs, HEAD parameters, base URL overrides, unrepeatable bodies",
    .hangGuard)
struct RouteEdgeCaseTests {
    @Test("a relative next URL in the body resolves against the page's URL")
    func relativeNextURL() async throws {
        try await withServer { server in
            let request = Request(url: server.url("/paged/next?per_page=10&n=25&relative=1"))
            let paginator = Paginator(
                Thing.self, client: sharedClient, request: request, items: "results", style: .nextURL(at: "next"))
            var pages: [Page<Thing>] = []
            for try await page in paginator.pages { pages.append(page) }
            #expect(pages.flatMap(\.items) == expected(0..<25))
            #expect(pages.count == 3)
            #expect(pages.dropFirst().allSatisfy { page in
                guard case .url(let url) = page.position else { return false }
                return url.hasPrefix(server.baseURL + "/paged/next?page=")
            })
            #expect(server.requestLog.map(\.target).allSatisfy { $0.hasPrefix("/paged/next?") })
        }
    }

    @Test("with .automatic encoding a HEAD route's parameters go in the query, with no body")
    func headParameters() async throws {
        struct Probe: HeadRoute {
            typealias Output = EmptyResponse
            var path: RoutePath { "headers" }
            var parameters: QueryParameters { ["X-Probe": "yes", "ids": [1, 2]] }
        }
        try await withServer { server in
            let api = api(server)
            let request = try api.request(for: Probe())
            #expect(request.method == .head)
            #expect(request.url == server.url("/headers?X-Probe=yes&ids=1&ids=2"))
            #expect(request.body == nil)
            let response = try await api.response(for: Probe())
            #expect(response.status == 200)
            #expect(response.headers["X-Probe"] == "yes")
            #expect(response.body.isEmpty)
        }
    }

    @Test("a route's own base URL replaces the API's")
    func baseURLOverride() async throws {
        try await withServer { apiServer in
            try await withServer { other in
                struct Elsewhere: GetRoute {
                    let baseURL: String?
                    var path: RoutePath { "echo" }
                    var query: QueryParameters { ["from": "route"] }
                }
                let api = api(apiServer)
                let route = Elsewhere(baseURL: other.url("/v2/"))
                #expect(try api.request(for: route).url == other.url("/v2/echo?from=route"))
                let echo = try await api.send(Elsewhere(baseURL: other.baseURL))
                #expect(echo["path"] == "/echo")
                #expect(other.stats.requestsServed == 1)
                #expect(apiServer.stats.requestsServed == 0)
            }
        }
    }

    struct Upload: PostRoute {
        typealias Output = EmptyResponse
        let form: MultipartForm
        var path: RoutePath { "protected" }
        var query: QueryParameters { ["token": "s3cret"] }
        var body: RouteBody { .multipart(form) }
    }

    func form(streamed: Bool) -> MultipartForm {
        var form = MultipartForm()
        form.append(name: "title", value: "report")
        let bytes = Array("line 1\nline 2\n".utf8)
        if streamed {
            form.append(
                name: "log", stream: AsyncStream { continuation in
                    continuation.yield(bytes)
                    continuation.finish()
                }, length: Int64(bytes.count), filename: "app.log")
        } else {
            form.append(name: "log", bytes: bytes, filename: "app.log")
        }
        return form
    }

    @Test("after a 401, a multipart body with a streamed part fails clearly instead of being resent without it")
    func streamedPartIsNotRetried() async throws {
        try await withServer { server in
            var api = api(server)
            let tokens = RotatingToken()
            api.adapters = [BearerTokenAdapter { tokens.current }]
            api.retrier = RefreshOnUnauthorized { tokens.refresh() }
            #expect(!form(streamed: true).isReplayable)
            #expect(!RouteBody.multipart(form(streamed: true)).isReplayable)

            let error = await expectAPIError(NoErrorModel.self, .status) {
                _ = try await api.send(Upload(form: form(streamed: true)))
            }
            #expect(error?.status == 401)
            let reason = try #require(error?.underlying as? TrawlError)
            #expect(reason.code == .invalidRequest)
            #expect(reason.message.contains("can be sent only once"))
            #expect(tokens.refreshes == 1)  // the credentials were refreshed for the next request
            #expect(server.stats.requestsServed == 1)  // and nothing incomplete was sent

            // The same form with the part in memory is read afresh for the retry, which succeeds.
            #expect(form(streamed: false).isReplayable)
            _ = try await api.send(Upload(form: form(streamed: false)))
            #expect(server.stats.requestsServed == 2)
        }
    }

    @Test("a multipart body without streamed parts is resent whole after a 401")
    func bufferedPartIsRetried() async throws {
        try await withServer { server in
            var api = api(server)
            let tokens = RotatingToken()
            api.adapters = [BearerTokenAdapter { tokens.current }]
            api.retrier = RefreshOnUnauthorized { tokens.refresh() }
            _ = try await api.send(Upload(form: form(streamed: false)))
            #expect(tokens.refreshes == 1)
            #expect(server.stats.requestsServed == 2)
            #expect(server.requestLog.map(\.status) == [401, 200])
        }
    }
}
