import Foundation
import Synchronization
import Testing
import TrawlTestSupport
import Trawl
import TrawlTestServer

@Suite("Multipart bodies", .hangGuard)
struct MultipartTests {
    struct Upload: PostRoute {
        typealias Output = Echo
        let form: MultipartForm
        var path: RoutePath { "echo" }
        var body: RouteBody { .multipart(form) }
    }

    @Test func roundTripsFieldsAndAStreamedFile() async throws {
        let name = "trawl-mp-\(UUID().uuidString).txt"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        let fileText = String(repeating: "0123456789", count: 10_000)   // 100 kB: several 64 kB chunks
        try Data(fileText.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        var form = MultipartForm(boundary: "BOUNDARY")
        form.append(name: "say \"hi\"", value: "a\r\nb")
        form.append(name: "naïve ⚓", value: "café")
        form.appendFile(name: "doc", path: path, filename: "r\"e\npo.txt", contentType: "text/plain")
        try await withServer { server in
            let echo = try await api(server).send(Upload(form: form))
            #expect(echo.header("Content-Type") == ["multipart/form-data; boundary=BOUNDARY"])
            let expected = """
                --BOUNDARY\r
                Content-Disposition: form-data; name="say %22hi%22"\r
                \r
                a\r
                b\r
                --BOUNDARY\r
                Content-Disposition: form-data; name="naïve ⚓"\r
                \r
                café\r
                --BOUNDARY\r
                Content-Disposition: form-data; name="doc"; filename="r%22e%0Apo.txt"\r
                Content-Type: text/plain\r
                \r
                \(fileText)\r
                --BOUNDARY--\r

                """
            #expect(echo.body == expected)
            #expect(echo.bodyLength == expected.utf8.count)
            #expect(echo.header("Content-Length") == [String(expected.utf8.count)])
        }
    }

    struct Counted: Decodable, Sendable { let bytes: Int }

    struct CountingUpload: PostRoute {
        typealias Output = Counted
        let form: MultipartForm
        var path: RoutePath { "upload" }
        var body: RouteBody { .multipart(form) }
    }

    @Test("upload progress through a route climbs to exactly the bytes the server received")
    func routeProgress() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-mp-\(UUID()).bin").path
        try Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var form = MultipartForm()
        form.append(name: "note", value: "hello")
        form.appendFile(name: "data", path: path)
        try await withServer { server in
            let seen = Mutex<[TransferProgress]>([])
            let counted = try await api(server).send(CountingUpload(form: form)) { update in
                seen.withLock { $0.append(update) }
            }
            let updates = seen.withLock { $0 }
            let last = try #require(updates.last)
            #expect(counted.bytes > 3_000_000)
            #expect(last.sent == Int64(counted.bytes))
            #expect(last.expectedToSend == Int64(counted.bytes))
            #expect(updates.allSatisfy { $0.expectedToSend == Int64(counted.bytes) })
            #expect(zip(updates, updates.dropFirst()).allSatisfy { $0.sent <= $1.sent })
            #expect(updates.count > 1)

            // The undecoded variant reports the same way.
            let raw = Mutex<TransferProgress?>(nil)
            let response = try await api(server).response(for: CountingUpload(form: form)) { update in
                raw.withLock { $0 = update }
            }
            #expect(response.status == 200)
            #expect(raw.withLock { $0?.sent } == Int64(counted.bytes))
        }
    }

    @Test("a directory as a file part, or a content type with CR/LF, fails before anything is sent")
    func invalidPartsFailBeforeSending() async throws {
        let api = API(baseURL: "http://127.0.0.1:9", client: sharedClient)
        var directoryForm = MultipartForm()
        directoryForm.appendFile(name: "f", path: NSTemporaryDirectory())
        let directory = await expectAPIError(NoErrorModel.self, .invalidRoute) {
            _ = try await api.send(Upload(form: directoryForm))
        }
        #expect((directory?.underlying as? FileError)?.reason == "it is a directory, not a file")

        var typeForm = MultipartForm()
        typeForm.append(name: "f", bytes: [1, 2, 3], filename: "x.bin", contentType: "text/plain\r\nX-Injected: 1")
        let injected = await expectAPIError(NoErrorModel.self, .invalidRoute) {
            _ = try await api.send(Upload(form: typeForm))
        }
        let invalid = injected?.underlying as? MultipartForm.InvalidPart
        #expect(invalid?.name == "f")
        #expect(invalid?.description.contains("CR, LF") == true)
    }

    @Test func missingFileFailsBeforeSending() async throws {
        var form = MultipartForm()
        form.appendFile(name: "f", path: "/nonexistent/trawl-\(UUID().uuidString)")
        let api = API(baseURL: "http://127.0.0.1:9", client: sharedClient)
        _ = await expectAPIError(NoErrorModel.self, .invalidRoute) {
            _ = try await api.send(Upload(form: form))
        }
    }
}
