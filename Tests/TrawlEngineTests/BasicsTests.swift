import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Engine basics", .hangGuard)
struct BasicsTests {
    @Test func getReturnsBodyHeadersAndConnectionFacts() async throws {
        try await withServer { server in
            let client = Client()
            let response = try await client.send(Request(url: server.url("/bytes/100000")))
            #expect(response.status == 200)
            #expect(response.body == pattern(100_000))
            #expect(response.headers["content-length"] == "100000")
            #expect(response.httpVersion == .http1_1)
            #expect(response.head.remoteAddress == "127.0.0.1:\(server.port)")
            #expect(response.url == server.url("/bytes/100000"))
            let timings = response.timings
            #expect(timings.firstByte >= timings.connect)
            #expect(try #require(timings.total) >= timings.firstByte)
        }
    }

    @Test func repeatedResponseHeadersAreKeptInOrder() async throws {
        try await withServer { server in
            let response = try await Client().send(Request(url: server.url("/headers?X-Tag=a&X-Other=z&X-Tag=b")))
            #expect(response.headers.values(for: "x-tag") == ["a", "b"])
            #expect(response.headers["X-OTHER"] == "z")
        }
    }

    @Test func anyStatusIsAResponse() async throws {
        try await withServer { server in
            let client = Client()
            for status in [201, 404, 500, 503] {
                let response = try await client.send(Request(url: server.url("/status/\(status)")))
                #expect(response.status == status)
            }
            let noContent = try await client.send(Request(url: server.url("/status/204")))
            #expect(noContent.status == 204 && noContent.body.isEmpty)
        }
    }

    @Test func headRequestHasNoBody() async throws {
        try await withServer { server in
            let response = try await Client().send(Request(url: server.url("/bytes/5000"), method: .head))
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
        }
    }

    @Test func defaultAndRequestHeadersAreSentRequestWins() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.defaultHeaders = ["X-Default": "d", "Accept": "text/plain"]
            let client = Client(configuration: config)
            var request = Request(url: server.url("/echo"))
            request.headers = ["Accept": "application/json", "X-Empty": ""]
            let echo = try decodeEcho(try await client.send(request))
            #expect(echo.header("X-Default") == ["d"])
            #expect(echo.header("Accept") == ["application/json"])
            #expect(echo.header("X-Empty") == [""])
            #expect(echo.header("User-Agent") == ["trawl/0.1"])
        }
    }

    @Test func connectionsAndHandlesAreReused() async throws {
        try await withServer { server in
            let client = Client()
            for _ in 0..<20 {
                let response = try await client.send(Request(url: server.url("/json/small")))
                #expect(response.status == 200)
            }
            #expect(server.stats.connectionsAccepted == 1)
            #expect(client.handlesCreated == [1])
        }
    }

    @Test func manyConcurrentRequestsAllComplete() async throws {
        try await withServer { server in
            let client = Client()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<500 {
                    group.addTask {
                        let response = try await client.send(Request(url: server.url("/bytes/\(index)")))
                        #expect(response.body.count == index)
                        return response.status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 500 && statuses.allSatisfy { $0 == 200 })
            #expect(server.stats.connectionsAccepted <= 64)
        }
    }

    @Test func gzipBodiesAreDecodedTransparently() async throws {
        try await withServer { server in
            let client = Client()
            let response = try await client.send(Request(url: server.url("/gzip/300000")))
            #expect(response.headers["Content-Encoding"] == "gzip")
            #expect(response.body == pattern(300_000))
            let echo = try decodeEcho(try await client.send(Request(url: server.url("/echo"))))
            let accepted = echo.header("Accept-Encoding").first ?? ""
            #expect(accepted.contains("gzip"))
        }
    }

    @Test func explicitAcceptEncodingGetsRawBytes() async throws {
        try await withServer { server in
            var request = Request(url: server.url("/gzip/1000"))
            request.headers["Accept-Encoding"] = "gzip"
            let response = try await Client().send(request)
            #expect(response.body.starts(with: [0x1f, 0x8b]))  // still compressed
        }
    }

    @Test func http2PreferenceFallsBackToHTTP1OnCleartext() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.httpVersion = .http2
            let response = try await Client(configuration: config).send(Request(url: server.url("/json/small")))
            #expect(response.status == 200)
            #expect(response.httpVersion == .http1_1)
        }
    }
}

@Suite("Values built by hand", .hangGuard)
struct HandBuiltValueTests {
    /// A stub stands in for a response from the wire: built by hand from a real response's parts, it answers
    /// every accessor as the real one does.
    @Test func responsesCanBeBuiltForStubs() async throws {
        try await withServer { server in
            let real = try await Client().send(Request(url: server.url("/headers?Location=/items/7&X-Tag=a&X-Tag=b")))
            let stub = Response(
                head: ResponseHead(
                    status: real.status, headers: real.headers, url: real.url, httpVersion: real.httpVersion,
                    remoteIP: "127.0.0.1", remotePort: server.port),
                body: real.body)
            #expect(stub.status == real.status && stub.head.isSuccess == real.head.isSuccess)
            #expect(stub.headers["location"] == real.headers["Location"])
            #expect(stub.headers.values(for: "X-TAG") == ["a", "b"])
            #expect(stub.bodyText == real.bodyText)
            #expect(stub.url == real.url)
            #expect(stub.head.remoteAddress == real.head.remoteAddress)
            #expect(stub.timings == .zero)
            #expect(stub.head.redirects.isEmpty)
        }
        // Facts a stub is free to choose read back as the engine reports them.
        let created = ResponseHead(status: 201, headers: ["Location": "/items/7"], url: "http://stub/items")
        #expect(created.isSuccess)
        #expect(created.remoteAddress == nil, "no peer: a stub never touched the network")
        #expect(!ResponseHead(status: 404, url: "http://stub/x").isSuccess)
        #expect(!ResponseHead(status: 304, url: "http://stub/x").isSuccess)
        let overIPv6 = ResponseHead(status: 200, url: "http://[::1]:8080/", remoteIP: "::1", remotePort: 8080)
        #expect(overIPv6.remoteAddress == "[::1]:8080")
        let response = Response(head: created, body: Array(#"{"id":7,"name":"caf\#u{E9}"}"#.utf8))
        #expect(response.bodyText == #"{"id":7,"name":"café"}"#)
        #expect(Response(head: created, body: [0x61, 0xFF, 0x62]).bodyText == "a\u{FFFD}b")
    }
}
