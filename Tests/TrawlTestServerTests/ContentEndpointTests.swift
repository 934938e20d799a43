import CompressNIO
import NIOCore
import Testing
import TrawlTestSupport
import TrawlTestServer

extension TrawlTestServerTests {
    @Suite("Content endpoints", .hangGuard)
    struct ContentEndpointTests {
        @Test func bytesHasLengthAndPattern() async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(port: server.port, "/bytes/300000")
                #expect(response.status == 200)
                #expect(response.header("Content-Length") == "300000")
                #expect(response.header("Content-Type") == "application/octet-stream")
                #expect(response.body.count == 300_000)
                #expect(isPattern(response.body))
                #expect(TestServer.patternByte(at: 250) == 250)
                #expect(TestServer.patternByte(at: 251) == 0)
            }
        }

        @Test func bytesZeroAndHead() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/bytes/0")
                let empty = try client.readResponse()
                #expect(empty.header("Content-Length") == "0")
                #expect(empty.body.isEmpty)
                try client.request("/bytes/1000", method: "HEAD")
                let head = try client.readResponse(method: "HEAD")
                #expect(head.header("Content-Length") == "1000")
                // No body followed the HEAD response: the next response comes straight after.
                try client.request("/bytes/5")
                #expect(try client.readResponse().body == [0, 1, 2, 3, 4])
                #expect(server.stats.connectionsAccepted == 1)
            }
        }

        @Test func chunkedUsesRequestedChunkSize() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/bytes/250000?chunked=1&chunk=100000")
                let head = try client.readHead()
                #expect(head.header("Transfer-Encoding") == "chunked")
                #expect(head.header("Content-Length") == nil)
                var body: [UInt8] = []
                var sizes: [Int] = []
                while true {
                    let size = try #require(Int(try client.readLine(), radix: 16))
                    sizes.append(size)
                    if size == 0 { break }
                    body += try client.readExactly(size)
                    #expect(try client.readLine() == "")
                }
                #expect(try client.readLine() == "")
                #expect(sizes == [100_000, 100_000, 50_000, 0])
                #expect(isPattern(body))
            }
        }

        @Test(arguments: ["/gzip/1000000", "/bytes/1000000?gzip=1&chunk=4096", "/gzip/0"])
        func gzipDecodesToPattern(target: String) async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(port: server.port, target)
                #expect(response.status == 200)
                #expect(response.header("Content-Encoding") == "gzip")
                #expect(response.header("Transfer-Encoding") == "chunked")
                var compressed = ByteBuffer(bytes: response.body)
                let decoded = try compressed.decompress(with: .gzip())
                let expected = target == "/gzip/0" ? 0 : 1_000_000
                let bytes = try #require(decoded.getBytes(at: decoded.readerIndex, length: decoded.readableBytes))
                #expect(bytes.count == expected)
                #expect(isPattern(bytes))
                if target.contains("gzip=1") {
                    #expect(response.body.count < 100_000)
                }
            }
        }

        @Test func smallJSON() async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(port: server.port, "/json/small")
                #expect(response.header("Content-Type") == "application/json")
                #expect((400...800).contains(response.body.count))
                let json = try response.json()
                let items = try #require(json["items"] as? [[String: Any]])
                #expect(items.count == 5)
                #expect(items.first?["name"] as? String == "anchor")
            }
        }

        @Test func echoRoundTrip() async throws {
            try await withServer { server in
                let body = Array("héllo\n\"world\"".utf8)
                let response = try RawHTTPClient.fetch(
                    port: server.port,
                    "/echo?a=1&b=x%20y",
                    method: "PUT",
                    headers: [("X-Test", "one"), ("x-test", "two"), ("Accept", "*/*")],
                    body: body
                )
                #expect(response.status == 200)
                let json = try response.json()
                #expect(json["method"] as? String == "PUT")
                #expect(json["path"] as? String == "/echo")
                #expect(json["query"] as? String == "a=1&b=x%20y")
                #expect(json["bodyLength"] as? Int == body.count)
                #expect(json["body"] as? String == "héllo\n\"world\"")
                let headers = try #require(json["headers"] as? [[String]])
                #expect(headers.contains(["Host", "127.0.0.1"]))
                let tests = headers.filter { $0.first?.lowercased() == "x-test" }
                #expect(tests == [["X-Test", "one"], ["x-test", "two"]])
            }
        }

        @Test func echoRejectsBodiesOverEightMegabytes() async throws {
            try await withServer { server in
                let body = [UInt8](repeating: 65, count: 8 * 1024 * 1024 + 1)
                let response = try RawHTTPClient.fetch(port: server.port, "/echo", method: "POST", body: body)
                #expect(response.status == 413)
            }
        }

        @Test func uploadCountsBodyAndAnswersExpectContinue() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                let size = 3 * 1024 * 1024
                try client.send(
                    "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(size)\r\nExpect: 100-continue\r\n\r\n"
                )
                let interim = try client.readHead(interim: true)
                #expect(interim.status == 100)
                try client.send([UInt8](repeating: 7, count: size))
                let response = try client.readResponse()
                #expect(try response.json()["bytes"] as? Int == size)
                // A chunked upload is counted too.
                try client.send(
                    "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                )
                #expect(try client.readResponse().json()["bytes"] as? Int == 5)
            }
        }

        @Test func statusCodes() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/status/503")
                let unavailable = try client.readResponse()
                #expect(unavailable.status == 503)
                #expect(try unavailable.json()["status"] as? Int == 503)
                try client.request("/status/204")
                let noContent = try client.readResponse()
                #expect(noContent.status == 204)
                #expect(noContent.header("Content-Length") == nil)
                try client.request("/status/418")
                #expect(try client.readResponse().status == 418)
                try client.request("/nowhere")
                let missing = try client.readResponse()
                #expect(missing.status == 404)
                #expect(try missing.json()["error"] as? String == "not found")
                #expect(server.stats.connectionsAccepted == 1)
            }
        }

        @Test func headersAreRepeatedInOrder() async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(port: server.port, "/headers?X-A=1&X-B=two%20words&X-A=3")
                #expect(response.status == 200)
                #expect(response.headers("X-A") == ["1", "3"])
                #expect(response.header("X-B") == "two words")
                let names = response.headers.map(\.0).filter { $0.hasPrefix("X-") }
                #expect(names == ["X-A", "X-B", "X-A"])
                #expect(response.text == "{}")
            }
        }

        @Test func delayWaitsWithoutBlocking() async throws {
            try await withServer { server in
                let slow = try RawHTTPClient(port: server.port)
                let start = ContinuousClock.now
                try slow.request("/delay/3000")
                // The single event loop thread still serves others while the delay runs (bounds allow for a
                // loaded machine).
                let quick = try RawHTTPClient.fetch(port: server.port, "/status/200")
                #expect(quick.status == 200)
                #expect(ContinuousClock.now - start < .milliseconds(2000))
                let delayed = try slow.readResponse()
                #expect(ContinuousClock.now - start >= .milliseconds(3000))
                #expect(try delayed.json()["delayed"] as? Int == 3000)
            }
        }
    }
}
