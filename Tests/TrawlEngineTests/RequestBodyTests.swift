import Foundation
import Synchronization
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Request bodies and progress", .hangGuard)
struct RequestBodyTests {
    @Test func bytesBodyWithContentType() async throws {
        try await withServer { server in
            let request = Request(
                url: server.url("/echo"), method: .post,
                body: .string(#"{"a":1}"#, contentType: "application/json"))
            let echo = try decodeEcho(try await Client().send(request))
            #expect(echo.method == "POST")
            #expect(echo.body == #"{"a":1}"#)
            #expect(echo.header("Content-Type") == ["application/json"])
            #expect(echo.header("Content-Length") == ["7"])
            #expect(echo.header("Expect").isEmpty)
        }
    }

    @Test func postWithoutBodySendsZeroLength() async throws {
        try await withServer { server in
            let echo = try decodeEcho(try await Client().send(Request(url: server.url("/echo"), method: .post)))
            #expect(echo.method == "POST")
            #expect(echo.header("Content-Length") == ["0"])
        }
    }

    @Test func customMethodsAreSent() async throws {
        try await withServer { server in
            let client = Client()
            for method: HTTPMethod in [.delete, .options, "PURGE"] {
                let echo = try decodeEcho(try await client.send(Request(url: server.url("/echo"), method: method)))
                #expect(echo.method == method.rawValue)
            }
            let patch = Request(url: server.url("/echo"), method: .patch, body: .string("x"))
            #expect(try decodeEcho(try await client.send(patch)).body == "x")
        }
    }

    @Test func fileBodyIsStreamedFromDisk() async throws {
        try await withServer { server in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-upload-\(UUID()).txt").path
            // Text (the echo reports the body as a string) in which every line holds its own number: a part of
            // the file sent twice, skipped or out of order shows in the content even when the length is right.
            let bytes = numberedLines(375_000)
            #expect(bytes.count == 3_000_000)
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let echo = try decodeEcho(try await Client().send(
                Request(url: server.url("/echo"), method: .put, body: .file(path))))
            #expect(echo.method == "PUT")
            #expect(echo.header("Content-Length") == ["3000000"])
            #expect(echo.bodyLength == 3_000_000)
            #expect(firstDifference(Array(echo.body.utf8), bytes) == nil, "the server received other bytes")
        }
    }

    /// `count` lines of 8 bytes: the line's number in 7 digits, then a newline.
    private func numberedLines(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: UInt8(ascii: "\n"), count: count * 8)
        for line in 0..<count {
            var number = line
            for digit in (0..<7).reversed() {
                bytes[line * 8 + digit] = UInt8(ascii: "0") + UInt8(number % 10)
                number /= 10
            }
        }
        return bytes
    }

    @Test func missingBodyFileFailsBeforeSending() async throws {
        try await withServer { server in
            let error = await expectTrawlError(.bodySourceFailed) {
                _ = try await Client().send(
                    Request(url: server.url("/upload"), method: .post, body: .file("/nonexistent/trawl-body")))
            }
            #expect(error?.description.contains("/nonexistent/trawl-body") == true)
        }
    }

    @Test func asyncSequenceBodyIsSentChunked() async throws {
        try await withServer { server in
            let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
                Task {
                    for index in 0..<50 {
                        continuation.yield(Array("chunk\(index);".utf8))
                        try? await Task.sleep(for: .milliseconds(2))
                    }
                    continuation.finish()
                }
            }
            let request = Request(url: server.url("/echo"), method: .post, body: .stream(chunks))
            let echo = try decodeEcho(try await Client().send(request))
            #expect(echo.body == (0..<50).map { "chunk\($0);" }.joined())
            #expect(echo.header("Transfer-Encoding") == ["chunked"])
        }
    }

    @Test func failingBodyStreamFailsTheRequest() async throws {
        struct Boom: Error {}
        try await withServer { server in
            let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
                continuation.yield(Array("partial".utf8))
                continuation.finish(throwing: Boom())
            }
            _ = await expectTrawlError(.bodySourceFailed) {
                _ = try await Client().send(Request(url: server.url("/upload"), method: .post, body: .stream(chunks)))
            }
        }
    }

    @Test func progressReachesTheTotalBothWays() async throws {
        try await withServer { server in
            let last = Mutex<TransferProgress?>(nil)
            var download = Request(url: server.url("/bytes/2000000"))
            download.onProgress = { progress in last.withLock { $0 = progress } }
            _ = try await Client().send(download)
            let received = try #require(last.withLock { $0 })
            #expect(received.received == 2_000_000)
            #expect(received.expectedToReceive == 2_000_000)

            last.withLock { $0 = nil }
            var upload = Request(url: server.url("/upload"), method: .post, body: .bytes(pattern(1_500_000)))
            upload.onProgress = { progress in last.withLock { $0 = progress } }
            _ = try await Client().send(upload)
            let sent = try #require(last.withLock { $0 })
            #expect(sent.sent == 1_500_000)
            #expect(sent.expectedToSend == 1_500_000)
        }
    }
}
