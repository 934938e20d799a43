import Foundation
import Testing
@testable import TrawlEngine
import TrawlTestServer

@Suite("Engine basics")
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

@Suite("Values built by hand")
struct HandBuiltValueTests {
    @Test func responsesCanBeBuiltForStubs() {
        let head = ResponseHead(status: 201, headers: ["Location": "/items/7"], url: "http://stub/items")
        let response = Response(head: head, body: Array(#"{"id":7}"#.utf8))
        #expect(response.status == 201)
        #expect(response.headers["location"] == "/items/7")
        #expect(response.bodyText == #"{"id":7}"#)
        #expect(response.timings == .zero)
        #expect(response.head.remoteAddress == nil)
    }
}
