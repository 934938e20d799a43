import Testing
import TrawlTestSupport
import Trawl

// This file imports Trawl alone (no TrawlEngine, no TrawlJSON): every engine and JSON type below must reach it
// through Trawl's re-exports. The test server comes through Support.swift's `withServer` and `Echo`.

@Suite("Trawl module", .hangGuard)
struct ReExportTests {
    /// `import Trawl` alone must give users the engine's types (routes and pagination build on them), and they
    /// must be the working engine: a request sent with the re-exported client reaches the server as built, its
    /// body decodes with the re-exported JSON layer, and a failure is the engine's error.
    @Test func engineTypesAreReachableThroughTrawl() async throws {
        try await withServer { server in
            var request = Request(
                url: server.url("/echo?via=trawl"), method: .post, body: .string("{}", contentType: "application/json"))
            request.headers.add("Accept", "application/json")
            #expect(request.headers["accept"] == "application/json")
            let response = try await Client().send(request)
            #expect(response.status == 200)
            let echo = try JSONItemDecoder().decode(Echo.self, from: response.body)
            #expect(echo.method == "POST")
            #expect(echo.query == "via=trawl")
            #expect(echo.body == "{}")
            #expect(echo.header("Accept") == ["application/json"])
            #expect(echo.header("Content-Type") == ["application/json"])
            #expect(try JSONItemDecoder().decode(String.self, from: response.body, at: "method") == "POST")

            var slow = Request(url: server.url("/delay/10000"))
            slow.timeouts.total = .milliseconds(200)
            do {
                _ = try await Client().send(slow)
                Issue.record("a 10 s answer arrived within a 200 ms total timeout")
            } catch let error as TrawlError {
                #expect(error.code == .timeout, "\(error)")
                #expect(error.code != TrawlError.Code.stalled)
            }
        }
    }
}
