import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

/// Compressed bodies are decoded by Trawl (zlib, bounded steps): a stream cut before its trailer is truncated, a
/// bomb is refused with a message that says so, and a slow consumer pausing a highly compressed stream gets every
/// byte (libcurl's own decoding failed there with "curl 27: Out of memory").
@Suite("compressed bodies: bounded, complete or an error", .hangGuard)
struct CompressedBodyTests {
    static let text = Array(String(repeating: "{\"id\":12345,\"name\":\"trawl\"},", count: 20_000).utf8)

    static func gzipResponse(_ body: [UInt8], encoding: String = "gzip") -> [UInt8] {
        CannedServer.response(
            "HTTP/1.1 200 OK", ["Content-Encoding: \(encoding)", "Content-Length: \(body.count)"], body: body)
    }

    static func read(_ client: Client, _ url: String, delay: Duration = .zero) async throws -> Int {
        let response = try await client.stream(Request(url: url))
        if delay > .zero { try await Task.sleep(for: delay) }
        var count = 0
        for try await chunk in response.body {
            if count == 0 { #expect(chunk.allSatisfy { $0 == 0 }) }
            count += chunk.count
        }
        return count
    }

    @Test("gzip, deflate (zlib and raw) and two gzip members decode to the exact body")
    func decodes() async throws {
        let gzip = try CompressedBodies.compress(Self.text)
        let responses: [String: [UInt8]] = [
            "/gzip": Self.gzipResponse(gzip),
            "/deflate": Self.gzipResponse(try CompressedBodies.compress(Self.text, .deflate), encoding: "deflate"),
            "/raw": Self.gzipResponse(try CompressedBodies.compress(Self.text, .rawDeflate), encoding: "deflate"),
            "/members": Self.gzipResponse(gzip + gzip),
        ]
        try await CannedServer.with(responses) { server in
            let client = Client()
            for path in ["/gzip", "/deflate", "/raw"] {
                let response = try await client.send(Request(url: server.url(path)))
                #expect(response.body == Self.text, "\(path): \(response.body.count) bytes")
            }
            let both = try await client.send(Request(url: server.url("/members")))
            #expect(both.body == Self.text + Self.text)
        }
    }

    @Test("a gzip or deflate stream cut before its trailer is truncated, even with a matching Content-Length",
          arguments: [("gzip", 8), ("gzip", 0), ("deflate", 4)])
    func cutBeforeTrailer(encoding: String, cut: Int) async throws {
        // `cut` bytes off the end (8: gzip's whole trailer, 4: zlib's checksum), 0: half of the stream.
        let whole = try CompressedBodies.compress(Self.text, encoding == "gzip" ? .gzip : .deflate)
        let kept = Array(whole.dropLast(cut == 0 ? whole.count / 2 : cut))
        let responses = ["/cut": Self.gzipResponse(kept, encoding: encoding)]
        try await CannedServer.with(responses) { server in
            let url = server.url("/cut")
            let error = await expectTrawlError(.truncated) { _ = try await Client().send(Request(url: url)) }
            #expect(error?.message.contains("ended before its end marker") == true, "\(String(describing: error))")
            #expect(error?.url == url)
            _ = await expectTrawlError(.truncated) {
                let response = try await Client().stream(Request(url: url))
                for try await _ in response.body {}
            }
        }
    }

    @Test("a decompression bomb is refused by the ratio limit, streamed or buffered, saying so")
    func ratioLimit() async throws {
        let responses = ["/bomb": Self.gzipResponse(try CompressedBodies.zeros(64 << 20))]
        try await CannedServer.with(responses) { server in
            let url = server.url("/bomb")
            let streamed = await expectTrawlError(.tooLarge) { _ = try await Self.read(Client(), url) }
            #expect(streamed?.message.contains("decompression bomb") == true, "\(String(describing: streamed))")
            #expect(streamed?.curlMessage?.contains("Out of memory") != true)
            let buffered = await expectTrawlError(.tooLarge) { _ = try await Client().send(Request(url: url)) }
            #expect(buffered?.message.contains("decompression bomb") == true, "\(String(describing: buffered))")
        }
    }

    @Test("the decoded-size limit counts decoded bytes and says so")
    func decodedSizeLimit() async throws {
        let responses = ["/big": Self.gzipResponse(try CompressedBodies.compress(Self.text))]
        try await CannedServer.with(responses) { server in
            var request = Request(url: server.url("/big"))
            request.maxBodySize = 100_000
            let error = await expectTrawlError(.tooLarge) { _ = try await Client().send(request) }
            #expect(error?.message.contains("exceeded the limit of 100000 bytes (decoded") == true,
                    "\(String(describing: error))")
        }
    }

    @Test("a slow consumer pausing a 1000:1 stream gets every byte, never 'Out of memory'")
    func pausedBomblikeStream() async throws {
        let total = 96 << 20
        let responses = ["/zeros": Self.gzipResponse(try CompressedBodies.zeros(total))]
        try await CannedServer.with(responses) { server in
            var configuration = Client.Configuration()
            configuration.maxDecompressionRatio = nil
            let client = Client(configuration: configuration)
            let count = try await Self.read(client, server.url("/zeros"), delay: .milliseconds(300))
            #expect(count == total)
        }
    }

    @Test("a Content-Encoding Trawl did not ask for is an error; one the request asked for itself is raw bytes")
    func unaskedEncoding() async throws {
        let gzip = try CompressedBodies.compress(Self.text)
        let responses = ["/br": Self.gzipResponse(gzip, encoding: "br"), "/gzip": Self.gzipResponse(gzip)]
        try await CannedServer.with(responses) { server in
            let error = await expectTrawlError(.decodingFailed) {
                _ = try await Client().send(Request(url: server.url("/br")))
            }
            #expect(error?.message.contains("'br' was not asked for") == true, "\(String(describing: error))")
            var request = Request(url: server.url("/gzip"))
            request.headers["Accept-Encoding"] = "gzip"
            let raw = try await Client().send(request)
            #expect(raw.body == gzip)
        }
    }
}
