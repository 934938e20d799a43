import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

/// Heads no HTTP server sends: no status line, a malformed one, a header line of megabytes, a head of
/// hundreds of kilobytes. Each is an error that says what it is, never a libcurl internal ("the scheme is not
/// supported", "Out of memory").
@Suite("hostile heads: not an HTTP response, header too large", .hangGuard)
struct HostileHeadTests {
    static let responses: [String: [UInt8]] = [
        "/http09": Array("hello world\n".utf8),
        "/ssh": Array("SSH-2.0-OpenSSH_9.2\r\n".utf8),
        "/status-letters": CannedServer.response("HTTP/1.1 abc OK", ["Content-Length: 2"], body: Array("hi".utf8)),
        "/status-version": CannedServer.response("HTTP/7.1 200 OK", ["Content-Length: 2"], body: Array("hi".utf8)),
        "/status-short": CannedServer.response("HTTP/1.1 20 OK", ["Content-Length: 2"], body: Array("hi".utf8)),
        "/status-long": CannedServer.response("HTTP/1.1 2000 OK", ["Content-Length: 2"], body: Array("hi".utf8)),
        "/huge-line": CannedServer.response(
            "HTTP/1.1 200 OK", ["X-Big: " + String(repeating: "a", count: 10 << 20), "Content-Length: 2"],
            body: Array("hi".utf8)),
        "/huge-head": CannedServer.response(
            "HTTP/1.1 200 OK",
            (0..<400).map { "X-H\($0): " + String(repeating: "b", count: 1000) } + ["Content-Length: 2"],
            body: Array("hi".utf8)),
    ]

    @Test("no status line or a malformed one says 'not an HTTP response', never 'the scheme is not supported'",
          arguments: ["/http09", "/ssh", "/status-letters", "/status-version", "/status-short", "/status-long"])
    func notHTTP(path: String) async throws {
        try await CannedServer.with(Self.responses) { server in
            let url = server.url(path)
            let error = await expectTrawlError(.invalidBody) { _ = try await Client().send(Request(url: url)) }
            #expect(error?.message.contains("not an HTTP response") == true, "\(String(describing: error))")
            #expect(error?.description.contains("scheme") == false, "\(String(describing: error))")
            #expect(error?.url == url)
        }
    }

    @Test("a 10 MB header line and a 400 KB head are 'header too large', not 'Out of memory'",
          arguments: ["/huge-line", "/huge-head"])
    func headerTooLarge(path: String) async throws {
        try await CannedServer.with(Self.responses) { server in
            let url = server.url(path)
            let error = await expectTrawlError(.tooLarge) { _ = try await Client().send(Request(url: url)) }
            #expect(error?.message.hasPrefix("header too large") == true, "\(String(describing: error))")
            // Found by the hostile sweep: the description still ended in libcurl's "[curl 27: Out of memory]".
            #expect(error?.description.contains("Out of memory") == false, "\(String(describing: error))")
            _ = await expectTrawlError(.tooLarge) {
                let response = try await Client().stream(Request(url: url))
                for try await _ in response.body {}
            }
        }
    }

    /// Found by the hostile sweep: libcurl takes "http/1.1" in any case, and trawl then called the head cut short.
    @Test("a status line in lower case is read as curl reads it")
    func lowerCaseStatusLine() async throws {
        let responses = ["/lower": CannedServer.response("http/1.1 200 OK", ["Content-Length: 2"], body: Array("hi".utf8))]
        try await CannedServer.with(responses) { server in
            let response = try await Client().send(Request(url: server.url("/lower")))
            #expect(response.status == 200)
            #expect(response.body == Array("hi".utf8))
        }
    }

    @Test("a URL past 64 KiB is refused before sending, saying how long it is")
    func urlTooLong() async throws {
        let url = "http://127.0.0.1:9/?q=" + String(repeating: "x", count: URLCheck.maxLength)
        let problem = try #require(URLCheck.problem(in: url))
        #expect(problem.code == .invalidURL)
        #expect(problem.message == "the URL is \(url.utf8.count) bytes long, over the limit of 65536 bytes")
        #expect(URLCheck.problem(in: String(url.prefix(URLCheck.maxLength))) == nil)
        let error = await expectTrawlError(.invalidURL) { _ = try await Client().send(Request(url: url)) }
        #expect(error?.curlCode == nil)
    }
}
