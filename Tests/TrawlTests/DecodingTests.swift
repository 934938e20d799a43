import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

@Suite("Decoding and errors", .hangGuard)
struct DecodingTests {
    struct Item: Decodable, Sendable, Equatable {
        let id: Int
        let name: String
        let inStock: Bool
    }

    struct Items: GetRoute {
        typealias Output = [Item]
        var decoder: (any PayloadDecoding)?
        var path: RoutePath { "json/small" }
        var keyPath: JSONKeyPath? { "items" }
    }

    static var snakeCase: JSONItemDecoder {
        var decoder = JSONItemDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    @Test func decodesAtTheKeyPathWithTheStreamingDecoder() async throws {
        try await withServer { server in
            var api = api(server)
            api.decoder = StreamingPayloadDecoder(Self.snakeCase)
            let items = try await api.send(Items())
            #expect(items.count == 5)
            #expect(items[3] == Item(id: 4, name: "dock line", inStock: true))
        }
    }

    @Test func foundationAndCustomDecodersPlugIn() async throws {
        struct Custom: PayloadDecoding {
            func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], at keyPath: JSONKeyPath?) throws -> T {
                let bytes = try PayloadBytes.value(in: body, at: keyPath)
                return try DecodingTests.snakeCase.decode(type, from: bytes)
            }
        }
        try await withServer { server in
            let api = api(server)
            let foundation = FoundationPayloadDecoder {
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                return decoder
            }
            let viaFoundation = try await api.send(Items(decoder: foundation))
            #expect(viaFoundation.map(\.id) == [1, 2, 3, 4, 5])
            let viaStreaming = try await api.send(Items(decoder: StreamingPayloadDecoder(Self.snakeCase)))
            #expect(viaStreaming == viaFoundation)
            let viaCustom = try await api.send(Items(decoder: Custom()))
            #expect(viaCustom == viaFoundation)
        }
    }

    @Test func dynamicValueEmptyResponseAndRawResponse() async throws {
        struct Meta: GetRoute {
            var path: RoutePath { "json/small" }
            var keyPath: JSONKeyPath? { "meta" }
        }
        struct Ignored: GetRoute {
            typealias Output = EmptyResponse
            var path: RoutePath { "bytes/10" }
        }
        try await withServer { server in
            let api = api(server)
            let meta = try await api.send(Meta())
            #expect(meta["generated_by"] == "TrawlTestServer")
            #expect(meta["unicode"]?.stringValue == "café ⚓")
            let empty = try await api.send(Ignored())
            #expect(empty == EmptyResponse())
            let raw = try await api.response(for: Ignored())
            #expect(raw.status == 200)
            #expect(raw.body.count == 10)
            #expect(raw.isStub == false)
        }
    }

    @Test func aMissingKeyPathIsADecodingError() async throws {
        struct Missing: GetRoute {
            var path: RoutePath { "json/small" }
            var keyPath: JSONKeyPath? { "nope.deeper" }
        }
        try await withServer { server in
            let error = await expectAPIError(NoErrorModel.self, .decoding) { _ = try await api(server).send(Missing()) }
            #expect(error?.status == 200)
            let underlying = error?.underlying.map { "\($0)" } ?? ""
            #expect(underlying.contains("no value at key path nope.deeper"))
        }
    }

    struct ServerError: Decodable, Sendable, Equatable {
        let error: String
        let code: String
    }

    struct Guarded: GetRoute {
        typealias ErrorModel = ServerError
        var path: RoutePath { "protected" }
    }

    @Test func nonSuccessCarriesTheDecodedErrorModel() async throws {
        try await withServer { server in
            let error = await expectAPIError(ServerError.self, .status) { _ = try await api(server).send(Guarded()) }
            #expect(error?.status == 401)
            #expect(error?.errorModel == ServerError(error: "bad credentials", code: "E401"))
            #expect(error?.bodyExcerpt == #"{"error":"bad credentials","code":"E401"}"#)
            #expect(error?.request.url == server.url("/protected"))
            #expect(error?.response?.headers["Content-Type"] == "application/json")
        }
    }

    @Test func anUnparsableErrorBodyLeavesTheModelNil() async throws {
        struct Teapot: GetRoute {
            typealias ErrorModel = ServerError
            var path: RoutePath { "status/418" }
        }
        try await withServer { server in
            let error = await expectAPIError(ServerError.self, .status) { _ = try await api(server).send(Teapot()) }
            #expect(error?.status == 418)
            #expect(error?.errorModel == nil)
            #expect(error?.bodyExcerpt == #"{"status":418}"#)
        }
    }

    @Test func statusValidationIsPerRoute() async throws {
        struct Lenient: GetRoute {
            var path: RoutePath { "status/404" }
            func isAcceptable(status: Int) -> Bool { status == 404 }
        }
        struct Strict: GetRoute {
            typealias Output = EmptyResponse
            var path: RoutePath { "status/204" }
            func isAcceptable(status: Int) -> Bool { status == 200 }
        }
        try await withServer { server in
            let api = api(server)
            let lenient = try await api.send(Lenient())
            #expect(lenient == ["status": 404])
            let error = await expectAPIError(NoErrorModel.self, .status) { _ = try await api.send(Strict()) }
            #expect(error?.status == 204)
        }
    }
}
