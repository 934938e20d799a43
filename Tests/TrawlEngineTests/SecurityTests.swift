import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Secure defaults", .hangGuard)
struct SecurityTests {
    @Test func crlfInHeaderValueIsRejectedBeforeSending() async throws {
        try await withServer { server in
            var request = Request(url: server.url("/echo"))
            request.headers = ["X-Evil": "a\r\nX-Injected: 1"]
            let error = await expectTrawlError(.invalidHeader) { _ = try await Client().send(request) }
            #expect(error?.message == "the value of header 'X-Evil' contains control character U+000D (CR) at byte 1")
            #expect(error?.description.contains("X-Injected") == false)  // the value is never echoed
            #expect(server.stats.requestsServed == 0)
        }
    }

    @Test func controlCharactersInNamesAndValuesAreRejected() async throws {
        let client = Client()
        let cases: [(String, String, String)] = [
            ("X-A", "line\nfeed", "U+000A (LF) at byte 4"),
            ("X-A", "nul\u{0}byte", "U+0000 (NUL) at byte 3"),
            ("X-A", "bell\u{7}", "U+0007 at byte 4"),
            ("X-A", "del\u{7F}", "U+007F (DEL) at byte 3"),
        ]
        for (name, value, detail) in cases {
            var request = Request(url: "http://127.0.0.1:9/")
            request.headers = HTTPHeaders([(name, value)])
            let error = await expectTrawlError(.invalidHeader) { _ = try await client.send(request) }
            #expect(error?.message.hasSuffix(detail) == true, "\(String(describing: error))")
        }
        for name in ["X A", "X:A", "X\r\nY", "", "Ünicode"] {
            var request = Request(url: "http://127.0.0.1:9/")
            request.headers = HTTPHeaders([(name, "v")])
            _ = await expectTrawlError(.invalidHeader) { _ = try await client.send(request) }
        }
        var tab = Request(url: "http://127.0.0.1:9/")
        tab.headers = ["X-Tab": "a\tb"]  // horizontal tab is legal
        _ = await expectTrawlError(.connectFailed) { _ = try await client.send(tab) }
    }

    @Test func invalidDefaultHeadersFailEveryRequest() async throws {
        var config = Client.Configuration()
        config.defaultHeaders = ["X-Bad": "a\rb"]
        let error = await expectTrawlError(.invalidHeader) {
            _ = try await Client(configuration: config).send(Request(url: "http://127.0.0.1:9/"))
        }
        #expect(error?.message.contains("client's default headers") == true)
    }

    @Test func onlyHTTPAndHTTPSAreAllowed() async throws {
        let client = Client()
        for url in ["ftp://127.0.0.1/x", "file:///etc/passwd", "gopher://127.0.0.1/", "dict://127.0.0.1/"] {
            let error = await expectTrawlError(.unsupportedScheme) { _ = try await client.send(Request(url: url)) }
            #expect(error?.hint == "Trawl speaks only http and https")
        }
    }

    @Test func sigpipeIsIgnoredOnceAClientExists() {
        _ = Client()
        var action = sigaction()
        #expect(sigaction(SIGPIPE, nil, &action) == 0)
        // SIG_IGN is the handler value 1; a write to a dead socket must not kill the process.
        #expect(unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == 1)
    }

    @Test func sensitiveHeaderMatchingIsCaseInsensitive() {
        var headers: HTTPHeaders = ["AUTHORIZATION": "x", "Cookie": "y", "Keep": "z"]
        headers.remove(names: RedirectPolicy.credentialHeaders)
        #expect(headers.count == 1 && headers["keep"] == "z")
    }
}
