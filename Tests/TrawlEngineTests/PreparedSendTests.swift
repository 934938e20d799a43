import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Prepared sends", .hangGuard)
struct PreparedSendTests {
    @Test func aPreparedRequestSentManyTimesGetsTheSameAnswersAsSend() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.defaultHeaders = ["X-Default": "d"]
            let client = Client(configuration: config)
            var request = Request(url: server.url("/echo?n=1"))
            request.headers = ["X-Tag": "a"]
            let ready = try client.prepare(request)
            #expect(ready.request.url == request.url)
            for _ in 0..<5 {
                let echo = try decodeEcho(try await client.send(ready))
                #expect(echo.header("X-Tag") == ["a"])
                #expect(echo.header("X-Default") == ["d"])
                #expect(echo.header("User-Agent") == ["trawl/0.1"])
            }
            // One connection and one handle: the handle keeps the URL it was given and is reused.
            #expect(server.stats.connectionsAccepted == 1)
            #expect(client.handlesCreated == [1])
        }
    }

    @Test func handlesAlternatingBetweenPreparedURLsFetchEachURL() async throws {
        try await withServer { server in
            let client = Client()
            let small = try client.prepare(Request(url: server.url("/bytes/10")))
            let large = try client.prepare(Request(url: server.url("/bytes/2000")))
            for _ in 0..<3 {
                #expect(try await client.send(small).body == pattern(10))
                #expect(try await client.send(large).body == pattern(2000))
                #expect(try await client.send(Request(url: server.url("/bytes/7"))).body == pattern(7))
            }
            #expect(client.handlesCreated == [1])
        }
    }

    @Test func anInvalidRequestFailsWhenPreparedAsSendWouldFail() async throws {
        let client = Client()
        var bad = Request(url: "http://127.0.0.1:1/x")
        bad.headers = ["X-Bad": "a\r\nInjected: 1"]
        let prepareError = #expect(throws: TrawlError.self) { _ = try client.prepare(bad) }
        let sendError = await expectTrawlError(.invalidHeader) { _ = try await client.send(bad) }
        #expect(prepareError?.code == .invalidHeader)
        #expect(prepareError?.message == sendError?.message)
        #expect(throws: TrawlError.self) { _ = try client.prepare(Request(url: "ftp://127.0.0.1/x")) }
    }

    @Test func redirectsAreFollowedFromAPreparedRequest() async throws {
        try await withServer { server in
            let client = Client()
            let ready = try client.prepare(Request(url: server.url("/redirect/2")))
            for _ in 0..<2 {
                let response = try await client.send(ready)
                #expect(response.status == 200)
                #expect(response.head.redirects.count == 3)  // /redirect/1, /0, /echo
            }
            var noFollow = Request(url: server.url("/redirect/1"))
            noFollow.redirects = RedirectPolicy.none
            let response = try await client.send(try client.prepare(noFollow))
            #expect(response.status == 302)
            #expect(response.head.redirects.isEmpty)
        }
    }

    @Test func aRequestPreparedByAnotherClientTakesThatClientsSettings() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.userAgent = "other/1"
            let other = Client(configuration: config)
            let client = Client()
            // With a header of its own, the prepared lines hold the preparing client's defaults merged in.
            var request = Request(url: server.url("/echo"))
            request.headers = ["X-Tag": "a"]
            let ready = try other.prepare(request)
            // Sent through `client`, it is checked again with `client`'s own defaults.
            let echo = try decodeEcho(try await client.send(ready))
            #expect(echo.header("User-Agent") == ["trawl/0.1"])
            #expect(echo.header("X-Tag") == ["a"])
            let own = try decodeEcho(try await other.send(ready))
            #expect(own.header("User-Agent") == ["other/1"])
            #expect(own.header("X-Tag") == ["a"])
        }
    }
}
