import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("a failing proxy is named as the proxy; a redirect to nowhere is an error", .hangGuard)
struct ProxyAndLocationTests {
    @Test("the proxy for a URL, as libcurl picks it from the environment, credentials hidden")
    func proxyForURL() {
        let environment = [
            "http_proxy": "http://p1:3128", "HTTPS_PROXY": "http://user:secret@p2:3128",
            "no_proxy": "internal.test,.corp",
        ]
        func proxy(_ url: String, _ environment: [String: String]) -> String? {
            ProxyEnvironment.proxy(for: url, environment: environment)
        }
        #expect(proxy("http://api.test/x", environment) == "http://p1:3128")
        #expect(proxy("https://api.test/x", environment) == "http://REDACTED@p2:3128")
        #expect(proxy("http://internal.test/x", environment) == nil)
        #expect(proxy("http://a.corp/x", environment) == nil)
        #expect(proxy("http://api.test/x", ["HTTP_PROXY": "http://p:1"]) == nil)
        #expect(proxy("http://api.test/x", ["ALL_PROXY": "http://p:1"]) == "http://p:1")
        #expect(proxy("http://api.test/x", ["all_proxy": "http://p:1", "no_proxy": "*"]) == nil)
    }

    @Test("a followed redirect whose Location is empty fails saying so; not followed, it is returned")
    func emptyLocation() async throws {
        let responses: [String: [UInt8]] = [
            "/nowhere": CannedServer.response("HTTP/1.1 302 Found", ["Location: ", "Content-Length: 0"]),
            "/blank": CannedServer.response("HTTP/1.1 301 Moved", ["Location:   ", "Content-Length: 0"]),
        ]
        try await CannedServer.with(responses) { server in
            for path in ["/nowhere", "/blank"] {
                let url = server.url(path)
                let error = await expectTrawlError(.receiveFailed) { _ = try await Client().send(Request(url: url)) }
                #expect(error?.message.hasSuffix("has an empty Location") == true, "\(String(describing: error))")
                #expect(error?.url == url)
            }
            var request = Request(url: server.url("/nowhere"))
            request.redirects = RedirectPolicy.none
            let response = try await Client().send(request)
            #expect(response.status == 302)
        }
    }
}
