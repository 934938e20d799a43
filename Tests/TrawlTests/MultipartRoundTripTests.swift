import Foundation
import Synchronization
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

/// What `/multipart` reports for one part.
struct ReceivedPart: Decodable, Equatable {
    let name: String
    let filename: String?
    let content_type: String?
    let size: Int
    let sha256: String
    let value: String?
}

struct ReceivedForm: Decodable {
    let parts: [ReceivedPart]
}

func hexSHA256(_ bytes: [UInt8]) -> String {
    var hash = SHA256()
    hash.update(bytes)
    return hash.hexDigest()
}

@Suite("Multipart uploads round trip through the test server", .hangGuard)
struct MultipartRoundTripTests {
    @Test("fields, files from disk and streams arrive with their names, types, sizes and checksums")
    func roundTrip() async throws {
        try await withServer { server in
            let directory = NSTemporaryDirectory() + "trawl-mp-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let fileBytes = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            let path = directory + "/photo.JPG"
            #expect(FileManager.default.createFile(atPath: path, contents: Data(fileBytes)))

            var form = MultipartForm()
            form.append(name: "title", value: "Report \"Q3\"")
            form.append(name: "ünïcødé name", value: "värde")
            form.appendFile(name: "upload", path: path, filename: "a \"quoted\" été.jpg")
            form.appendFile(name: "plain", path: path)
            let chunks = [Array("line 1\n".utf8), Array("line 2\n".utf8)]
            form.append(
                name: "log", stream: AsyncStream { continuation in
                    for chunk in chunks { continuation.yield(chunk) }
                    continuation.finish()
                }, length: 14, filename: "app.log")
            form.append(name: "empty", value: "")

            var request = Request(url: server.url("/multipart"), method: .post, body: try form.requestBody())
            let progress = Mutex<[TransferProgress]>([])
            request.onProgress = { update in progress.withLock { $0.append(update) } }
            let response = try await sharedClient.send(request)
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            let received = try JSONDecoder().decode(ReceivedForm.self, from: Data(response.body))
            #expect(received.parts.map(\.name) == ["title", "ünïcødé name", "upload", "plain", "log", "empty"])
            #expect(received.parts[0].value == "Report \"Q3\"")
            #expect(received.parts[1].value == "värde")
            #expect(received.parts[2].filename == "a \"quoted\" été.jpg")
            #expect(received.parts[2].content_type == "image/jpeg")
            #expect(received.parts[2].size == fileBytes.count)
            #expect(received.parts[2].sha256 == hexSHA256(fileBytes))
            #expect(received.parts[3].filename == "photo.JPG")
            #expect(received.parts[4].filename == "app.log")
            #expect(received.parts[4].content_type == "text/plain")
            #expect(received.parts[4].sha256 == hexSHA256(Array("line 1\nline 2\n".utf8)))
            #expect(received.parts[5].size == 0)
            // Upload progress ends exactly at the body's length.
            let last = try #require(progress.withLock { $0.last })
            #expect(last.expectedToSend != nil)
            #expect(last.sent == last.expectedToSend)
        }
    }

    @Test("a stream part without a length makes the body chunked, and it still arrives whole")
    func unknownLength() async throws {
        try await withServer { server in
            var form = MultipartForm()
            let piece = [UInt8](repeating: 7, count: 100_000)
            form.append(
                name: "data", stream: AsyncStream { continuation in
                    for _ in 0..<10 { continuation.yield(piece) }
                    continuation.finish()
                }, length: nil, filename: "data.bin")
            let response = try await sharedClient.send(
                Request(url: server.url("/multipart"), method: .post, body: try form.requestBody()))
            let received = try JSONDecoder().decode(ReceivedForm.self, from: Data(response.body))
            #expect(received.parts.first?.size == 1_000_000)
            #expect(received.parts.first?.content_type == "application/octet-stream")
        }
    }

    @Test("media types are guessed from the extension")
    func mediaTypes() {
        #expect(MediaTypes.guess(forFileName: "a.PNG") == "image/png")
        #expect(MediaTypes.guess(forFileName: "data.jsonl") == "application/jsonl")
        #expect(MediaTypes.guess(forFileName: "noext") == "application/octet-stream")
        #expect(MediaTypes.guess(forFileName: ".hidden") == "application/octet-stream")
    }
}
