import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

/// `--continue` and a `416` without validators: the partial file is complete only when a `HEAD` says the resource
/// is still the one it holds (issue 22).
@Suite("a 416 without validators is checked before the partial file is called complete", .hangGuard)
struct DownloadConfirmTests {
    static let range416 = CannedServer.response(
        "HTTP/1.1 416 Range Not Satisfiable", ["Content-Range: bytes */5", "Content-Length: 0"])

    func run(_ sequence: [[UInt8]]) async throws -> (file: String, requests: Int, result: DownloadResult) {
        try await CannedServer.with(sequences: ["/f": sequence]) { server in
            let directory = NSTemporaryDirectory() + "trawl-confirm-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/f.bin"
            #expect(FileManager.default.createFile(atPath: destination + ".part", contents: Data("hello".utf8)))
            let validator = Data("\"v1\"".utf8)
            #expect(FileManager.default.createFile(atPath: destination + ".part.validator", contents: validator))
            var options = DownloadOptions()
            options.resume = true
            let result = try await Client().download(Request(url: server.url("/f")), to: destination, options: options)
            let file = String(decoding: FileManager.default.contents(atPath: destination) ?? Data(), as: UTF8.self)
            return (file, server.requests("/f"), result)
        }
    }

    @Test("HEAD shows the same validator and length: complete, nothing downloaded")
    func sameResource() async throws {
        let head = CannedServer.response("HTTP/1.1 200 OK", ["ETag: \"v1\"", "Content-Length: 5"])
        let outcome = try await run([Self.range416, head])
        #expect(outcome.file == "hello")
        #expect(outcome.requests == 2)
        #expect(outcome.result.head.status == 416)
    }

    @Test("HEAD shows another validator: the file is downloaded again, not kept")
    func changedResource() async throws {
        let head = CannedServer.response("HTTP/1.1 200 OK", ["ETag: \"v2\"", "Content-Length: 5"])
        let fresh = CannedServer.response(
            "HTTP/1.1 200 OK", ["ETag: \"v2\"", "Content-Length: 5"], body: Array("HELLO".utf8))
        let outcome = try await run([Self.range416, head, fresh])
        #expect(outcome.file == "HELLO")
        #expect(outcome.requests == 3)
    }

    @Test("HEAD fails or shows another length: downloaded again")
    func noConfirmation() async throws {
        let fresh = CannedServer.response(
            "HTTP/1.1 200 OK", ["ETag: \"v1\"", "Content-Length: 5"], body: Array("HELLO".utf8))
        let refused = CannedServer.response("HTTP/1.1 405 Method Not Allowed", ["Content-Length: 0"])
        #expect(try await run([Self.range416, refused, fresh]).file == "HELLO")
        let longer = CannedServer.response("HTTP/1.1 200 OK", ["ETag: \"v1\"", "Content-Length: 6"])
        #expect(try await run([Self.range416, longer, fresh]).file == "HELLO")
    }
}
