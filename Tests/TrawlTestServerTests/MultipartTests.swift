import Foundation
import NIOCore
import Testing
import TrawlTestSupport
import TrawlEngine

@testable import TrawlTestServer

/// A `multipart/form-data` body built by hand, so tests control every byte.
private struct FormBody {
    var boundary = "----TrawlBoundary7MA4YWxkTrZu0gW"
    var bytes: [UInt8] = []

    mutating func part(disposition: String, contentType: String? = nil, content: [UInt8]) {
        var head = "--\(self.boundary)\r\nContent-Disposition: \(disposition)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "\r\n"
        self.bytes += Array(head.utf8) + content + Array("\r\n".utf8)
    }

    mutating func close() {
        self.bytes += Array("--\(self.boundary)--\r\n".utf8)
    }

    var contentType: String { "multipart/form-data; boundary=\(self.boundary)" }
}

private func postForm(_ port: Int, _ body: [UInt8], contentType: String?) throws -> RawHTTPClient.Response {
    let headers = contentType.map { [("Content-Type", $0)] } ?? []
    return try RawHTTPClient.fetch(port: port, "/multipart", method: "POST", headers: headers, body: body)
}

private func parts(_ response: RawHTTPClient.Response) throws -> [[String: Any]] {
    try #require(response.json()["parts"] as? [[String: Any]])
}

extension TrawlTestServerTests {
    @Suite("Multipart receiver", .hangGuard)
    struct MultipartTests {
        @Test func simpleFields() async throws {
            try await withServer { server in
                var form = FormBody()
                form.part(disposition: #"form-data; name="field""#, content: Array("hello".utf8))
                form.part(
                    disposition: #"form-data; name="other""#,
                    contentType: "text/plain",
                    content: Array("wörld".utf8)
                )
                form.close()
                let response = try postForm(server.port, form.bytes, contentType: form.contentType)
                #expect(response.status == 200)
                let json = try response.json()
                #expect(json["boundary"] as? String == form.boundary)
                let list = try parts(response)
                try #require(list.count == 2)
                #expect(list[0]["name"] as? String == "field")
                #expect(list[0]["filename"] is NSNull)
                #expect(list[0]["content_type"] is NSNull)
                #expect(list[0]["size"] as? Int == 5)
                #expect(list[0]["value"] as? String == "hello")
                #expect(list[0]["sha256"] as? String == sha256Hex(Array("hello".utf8)))
                #expect(list[1]["name"] as? String == "other")
                #expect(list[1]["content_type"] as? String == "text/plain")
                #expect(list[1]["value"] as? String == "wörld")
                #expect(list[1]["size"] as? Int == 6)
            }
        }

        @Test func largeFilePartChecksum() async throws {
            try await withServer { server in
                let content = DownloadContent.bytes(0..<(2 * 1024 * 1024), seed: 11)
                var form = FormBody(boundary: "b")  // a short boundary: many near-misses in the content
                form.part(
                    disposition: #"form-data; name="note""#,
                    content: Array(repeating: UInt8(ascii: "x"), count: 1025)
                )
                form.part(
                    disposition: #"form-data; name="file"; filename="data.bin""#,
                    contentType: "application/octet-stream",
                    content: content
                )
                form.close()
                let response = try postForm(server.port, form.bytes, contentType: "multipart/form-data; boundary=\"b\"")
                #expect(response.status == 200)
                let list = try parts(response)
                try #require(list.count == 2)
                #expect(list[0]["size"] as? Int == 1025)
                #expect(list[0]["value"] == nil, "fields over 1 KiB carry no value")
                #expect(list[1]["filename"] as? String == "data.bin")
                #expect(list[1]["size"] as? Int == content.count)
                #expect(list[1]["sha256"] as? String == sha256Hex(Array(content)))
                #expect(list[1]["value"] == nil)
            }
        }

        @Test func escapedAndEncodedNames() async throws {
            try await withServer { server in
                var form = FormBody()
                form.part(
                    disposition: #"form-data; name="q\"uo\\te"; filename="a \"b\".txt""#,
                    contentType: "text/plain",
                    content: Array("1".utf8)
                )
                // Browsers: raw UTF-8, quotes as %22.
                form.part(
                    disposition: "form-data; name=\"caf\u{E9}%22x\"; filename=\"\u{65E5}\u{672C}%22.txt\"",
                    content: []
                )
                // RFC 5987 filename* wins over filename.
                form.part(
                    disposition: #"form-data; name="doc"; filename="ete.txt"; filename*=UTF-8''%C3%A9t%C3%A9.txt"#,
                    content: Array("été".utf8)
                )
                // Unquoted token values, extra spaces, a literal percent.
                form.part(disposition: #"form-data;name=plain ;  filename="100%.txt""#, content: Array("z".utf8))
                form.close()
                let response = try postForm(server.port, form.bytes, contentType: form.contentType)
                #expect(response.status == 200)
                let list = try parts(response)
                try #require(list.count == 4)
                #expect(list[0]["name"] as? String == #"q"uo\te"#)
                #expect(list[0]["filename"] as? String == #"a "b".txt"#)
                #expect(list[1]["name"] as? String == "caf\u{E9}\"x")
                #expect(list[1]["filename"] as? String == "\u{65E5}\u{672C}\".txt")
                #expect(list[1]["size"] as? Int == 0)
                #expect(list[2]["filename"] as? String == "\u{E9}t\u{E9}.txt")
                #expect(list[2]["value"] == nil)
                #expect(list[3]["name"] as? String == "plain")
                #expect(list[3]["filename"] as? String == "100%.txt")
            }
        }

        @Test func emptyPartsPreambleAndEpilogue() async throws {
            try await withServer { server in
                var form = FormBody()
                form.bytes = Array("this is a preamble\r\n".utf8)
                form.part(disposition: #"form-data; name="empty""#, content: [])
                form.part(disposition: #"form-data; name="f"; filename="e.txt""#, content: [])
                form.close()
                form.bytes += Array("epilogue, ignored".utf8)
                let response = try postForm(server.port, form.bytes, contentType: form.contentType)
                #expect(response.status == 200)
                let list = try parts(response)
                try #require(list.count == 2)
                #expect(list[0]["size"] as? Int == 0)
                #expect(list[0]["value"] as? String == "")
                #expect(
                    list[0]["sha256"] as? String == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
                )
                #expect(list[1]["filename"] as? String == "e.txt")
                #expect(list[1]["size"] as? Int == 0)
            }
        }

        @Test(
            arguments: [
                ("multipart/form-data", "full", "missing boundary"),
                ("text/plain", "full", "multipart/form-data"),
                (nil, "full", "missing Content-Type"),
                ("multipart/form-data; boundary=B", "noDelimiter", "no multipart delimiter"),
                ("multipart/form-data; boundary=B", "noClose", "truncated"),
                ("multipart/form-data; boundary=B", "inHeaders", "part headers"),
                ("multipart/form-data; boundary=B", "noDisposition", "Content-Disposition"),
                ("multipart/form-data; boundary=B", "badDelimiterLine", "delimiter line"),
            ] as [(String?, String, String)]
        )
        func malformedBodiesAre400(contentType: String?, body: String, message: String) async throws {
            let bodies = [
                "full": "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--B--\r\n",
                "noDelimiter": "just some text",
                "noClose": "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx, and then the body ends",
                "inHeaders": "--B\r\nContent-Disposition: form-data; na",
                "noDisposition": "--B\r\nContent-Type: text/plain\r\n\r\nx\r\n--B--\r\n",
                "badDelimiterLine": "--Bjunk\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--B--\r\n",
            ]
            try await withServer { server in
                let response = try postForm(server.port, Array(bodies[body]!.utf8), contentType: contentType)
                #expect(response.status == 400)
                let error = try #require(try response.json()["error"] as? String)
                #expect(error.contains(message), "\(error)")
            }
        }

        @Test func getIsNotAllowed() async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(port: server.port, "/multipart")
                #expect(response.status == 405)
                #expect(response.header("Allow") == "POST")
            }
        }

        /// The carry-over between reads: every way of splitting the body into two pieces, and
        /// one-byte pieces, give the same parts (delimiters and header ends cut anywhere).
        @Test func parserIsSplitInvariant() {
            var form = FormBody(boundary: "XyZ")
            form.part(disposition: #"form-data; name="a""#, content: Array("\r\n--Xy\r\n-\r\r\n--XyY".utf8))
            form.part(
                disposition: #"form-data; name="b"; filename="b.txt""#,
                contentType: "text/plain",
                content: Array("--XyZ".utf8)
            )
            form.close()
            let body = form.bytes
            func parse(_ pieces: [ArraySlice<UInt8>]) -> [String] {
                var parser = MultipartParser(contentType: form.contentType)
                for piece in pieces {
                    parser.feed(ByteBuffer(bytes: piece))
                }
                parser.finish()
                #expect(parser.error == nil)
                return parser.parts.map {
                    "\($0.name ?? "-")|\($0.filename ?? "-")|\($0.size)|\(Hex.string($0.digest))"
                }
            }
            let expected = parse([body[...]])
            #expect(expected.count == 2)
            #expect(expected.first?.contains("|\(Array("\r\n--Xy\r\n-\r\r\n--XyY".utf8).count)|") == true)
            for cut in 0...body.count {
                #expect(parse([body[..<cut], body[cut...]]) == expected, "cut at \(cut)")
            }
            #expect(parse(body.indices.map { body[$0...$0] }) == expected)
        }

        @Test func contentDispositionDecoding() {
            let browser = ContentDisposition("form-data; name=\"a%22b%0D%0Ac\"; filename=\"x%2Fy%22.txt\"")
            #expect(browser.name == "a\"b\r\nc")
            #expect(browser.filename == "x%2Fy\".txt")
            let latin = ContentDisposition(
                "form-data; name=n; filename*=iso-8859-1'en'%E9t%E9.txt; filename=\"fallback\""
            )
            #expect(latin.filename == "\u{E9}t\u{E9}.txt")
            let bad = ContentDisposition("form-data; name=n; filename*=UTF-8''%FF.txt; filename=\"fallback.txt\"")
            #expect(bad.filename == "fallback.txt", "invalid UTF-8 in filename* falls back")
            #expect(
                MultipartParser.boundary(inContentType: "multipart/form-data; charset=utf-8; BOUNDARY=\"a b\"") == "a b"
            )
        }
    }
}

func sha256Hex(_ bytes: [UInt8]) -> String {
    var hash = SHA256()
    hash.update(bytes)
    return hash.hexDigest()
}
