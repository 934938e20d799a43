import Foundation
import Testing
import Trawl
import TrawlTestServer

@Suite("Multipart bodies")
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

    @Test func missingFileFailsBeforeSending() async throws {
        var form = MultipartForm()
        form.appendFile(name: "f", path: "/nonexistent/trawl-\(UUID().uuidString)")
        let api = API(baseURL: "http://127.0.0.1:9", client: sharedClient)
        _ = await expectAPIError(NoErrorModel.self, .invalidRoute) {
            _ = try await api.send(Upload(form: form))
        }
    }
}
