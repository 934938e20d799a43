import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

/// Responses libcurl 7.88 accepts with CURLE_OK although their body is short or wrong: each must fail, naming the
/// URL, before any of the body is delivered (issue 22).
@Suite("no silent short output: cut heads, untrustworthy lengths, unrequested 101", .hangGuard)
struct ShortResponseTests {
    static let responses: [String: [UInt8]] = [
        "/cut-head": Array("HTTP/1.1 200 OK\r\nContent-Type: appl".utf8),
        "/cut-status": Array("HTTP/1.1 200 O".utf8),
        "/length-5abc": CannedServer.response(
            "HTTP/1.1 200 OK", ["Content-Length: 5abc"], body: Array("hello world".utf8)),
        "/length-plus": CannedServer.response("HTTP/1.1 200 OK", ["Content-Length: +5"], body: Array("hello".utf8)),
        "/length-huge": CannedServer.response(
            "HTTP/1.1 200 OK", ["Content-Length: 99999999999999999999"], body: Array("hello".utf8)),
        "/length-64bit": CannedServer.response(
            "HTTP/1.1 200 OK", ["Content-Length: 9223372036854775808"], body: Array("hello".utf8)),
        "/length-twice": CannedServer.response(
            "HTTP/1.1 200 OK", ["Content-Length: 5", "Content-Length: 7"], body: Array("hello".utf8)),
        "/switch": CannedServer.response(
            "HTTP/1.1 101 Switching Protocols", ["Upgrade: websocket", "Connection: Upgrade"],
            body: Array("hello".utf8)),
        "/fine": CannedServer.response("HTTP/1.1 200 OK", ["Content-Length: 5"], body: Array("hello".utf8)),
    ]

    @Test("a connection closed inside the head is a truncated response, buffered and streamed")
    func cutHead() async throws {
        try await CannedServer.with(Self.responses) { server in
            let client = Client()
            for path in ["/cut-head"] {
                let url = server.url(path)
                let error = await expectTrawlError(.truncated) { _ = try await client.send(Request(url: url)) }
                #expect(error?.message == "the connection closed before the response head ended", "\(path)")
                #expect(error?.url == url)
                _ = await expectTrawlError(.truncated) {
                    let response = try await client.stream(Request(url: url))
                    for try await _ in response.body {}
                }
            }
            // Cut inside the status line: libcurl itself says nothing came.
            _ = await expectTrawlError(.receiveFailed) {
                _ = try await client.send(Request(url: server.url("/cut-status")))
            }
        }
    }

    @Test("a Content-Length that is not plain decimal, past 63 bits or given twice differently fails")
    func untrustworthyLength() async throws {
        try await CannedServer.with(Self.responses) { server in
            let client = Client()
            let cases = [
                ("/length-5abc", "'5abc' is not a plain decimal"), ("/length-plus", "'+5' is not a plain decimal"),
                ("/length-huge", "'99999999999999999999' is not"), ("/length-64bit", "'9223372036854775808' is not"),
                ("/length-twice", "two Content-Length fields disagree (5 and 7)"),
            ]
            for (path, message) in cases {
                let error = await expectTrawlError(.receiveFailed) {
                    _ = try await client.send(Request(url: server.url(path)))
                }
                #expect(error?.message.contains(message) == true, "\(path): \(String(describing: error))")
                #expect(error?.url == server.url(path))
            }
            let fine = try await client.send(Request(url: server.url("/fine")))
            #expect(fine.body == Array("hello".utf8))
        }
    }

    @Test("an unrequested 101 Switching Protocols fails instead of delivering what follows as the body")
    func unrequestedSwitch() async throws {
        try await CannedServer.with(Self.responses) { server in
            let error = await expectTrawlError(.receiveFailed) {
                _ = try await Client().send(Request(url: server.url("/switch")))
            }
            #expect(error?.message == "the server switched protocols (101) without being asked")
        }
    }
}
