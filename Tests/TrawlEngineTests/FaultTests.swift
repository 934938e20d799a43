import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Faults: each bad input has its exact error", .hangGuard)
struct FaultTests {
    @Test func shortContentLengthIsTruncated() async throws {
        try await withServer { server in
            let error = await expectTrawlError(.truncated) {
                _ = try await Client().send(Request(url: server.url("/short/5000")))
            }
            #expect(error?.curlCode == 18)
            #expect(error?.message == "the body ended after 5000 bytes, before the length the server announced")
            #expect(error?.status == 200)
            #expect(error?.bodyExcerpt == pattern(512))
        }
    }

    @Test func connectionResetMidBody() async throws {
        try await withServer { server in
            let error = await expectTrawlError(.receiveFailed) {
                _ = try await Client().send(Request(url: server.url("/reset/20000")))
            }
            #expect(error?.curlCode == 56)
            #expect(error?.url == server.url("/reset/20000"))
        }
    }

    @Test func malformedChunkedBody() async throws {
        try await withServer { server in
            let error = await expectTrawlError(.receiveFailed) {
                _ = try await Client().send(Request(url: server.url("/badchunk")))
            }
            #expect(error?.curlCode == 56)
            #expect(error?.description.contains("GET \(server.url("/badchunk"))") == true)
        }
    }

    @Test func refusedConnection() async throws {
        let error = try await withRefusingPort { port in
            await expectTrawlError(.connectFailed) {
                _ = try await Client().send(Request(url: "http://127.0.0.1:\(port)/"))
            }
        }
        #expect(error?.curlCode == 7)
        #expect(error?.hint == "check that the server is up and the port is right")
    }

    @Test func invalidURLs() async throws {
        let client = Client()
        _ = await expectTrawlError(.invalidURL) { _ = try await client.send(Request(url: "not a url")) }
        _ = await expectTrawlError(.invalidURL) { _ = try await client.send(Request(url: "http:///path")) }
        _ = await expectTrawlError(.invalidURL) {
            _ = try await client.send(Request(url: "http://127.0.0.1/a\r\nX-Injected: 1"))
        }
    }

    @Test func headWithBodyIsRejected() async throws {
        _ = await expectTrawlError(.invalidRequest) {
            _ = try await Client().send(Request(url: "http://127.0.0.1:9/", method: .head, body: .string("x")))
        }
    }
}
