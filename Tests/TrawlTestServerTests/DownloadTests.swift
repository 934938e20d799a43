import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

extension TrawlTestServerTests {
    @Suite("Ranged downloads", .hangGuard)
    struct DownloadTests {
        @Test func fullBodyAndValidators() async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(port: server.port, "/download/300000?seed=5")
                #expect(response.status == 200)
                #expect(response.header("Content-Length") == "300000")
                #expect(response.header("Accept-Ranges") == "bytes")
                #expect(response.header("ETag") == "\"5-300000\"")
                #expect(response.header("Content-Range") == nil)
                #expect(response.header("Content-Disposition") == nil)
                let lastModified = try #require(response.header("Last-Modified"))
                #expect(lastModified.hasSuffix(" GMT"))
                #expect(response.body == DownloadContent.bytes(0..<300_000, seed: 5))
                // Same seed, same validators; another seed, other bytes and validators.
                let again = try RawHTTPClient.fetch(port: server.port, "/download/300000?seed=5", method: "HEAD")
                #expect(again.header("Last-Modified") == lastModified)
                #expect(again.header("ETag") == "\"5-300000\"")
                let other = try RawHTTPClient.fetch(port: server.port, "/download/1000?seed=6")
                #expect(other.header("Last-Modified") != lastModified)
                #expect(other.body != DownloadContent.bytes(0..<1000, seed: 5))
                #expect(other.body == DownloadContent.bytes(0..<1000, seed: 6))
                let zero = try RawHTTPClient.fetch(port: server.port, "/download/0")
                #expect(zero.status == 200 && zero.body.isEmpty && zero.header("ETag") == "\"0-0\"")
            }
        }

        @Test func contentIsNotShiftInvariant() {
            let bytes = DownloadContent.bytes(0..<4096, seed: 0)
            #expect(Array(bytes[1...100]) != Array(bytes[0..<100]))
            #expect(Array(bytes[251..<351]) != Array(bytes[0..<100]))
            #expect(DownloadContent.bytes(1000..<1100, seed: 0) == Array(bytes[1000..<1100]))
            #expect((0..<50).map { DownloadContent.byte(at: 1000 + $0, seed: 0) } == Array(bytes[1000..<1050]))
            #expect(Set(bytes).count > 200)
        }

        @Test(arguments: [
            ("bytes=1000-", 1000..<5000),
            ("bytes=1000-1999", 1000..<2000),
            ("bytes=4990-9999", 4990..<5000),
            ("bytes=0-0", 0..<1),
            ("bytes=-100", 4900..<5000),
        ])
        func singleRanges(range: String, expected: Range<Int>) async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/5000?seed=1",
                    headers: [("Range", range)]
                )
                #expect(response.status == 206)
                #expect(
                    response.header("Content-Range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/5000"
                )
                #expect(response.header("Content-Length") == String(expected.count))
                #expect(response.body == DownloadContent.bytes(expected, seed: 1))
            }
        }

        @Test func unsatisfiableAndIgnoredRanges() async throws {
            try await withServer { server in
                for range in ["bytes=5000-", "bytes=9000-9999", "bytes=-0"] {
                    let response = try RawHTTPClient.fetch(
                        port: server.port,
                        "/download/5000",
                        headers: [("Range", range)]
                    )
                    #expect(response.status == 416, "\(range)")
                    #expect(response.header("Content-Range") == "bytes */5000")
                }
                // Invalid or multiple ranges are ignored: the full 200.
                for range in ["bytes=20-10", "items=0-1", "bytes=0-1,5-6", "bytes=x-"] {
                    let response = try RawHTTPClient.fetch(
                        port: server.port,
                        "/download/5000",
                        headers: [("Range", range)]
                    )
                    #expect(response.status == 200, "\(range)")
                    #expect(response.body.count == 5000)
                }
            }
        }

        @Test func ifRangeByETagAndDate() async throws {
            try await withServer { server in
                let first = try RawHTTPClient.fetch(port: server.port, "/download/2000?seed=3", method: "HEAD")
                let etag = try #require(first.header("ETag"))
                let date = try #require(first.header("Last-Modified"))
                for validator in [etag, date] {
                    let response = try RawHTTPClient.fetch(
                        port: server.port,
                        "/download/2000?seed=3",
                        headers: [("Range", "bytes=500-"), ("If-Range", validator)]
                    )
                    #expect(response.status == 206, "\(validator)")
                    #expect(response.body == DownloadContent.bytes(500..<2000, seed: 3))
                }
                for validator in ["\"4-2000\"", "W/" + etag, "Mon, 01 Jan 2001 00:00:00 GMT"] {
                    let response = try RawHTTPClient.fetch(
                        port: server.port,
                        "/download/2000?seed=3",
                        headers: [("Range", "bytes=500-"), ("If-Range", validator)]
                    )
                    #expect(response.status == 200, "\(validator)")
                    #expect(response.header("Content-Range") == nil)
                    #expect(response.body == DownloadContent.bytes(0..<2000, seed: 3))
                }
            }
        }

        @Test func ignoreRangeMode() async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/3000?mode=ignore-range",
                    headers: [("Range", "bytes=100-")]
                )
                #expect(response.status == 200)
                #expect(response.header("Accept-Ranges") == nil)
                #expect(response.header("Content-Range") == nil)
                #expect(response.body == DownloadContent.bytes(0..<3000, seed: 0))
            }
        }

        @Test func changingMode() async throws {
            try await withServer { server in
                let first = try RawHTTPClient.fetch(port: server.port, "/download/4000?mode=changing&seed=2")
                let etag = try #require(first.header("ETag"))
                #expect(etag == "\"2-4000\"")
                #expect(first.body == DownloadContent.bytes(0..<4000, seed: 2))
                let second = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/4000?mode=changing&seed=2",
                    headers: [("Range", "bytes=1000-"), ("If-Range", etag)]
                )
                #expect(second.status == 200)
                #expect(second.header("ETag") != etag)
                #expect(second.header("Last-Modified") != first.header("Last-Modified"))
                #expect(second.body != first.body)
                #expect(second.body == DownloadContent.bytes(0..<4000, seed: 3))
                // Without If-Range the range is served, of the new content.
                let third = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/4000?mode=changing&seed=2",
                    headers: [("Range", "bytes=1000-")]
                )
                #expect(third.status == 206)
                #expect(third.body == DownloadContent.bytes(1000..<4000, seed: 4))
            }
        }

        @Test func ignoreIfRangeModeServesTheNewBytesOfAStaleRange() async throws {
            try await withServer { server in
                let first = try RawHTTPClient.fetch(port: server.port, "/download/4000?mode=ignore-if-range")
                let etag = try #require(first.header("ETag"))
                #expect(etag == "\"0-4000\"")
                // The If-Range no longer matches (the resource changed), yet the range is served: of seed 1.
                let second = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/4000?mode=ignore-if-range",
                    headers: [("Range", "bytes=1000-"), ("If-Range", etag)]
                )
                #expect(second.status == 206)
                #expect(second.header("Content-Range") == "bytes 1000-3999/4000")
                #expect(second.header("ETag") == "\"1-4000\"")
                #expect(second.header("Last-Modified") != first.header("Last-Modified"))
                #expect(second.body == DownloadContent.bytes(1000..<4000, seed: 1))
                // A 416 carries the validators of the current resource.
                let third = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/4000?mode=ignore-if-range",
                    headers: [("Range", "bytes=4000-"), ("If-Range", etag)]
                )
                #expect(third.status == 416)
                #expect(third.header("Content-Range") == "bytes */4000")
                #expect(third.header("ETag") == "\"2-4000\"")
            }
        }

        @Test func weakOrMissingETagLeavesTheDateAsTheIfRangeValidator() async throws {
            try await withServer { server in
                let weak = try RawHTTPClient.fetch(port: server.port, "/download/2000?etag=weak", method: "HEAD")
                #expect(weak.header("ETag") == "W/\"0-2000\"")
                let none = try RawHTTPClient.fetch(port: server.port, "/download/2000?etag=none", method: "HEAD")
                #expect(none.header("ETag") == nil)
                let date = try #require(none.header("Last-Modified"))
                #expect(weak.header("Last-Modified") == date)
                for query in ["etag=weak", "etag=none"] {
                    // A weak tag never matches If-Range (strong comparison), nor does a tag the server did not send.
                    for validator in ["W/\"0-2000\"", "\"0-2000\""] {
                        let response = try RawHTTPClient.fetch(
                            port: server.port,
                            "/download/2000?\(query)",
                            headers: [("Range", "bytes=500-"), ("If-Range", validator)]
                        )
                        #expect(response.status == 200, "\(query) \(validator)")
                    }
                    let byDate = try RawHTTPClient.fetch(
                        port: server.port,
                        "/download/2000?\(query)",
                        headers: [("Range", "bytes=500-"), ("If-Range", date)]
                    )
                    #expect(byDate.status == 206, "\(query)")
                    #expect(byDate.body == DownloadContent.bytes(500..<2000, seed: 0))
                }
            }
        }

        @Test func wrongRangeMode() async throws {
            try await withServer { server in
                let response = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/3000?mode=wrong-range",
                    headers: [("Range", "bytes=1000-1499")]
                )
                #expect(response.status == 206)
                #expect(response.header("Content-Range") == "bytes 0-499/3000")
                #expect(response.body == DownloadContent.bytes(0..<500, seed: 0))
                let fromZero = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/3000?mode=wrong-range",
                    headers: [("Range", "bytes=0-99")]
                )
                #expect(fromZero.header("Content-Range") == "bytes 1-100/3000")
            }
        }

        @Test func cutDeliversExactlyKBytesThenEnds() async throws {
            try await withServer { server in
                for (target, range) in [
                    ("/download/100000?cut=12345", nil), ("/download/100000?cut=777", "bytes=5000-"),
                ] {
                    let client = try RawHTTPClient(port: server.port)
                    try client.request(target, headers: range.map { [("Range", $0)] } ?? [])
                    let head = try client.readHead()
                    #expect(head.header("Content-Length") == (range == nil ? "100000" : "95000"))
                    var body: [UInt8] = []
                    var failure: Error?
                    do {
                        while true {
                            let bytes = try client.readSome()
                            if bytes.isEmpty { break }
                            body += bytes
                        }
                    } catch {
                        failure = error
                    }
                    let start = range == nil ? 0 : 5000
                    let cut = range == nil ? 12345 : 777
                    #expect(body == DownloadContent.bytes(start..<(start + cut), seed: 0))
                    if let failure = failure as? RawHTTPClient.SocketError {
                        #expect(failure.code == ECONNRESET)
                    } else {
                        #expect(failure == nil)
                    }
                    client.close()
                }
                // A cut beyond the body is no cut.
                let whole = try RawHTTPClient.fetch(port: server.port, "/download/100?cut=100")
                #expect(whole.body == DownloadContent.bytes(0..<100, seed: 0))
            }
        }

        @Test func holdDeliversExactlyKBytesThenKeepsTheConnectionSilent() async throws {
            try await withServer { server in
                let client = try RawHTTPClient(port: server.port)
                try client.request("/download/100000?hold=4321")
                let head = try client.readHead()
                #expect(head.header("Content-Length") == "100000")
                #expect(try client.readExactly(4321) == DownloadContent.bytes(0..<4321, seed: 0))
                try client.setTimeout(0.2)
                #expect(throws: RawHTTPClient.SocketError.self) { try client.readSome() }
                #expect(server.stats.inFlight == 1)
                client.close()
                try await waitUntil { server.stats.inFlight == 0 }
            }
        }

        @Test func filenameHeader() async throws {
            try await withServer { server in
                let cases = [
                    ("../../etc/passwd", #"attachment; filename="../../etc/passwd""#),
                    ("a/b.txt", #"attachment; filename="a/b.txt""#),
                    (#"q"b\.txt"#, #"attachment; filename="q\"b\\.txt""#),
                ]
                for (name, expected) in cases {
                    let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                    let response = try RawHTTPClient.fetch(port: server.port, "/download/10?filename=\(encoded)")
                    #expect(response.header("Content-Disposition") == expected)
                }
                let unicode = try RawHTTPClient.fetch(
                    port: server.port,
                    "/download/10?filename=%C3%A9.txt",
                    method: "HEAD"
                )
                #expect(unicode.header("Content-Disposition")?.hasSuffix("filename*=UTF-8''%C3%A9.txt") == true)
            }
        }

        @Test func rateSlowsTheBody() async throws {
            try await withServer { server in
                let start = ContinuousClock.now
                let response = try RawHTTPClient.fetch(port: server.port, "/download/20000?rate=100000")
                let elapsed = ContinuousClock.now - start
                #expect(response.body == DownloadContent.bytes(0..<20000, seed: 0))
                #expect(elapsed >= .milliseconds(150), "20 kB at 100 kB/s takes about 200 ms, took \(elapsed)")
                #expect(elapsed < .seconds(5))
                let delayed = ContinuousClock.now
                _ = try RawHTTPClient.fetch(port: server.port, "/download/4000?chunk=1000&delay_ms=50")
                #expect(ContinuousClock.now - delayed >= .milliseconds(180))
            }
        }

        @Test func badParameters() async throws {
            try await withServer { server in
                let targets = ["/download/x", "/download/10?mode=bogus", "/download/10?seed=abc", "/download/10?etag=x"]
                for target in targets {
                    let response = try RawHTTPClient.fetch(port: server.port, target)
                    #expect(response.status == 400, "\(target)")
                }
            }
        }
    }
}
