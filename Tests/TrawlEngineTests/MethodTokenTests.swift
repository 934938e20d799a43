import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("The method is an RFC 9110 token: nothing else reaches the request line", .hangGuard)
struct MethodTokenTests {
    @Test("a method that would smuggle a second request is refused and nothing is sent")
    func smuggledRequestIsRefused() async throws {
        try await withServer { server in
            let client = Client()
            let hostile = [
                "GET /EVIL HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET", "GET /EVIL", "", "GET\n", "G\u{0}T", "PÖST", "GET\t",
            ]
            for method in hostile {
                let request = Request(url: server.url("/echo"), method: HTTPMethod(rawValue: method))
                let error = await expectTrawlError(.invalidRequest) { _ = try await client.send(request) }
                #expect(error?.message == "the method is not a token", "\(method.debugDescription)")
                #expect(error?.description.contains("\r") == false)
            }
            #expect(server.stats.requestsServed == 0)
        }
    }

    @Test("tokens beyond the common methods are sent as given")
    func tokensAreSent() async throws {
        try await withServer { server in
            for method in ["PROPFIND", "M-SEARCH", "PATCH"] {
                let request = Request(url: server.url("/echo"), method: HTTPMethod(rawValue: method))
                let response = try await Client().send(request)
                #expect(response.status == 200, "\(method)")
            }
            #expect(server.stats.requestsServed == 3)
        }
    }
}
