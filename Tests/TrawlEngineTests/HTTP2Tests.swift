import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

/// nginx with TLS and HTTP/2 (ALPN) and a fixed JSON reply.
private func http2Server() async throws -> NginxTLSServer {
    try await NginxTLSServer(listen: "ssl http2") { _ in
        #"location / { default_type application/json; return 200 '{"ok":true}'; }"#
    }
}

@Suite("HTTP/2 over TLS", .serialized, .endToEnd)
struct HTTP2Tests {
    @Test func http2IsNegotiatedAndMultiplexed() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx"),
                "scripts/test installs nginx-light")
        let server = try await http2Server()
        var config = Client.Configuration()
        config.httpVersion = .http2
        config.tls.caFile = server.certificatePath
        let client = Client(configuration: config)
        let port = server.port
        let result = await Result {
            try await withThrowingTaskGroup(of: Response.self) { group in
                for index in 0..<20 {
                    group.addTask { try await client.send(Request(url: "https://localhost:\(port)/\(index)")) }
                }
                return try await group.reduce(into: [Response]()) { $0.append($1) }
            }
        }
        await server.stop()
        let responses = try result.get()
        #expect(responses.count == 20)
        #expect(responses.allSatisfy { $0.status == 200 && $0.httpVersion == .http2 })
        #expect(responses.allSatisfy { $0.bodyText == #"{"ok":true}"# })
        // PIPEWAIT: the requests share one connection instead of opening twenty.
        #expect(responses.filter { $0.timings.tls > .zero }.count <= 2)
    }

    @Test func http1IsTheDefaultOverTLS() async throws {
        let server = try await http2Server()
        var config = Client.Configuration()
        config.tls.caFile = server.certificatePath
        let client = Client(configuration: config)
        let result = await Result { try await client.send(Request(url: "https://localhost:\(server.port)/")) }
        await server.stop()
        #expect(try result.get().httpVersion == .http1_1)
    }
}
