import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Redirects are followed by Trawl, with credentials stripped across origins", .hangGuard)
struct RedirectTests {
    @Test func followsAChain() async throws {
        try await withServer { server in
            let response = try await Client().send(Request(url: server.url("/redirect/3")))
            #expect(response.status == 200)
            #expect(response.url == server.url("/echo"))
            #expect(response.head.redirects.count == 4)  // /redirect/2, /1, /0, /echo
        }
    }

    @Test func tooManyRedirects() async throws {
        try await withServer { server in
            let error = await expectTrawlError(.tooManyRedirects) {
                _ = try await Client().send(Request(url: server.url("/redirect/20")))
            }
            #expect(error?.message.hasPrefix("more than 10 redirects") == true)
            var config = Client.Configuration()
            config.redirects = .follow(max: 2)
            _ = await expectTrawlError(.tooManyRedirects) {
                _ = try await Client(configuration: config).send(Request(url: server.url("/redirect/3")))
            }
        }
    }

    @Test func loopsAreDetected() async throws {
        try await withServer { server in
            let error = await expectTrawlError(.redirectLoop) {
                _ = try await Client().send(Request(url: server.url("/loop-a")))
            }
            #expect(error?.message == "redirect loop: \(server.url("/loop-a")) was already visited in this chain")
            _ = await expectTrawlError(.redirectLoop) { _ = try await Client().send(Request(url: server.url("/loop"))) }
        }
    }

    @Test func disabledRedirectsReturnThe3xx() async throws {
        try await withServer { server in
            var request = Request(url: server.url("/redirect/1"))
            request.redirects = RedirectPolicy.none
            let response = try await Client().send(request)
            #expect(response.status == 302)
            #expect(response.headers["Location"] == "/redirect/0")
        }
    }

    @Test func credentialsAreStrippedOnAnotherHost() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.defaultHeaders = ["X-Default-Secret": "d"]
            config.sensitiveHeaders = ["x-default-secret"]
            let client = Client(configuration: config)
            let otherHost = "http://localhost:\(server.port)/echo"
            var request = Request(url: server.url("/redirect?to=\(otherHost)"))
            request.headers = [
                "Authorization": "Bearer secret", "Cookie": "session=1", "Proxy-Authorization": "Basic x",
                "X-Api-Key": "k", "X-Keep": "visible",
            ]
            request.sensitiveHeaders = ["X-API-KEY"]
            let response = try await client.send(request)
            #expect(response.url == otherHost)
            let echo = try decodeEcho(response)
            for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key", "X-Default-Secret"] {
                #expect(echo.header(name).isEmpty, "\(name) leaked to another host")
            }
            #expect(echo.header("X-Keep") == ["visible"])
        }
    }

    /// Found by the hostile sweep: only the three RFC 9110 headers were stripped unless named sensitive, so an
    /// API key sent as `X-Api-Key` (or any `*-Token`) followed a redirect to whatever origin the server named.
    @Test("API keys and tokens are stripped on another origin by their names alone; other headers stay")
    func credentialsByNameAreStrippedOnAnotherOrigin() async throws {
        try await withServer { server in
            try await withServer { other in
                var request = Request(url: server.url("/redirect?to=\(other.url("/echo"))"))
                let credentials = [
                    "X-Api-Key", "Api-Key", "X-Auth-Token", "X-Custom-Token", "Client-Secret", "X-Partner-Api-Key",
                    "X-Partner-ApiKey", "X-Db-Password", "X-Request-Signature", "Token", "Secret", "Password", "ApiKey",
                    "X-Authorization", "Ocp-Apim-Subscription-Key", "X-Secret-Key", "X-Client-Credentials",
                ]
                for name in credentials { request.headers[name] = "secret-\(name)" }
                request.headers["X-Keep"] = "visible"
                request.headers["X-Token-Count"] = "3"
                let echo = try decodeEcho(try await Client().send(request))
                for name in credentials { #expect(echo.header(name).isEmpty, "\(name) leaked to another origin") }
                #expect(echo.header("X-Keep") == ["visible"])
                #expect(echo.header("X-Token-Count") == ["3"])
                // The same origin keeps them, and so does an origin the walk trusts.
                var same = Request(url: server.url("/redirect?to=\(server.url("/echo"))"))
                same.headers["X-Custom-Token"] = "t"
                #expect(try decodeEcho(try await Client().send(same)).header("X-Custom-Token") == ["t"])
                var trusted = request
                trusted.trustedOrigins = [try #require(Origin(url: other.url("/")))]
                let kept = try decodeEcho(try await Client().send(trusted))
                for name in credentials { #expect(kept.header(name) == ["secret-\(name)"], "\(name) to a trusted origin") }
            }
        }
    }

    @Test("a 307 to another origin does not resend a body holding a secret; the same origin and a 303 do")
    func aSecretBodyIsNotResentToAnotherOrigin() async throws {
        try await withServer { server in
            try await withServer { other in
                var request = Request(
                    url: server.url("/redirect?status=307&to=\(other.url("/echo"))"), method: .post,
                    body: .bytes(Array("{\"key\": \"s3cret\"}".utf8)))
                request.bodyHoldsSecret = true
                await #expect(throws: TrawlError.self) { _ = try await Client().send(request) }
                #expect(other.stats.requestsServed == 0, "the body went to the other origin")
                var same = request
                same.url = server.url("/redirect?status=307&to=\(server.url("/echo"))")
                let sameOrigin = try decodeEcho(try await Client().send(same))
                #expect(sameOrigin.body == "{\"key\": \"s3cret\"}")
                var seeOther = request
                seeOther.url = server.url("/redirect?status=303&to=\(other.url("/echo"))")
                let dropped = try decodeEcho(try await Client().send(seeOther))
                #expect(dropped.method == "GET", "a 303 drops the body")
                var plain = request
                plain.bodyHoldsSecret = false
                let resent = try decodeEcho(try await Client().send(plain))
                #expect(resent.method == "POST", "as curl: resent")
            }
        }
    }

    @Test func credentialsAreStrippedOnAnotherPort() async throws {
        try await withServer { server in
            try await withServer { other in
                var request = Request(url: server.url("/redirect?to=\(other.url("/echo"))"))
                request.headers = ["Authorization": "Bearer secret"]
                let echo = try decodeEcho(try await Client().send(request))
                #expect(echo.header("Authorization").isEmpty)
            }
        }
    }

    @Test func credentialsAreKeptOnTheSameOrigin() async throws {
        try await withServer { server in
            var request = Request(url: server.url("/redirect/2"))
            request.headers = ["Authorization": "Bearer secret", "X-Api-Key": "k"]
            request.sensitiveHeaders = ["x-api-key"]
            let echo = try decodeEcho(try await Client().send(request))
            #expect(echo.header("Authorization") == ["Bearer secret"])
            #expect(echo.header("X-Api-Key") == ["k"])
        }
    }

    @Test func credentialsStayStrippedAfterComingBack() async throws {
        try await withServer { server in
            let back = server.url("/echo")
            let away = "http://localhost:\(server.port)/redirect?to=\(back)"
            let encoded = away.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            var request = Request(url: server.url("/redirect?to=\(encoded)"))
            request.headers = ["Authorization": "Bearer secret"]
            let response = try await Client().send(request)
            #expect(response.url == back)
            #expect(try decodeEcho(response).header("Authorization").isEmpty)
        }
    }

    @Test func seeOtherTurnsPostIntoGet() async throws {
        try await withServer { server in
            let request = Request(
                url: server.url("/redirect?to=/echo&status=303"), method: .post,
                body: .string("payload", contentType: "text/plain"))
            let echo = try decodeEcho(try await Client().send(request))
            #expect(echo.method == "GET")
            #expect(echo.bodyLength == 0)
            #expect(echo.header("Content-Type").isEmpty)
        }
    }

    @Test func temporaryRedirectKeepsMethodAndBody() async throws {
        try await withServer { server in
            let request = Request(
                url: server.url("/redirect?to=/echo&status=307"), method: .put, body: .string("payload"))
            let echo = try decodeEcho(try await Client().send(request))
            #expect(echo.method == "PUT")
            #expect(echo.body == "payload")
        }
    }

    @Test func streamBodyCannotBeReplayed() async throws {
        try await withServer { server in
            let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
                continuation.yield(Array("once".utf8))
                continuation.finish()
            }
            let request = Request(
                url: server.url("/redirect?to=/echo&status=308"), method: .post, body: .stream(chunks))
            _ = await expectTrawlError(.redirectNotReplayable) { _ = try await Client().send(request) }
        }
    }

    @Test func redirectToOtherSchemesIsRefused() async throws {
        try await withServer { server in
            for target in ["ftp://127.0.0.1/file", "file:///etc/passwd", "gopher://127.0.0.1/"] {
                let error = await expectTrawlError(.unsupportedScheme) {
                    _ = try await Client().send(Request(url: server.url("/redirect?to=\(target)")))
                }
                #expect(error?.status == 302)
            }
        }
    }

    @Test func streamingFollowsRedirectsToo() async throws {
        try await withServer { server in
            let response = try await Client().stream(Request(url: server.url("/redirect?to=/bytes/1000")))
            #expect(response.status == 200)
            #expect(try await response.body.collect(upTo: 10_000) == pattern(1000))
        }
    }

    @Test func redirectStepRules() {
        let url = "http://a.example/x"
        #expect(RedirectStep.next(status: 302, method: .post, from: url, location: "http://a.example/y")
            == .follow(url: "http://a.example/y", method: .get, keepsBody: false, crossesOrigin: false))
        #expect(RedirectStep.next(status: 301, method: .put, from: url, location: "https://a.example/y")
            == .follow(url: "https://a.example/y", method: .put, keepsBody: true, crossesOrigin: true))
        #expect(RedirectStep.next(status: 303, method: .head, from: url, location: "http://a.example:8080/")
            == .follow(url: "http://a.example:8080/", method: .head, keepsBody: false, crossesOrigin: true))
        #expect(RedirectStep.next(status: 304, method: .get, from: url, location: "http://a.example/") == .stop)
        #expect(RedirectStep.next(status: 302, method: .get, from: url, location: nil) == .stop)
        #expect(Origin(url: "HTTP://User:pw@A.Example:80/p?q") == Origin(scheme: "http", host: "a.example", port: 80))
        #expect(Origin(url: "https://[::1]/") == Origin(scheme: "https", host: "[::1]", port: 443))
        #expect(Origin(url: "https://[::1]:8443") == Origin(scheme: "https", host: "[::1]", port: 8443))
    }
}
