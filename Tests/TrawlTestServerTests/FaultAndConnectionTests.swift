import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

#if canImport(Glibc)
import Glibc
#endif

extension TrawlTestServerTests {
    @Suite("Faults, redirects and connections", .hangGuard)
    struct FaultAndConnectionTests {
        @Test func shortClosesEarly() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/short/1000")
                let head = try client.readHead()
                #expect(head.header("Content-Length") == "1100")
                #expect(head.header("Connection") == nil)
                let body = try client.readToEnd()
                #expect(body.count == 1000)
                #expect(isPattern(body))
            }
        }

        @Test func resetSendsRST() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/reset/1000")
                let head = try client.readHead()
                #expect(head.header("Content-Length") == "2000")
                var received = 0
                var failure: RawHTTPClient.SocketError?
                do {
                    while true {
                        let bytes = try client.readSome()
                        if bytes.isEmpty { break }
                        received += bytes.count
                    }
                } catch let error as RawHTTPClient.SocketError {
                    failure = error
                }
                #expect(received <= 1000)
                #expect(failure?.code == ECONNRESET)
            }
        }

        @Test func badChunkSendsMalformedSizeLine() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/badchunk")
                let head = try client.readHead()
                #expect(head.header("Transfer-Encoding") == "chunked")
                let raw = try client.readToEnd()
                #expect(Array(raw.prefix(4)) == Array("10\r\n".utf8))
                #expect(isPattern(Array(raw[4..<20])))
                #expect(Array(raw[20..<26]) == Array("\r\nzz\r\n".utf8))
            }
        }

        @Test func stallKeepsConnectionOpenUntilClientCloses() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/stall?after=10")
                let head = try client.readHead()
                #expect(head.header("Content-Length") == "1010")
                #expect(isPattern(try client.readExactly(10)))
                try client.setTimeout(0.2)
                #expect(throws: RawHTTPClient.SocketError.self) { try client.readSome() }
                #expect(server.stats.inFlight == 1)
                client.close()
                try await waitUntil { server.stats.inFlight == 0 }
            }
        }

        @Test func dripSendsSlowly() async throws {
            try await withServer { server in
                let start = ContinuousClock.now
                let response = try RawHTTPClient.fetch(port: server.port, "/drip?bytes=4&interval=25")
                #expect(response.header("Content-Length") == "4")
                #expect(response.body == [0, 1, 2, 3])
                #expect(ContinuousClock.now - start >= .milliseconds(100))
            }
        }

        @Test func redirects() async throws {
            try await withServer { server in
                let port = server.port
                let elsewhere = "http://localhost:\(port)/echo?x=1"
                let encoded = try #require(elsewhere.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let absolute = try RawHTTPClient.fetch(port: port, "/redirect?to=\(encoded)&status=307")
                #expect(absolute.status == 307)
                #expect(absolute.header("Location") == elsewhere)
                let defaulted = try RawHTTPClient.fetch(port: port, "/redirect?to=/status/200")
                #expect(defaulted.status == 302)
                #expect(defaulted.header("Location") == "/status/200")
                let chain = try RawHTTPClient.fetch(port: port, "/redirect/3?status=301")
                #expect(chain.status == 301)
                #expect(chain.header("Location") == "/redirect/2?status=301")
                #expect(try RawHTTPClient.fetch(port: port, "/redirect/1").header("Location") == "/redirect/0")
                #expect(try RawHTTPClient.fetch(port: port, "/redirect/0").header("Location") == "/echo")
                #expect(try RawHTTPClient.fetch(port: port, "/loop").header("Location") == "/loop")
                #expect(try RawHTTPClient.fetch(port: port, "/loop-a").header("Location") == "/loop-b")
                #expect(try RawHTTPClient.fetch(port: port, "/loop-b").header("Location") == "/loop-a")
                #expect(try RawHTTPClient.fetch(port: port, "/redirect").status == 400)
            }
        }

        @Test func keepAliveReusesOneConnection() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/bytes/100")
                #expect(try client.readResponse().body.count == 100)
                try client.request("/json/small")
                #expect(try client.readResponse().status == 200)
                #expect(server.stats.connectionsAccepted == 1)
                #expect(server.stats.requestsServed == 2)
                #expect(server.stats.inFlight == 0)
            }
        }

        @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                let requests = ["/bytes/200000", "/status/201", "/upload", "/delay/10", "/bytes/3"]
                var text = ""
                for target in requests {
                    let method = target == "/upload" ? "POST" : "GET"
                    text += "\(method) \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab"
                }
                try client.send(text)
                #expect(try client.readResponse().body.count == 200_000)
                #expect(try client.readResponse().status == 201)
                #expect(try client.readResponse().json()["bytes"] as? Int == 2)
                #expect(try client.readResponse().json()["delayed"] as? Int == 10)
                #expect(try client.readResponse().body == [0, 1, 2])
                #expect(server.stats.connectionsAccepted == 1)
                #expect(server.stats.requestsServed == 5)
            }
        }

        @Test(arguments: ["/close", "/json/small"])
        func connectionCloseIsHonoured(target: String) async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                let headers = target == "/close" ? [] : [("Connection", "close")]
                try client.request(target, headers: headers)
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.header("Connection") == "close")
                #expect(try client.readToEnd().isEmpty)
            }
        }

        @Test func malformedRequestGets400() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.send("NOT HTTP AT ALL\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 400)
                #expect(try client.readToEnd().isEmpty)
            }
        }

        @Test func concurrentRequestsAreCountedAndStatsReset() async throws {
            try await withServer(threads: 2) { server in
                let clients = try (0..<3).map { _ in try RawHTTPClient(port: server.port) }
                for client in clients {
                    try client.request("/delay/500")
                }
                for client in clients {
                    #expect(try client.readResponse().status == 200)
                }
                let stats = server.stats
                #expect(stats.connectionsAccepted == 3)
                #expect(stats.requestsServed == 3)
                #expect(stats.maxInFlight == 3)
                try await waitUntil { server.stats.inFlight == 0 }
                server.resetStats()
                #expect(server.stats == TestServer.Stats())
            }
        }

        @Test func urlsAndHelp() async throws {
            try await withServer { server in
                #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
                #expect(server.url("/echo?a=b") == "http://127.0.0.1:\(server.port)/echo?a=b")
                #expect(server.port > 0)
                for endpoint in ["/bytes/", "/echo", "/stall", "/reset/", "/badchunk", "/loop-a", "/close"] {
                    #expect(TestServer.endpointHelp.contains(endpoint))
                }
                // Shutting down twice is harmless.
                try await server.shutdown()
            }
        }
    }
}

/// Polls `condition` for up to two seconds.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(2)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within 2 s")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
