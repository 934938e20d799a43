import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlJSON
import TrawlTestServer

@Suite("Body encodings", .hangGuard)
struct BodyEncodingTests {
    struct EchoRoute: Route {
        typealias Output = Echo
        var method: HTTPMethod = .post
        var parameters: QueryParameters = [:]
        var parameterEncoding: ParameterEncoding = .automatic
        var body: RouteBody = .none
        var path: RoutePath { "echo" }
    }

    struct Note: Encodable, Sendable {
        let title: String
        let createdAt: Date
    }

    @Test func parametersFollowTheMethod() async throws {
        try await withServer { server in
            let api = api(server)
            let params: QueryParameters = ["q": "a b", "n": 2, "ok": true, "tags": ["x"]]
            let get = try await api.send(EchoRoute(method: .get, parameters: params))
            #expect(get.query == "q=a%20b&n=2&ok=true&tags=x")
            #expect(get.bodyLength == 0)
            let delete = try await api.send(EchoRoute(method: .delete, parameters: params))
            #expect(delete.query == "q=a%20b&n=2&ok=true&tags=x")
            let post = try await api.send(EchoRoute(method: .post, parameters: params))
            #expect(post.query == "")
            #expect(post.body == #"{"q":"a b","n":2,"ok":true,"tags":["x"]}"#)
            #expect(post.header("Content-Type") == ["application/json"])
            let form = try await api.send(EchoRoute(method: .patch, parameters: params, parameterEncoding: .form))
            #expect(form.body == "q=a+b&n=2&ok=true&tags=x")
            #expect(form.header("Content-Type") == ["application/x-www-form-urlencoded"])
            let query = try await api.send(EchoRoute(method: .put, parameters: ["a": 1], parameterEncoding: .query))
            #expect(query.query == "a=1")
        }
    }

    @Test func encodableBodiesUseTheConfiguredEncoder() async throws {
        try await withServer { server in
            var api = api(server)
            api.makeJSONEncoder = {
                let encoder = JSONEncoder()
                encoder.dateEncodingStrategy = .secondsSince1970
                encoder.keyEncodingStrategy = .convertToSnakeCase
                encoder.outputFormatting = .sortedKeys
                return encoder
            }
            let note = Note(title: "x", createdAt: Date(timeIntervalSince1970: 5))
            let echo = try await api.send(EchoRoute(parameters: ["p": 1], body: .json(note)))
            #expect(echo.body == #"{"created_at":5,"title":"x"}"#)
            #expect(echo.query == "p=1", "parameters go to the query when the route has a body")
            let own = try await api.send(EchoRoute(body: .json(["k": "v"], encoder: { JSONEncoder() })))
            #expect(own.body == #"{"k":"v"}"#)
        }
    }

    @Test func formAndRawBodies() async throws {
        try await withServer { server in
            let api = api(server)
            let form = try await api.send(EchoRoute(body: .form(["name": "Ann Lee", "x": "1&2"])))
            #expect(form.body == "name=Ann+Lee&x=1%262")
            #expect(form.header("content-type") == ["application/x-www-form-urlencoded"])
            let raw = try await api.send(EchoRoute(body: .raw(Array("<a/>".utf8), contentType: "application/xml")))
            #expect(raw.body == "<a/>")
            #expect(raw.header("content-type") == ["application/xml"])
        }
    }
}
