import Foundation
import Synchronization
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

/// The test server's `/bytes/N` pattern: byte i is i % 251.
func patternBytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8($0 % 251) } }

func scratchDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "trawl-download-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

@Suite("Downloads to a file", .hangGuard)
struct DownloadTests {
    @Test("the body lands in place through a .part file; progress ends at the total; the hash is reported")
    func plainDownload() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/out.bin"
            let seen = Mutex<[DownloadProgress]>([])
            var options = DownloadOptions()
            options.computeSHA256 = true
            options.onProgress = { progress in seen.withLock { $0.append(progress) } }
            let result = try await Client().download(
                Request(url: server.url("/bytes/1000000")), to: destination, options: options)
            let expected = patternBytes(1_000_000)
            var hash = SHA256()
            hash.update(expected)
            #expect(result.bytes == 1_000_000)
            #expect(result.sha256 == hash.hexDigest())
            #expect(result.resumedFrom == 0)
            let file = [UInt8](FileManager.default.contents(atPath: destination) ?? Data())
            #expect(firstDifference(file, expected) == nil)
            #expect(!FileManager.default.fileExists(atPath: destination + ".part"))
            #expect(!FileManager.default.fileExists(atPath: destination + ".part.validator"))
            let progress = seen.withLock { $0 }
            #expect(progress.last == DownloadProgress(written: 1_000_000, total: 1_000_000))
            #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.written <= $1.written })
        }
    }

    @Test("a wrong checksum fails, leaves the destination untouched and keeps no partial file to resume")
    func checksumMismatch() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/out.bin"
            var options = DownloadOptions()
            options.expectedSHA256 = String(repeating: "0", count: 64)
            let error = await expectTrawlError(.invalidBody) {
                _ = try await Client().download(Request(url: server.url("/bytes/1000")), to: destination, options: options)
            }
            #expect(error?.message.contains("SHA-256") == true)
            #expect(error?.hint?.contains("deleted") == true)
            #expect(error?.hint?.contains("resume") == false)
            #expect(!FileManager.default.fileExists(atPath: destination))
            #expect(!FileManager.default.fileExists(atPath: destination + ".part"))
            #expect(!FileManager.default.fileExists(atPath: destination + ".part.validator"))
        }
    }

    @Test("a complete partial file with the wrong checksum is removed, so a resume starts fresh instead of looping")
    func checksumMismatchOnResumeDoesNotLoop() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/out.bin"
            let content = DownloadContent.bytes(0..<5000, seed: 0)
            var corrupt = content
            corrupt[4000] ^= 0xFF
            #expect(FileManager.default.createFile(atPath: destination + ".part", contents: Data(corrupt)))
            #expect(FileManager.default.createFile(
                atPath: destination + ".part.validator", contents: Data("\"0-5000\"".utf8)))
            var options = DownloadOptions()
            options.resume = true
            var hash = SHA256()
            hash.update(content)
            options.expectedSHA256 = hash.hexDigest().uppercased()
            let url = server.url("/download/5000")
            _ = await expectTrawlError(.invalidBody) {
                _ = try await Client().download(Request(url: url), to: destination, options: options)
            }
            #expect(!FileManager.default.fileExists(atPath: destination + ".part"))
            #expect(!FileManager.default.fileExists(atPath: destination + ".part.validator"))
            let again = try await Client().download(Request(url: url), to: destination, options: options)
            #expect(again.resumedFrom == 0)
            #expect(FileManager.default.contents(atPath: destination) == Data(content))
        }
    }

    @Test("an expected SHA-256 that is not 64 hex digits fails before anything is sent")
    func malformedExpectedChecksum() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for value in ["abc", String(repeating: "g", count: 64), String(repeating: "a", count: 65), ""] {
            var options = DownloadOptions()
            options.expectedSHA256 = value
            // Port 9 (discard) is closed: anything sent would fail to connect instead.
            let error = await expectTrawlError(.invalidRequest) {
                _ = try await Client().download(
                    Request(url: "http://127.0.0.1:9/x"), to: directory + "/out.bin", options: options)
            }
            #expect(error?.message.contains("64 hexadecimal digits") == true, "\(value)")
        }
        #expect(SHA256.isHexDigest(String(repeating: "aF09", count: 16)))
    }

    @Test("a destination that is a directory, or in a directory that does not exist, fails before sending")
    func destinationChecked() async throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases = [
            (directory, "it is a directory"),
            (directory + "/", "it is a directory"),
            (directory + "/missing/out.bin", "the directory \(directory)/missing does not exist"),
        ]
        for (destination, reason) in cases {
            do {
                _ = try await Client().download(Request(url: "http://127.0.0.1:9/x"), to: destination)
                Issue.record("\(destination) was accepted")
            } catch let error as FileError {
                #expect(error.reason.hasPrefix(reason), "\(error)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        await #expect(throws: FileError.self) {
            _ = try await Client().download(Request(url: "http://127.0.0.1:9/x"), intoDirectory: directory + "/nope")
        }
    }

    @Test("a body cut short keeps the partial file and fails with a hint to resume")
    func truncatedKeepsPartial() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/out.bin"
            await #expect(throws: TrawlError.self) {
                _ = try await Client().download(Request(url: server.url("/short/100000")), to: destination)
            }
            #expect(!FileManager.default.fileExists(atPath: destination))
            #expect(FileManager.default.fileExists(atPath: destination + ".part"))
        }
    }

    @Test("an error status is an error, with no file")
    func errorStatus() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let error = await expectTrawlError(.unexpectedStatus) {
                _ = try await Client().download(Request(url: server.url("/status/404")), to: directory + "/x")
            }
            #expect(error?.status == 404)
            // The status is said once: "HTTP 404 instead of the file", not "... (after HTTP 404)" too.
            #expect(error?.description.components(separatedBy: "HTTP 404").count == 2, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: directory + "/x"))
        }
    }

    @Test("server-given file names are reduced to a plain name inside the directory")
    func fileNames() throws {
        func name(_ header: String?, _ url: String = "http://h/files/report.pdf?x=1") -> String {
            DownloadName.fileName(contentDisposition: header, url: url)
        }
        #expect(name(nil) == "report.pdf")
        #expect(name(#"attachment; filename="q3.csv""#) == "q3.csv")
        #expect(name(#"attachment; filename="../../etc/passwd""#) == "passwd")
        #expect(name(#"attachment; filename=..\..\boot.ini"#) == "boot.ini")
        // In a quoted string a backslash escapes the next character (RFC 6266): what is left is a plain name.
        #expect(name(#"attachment; filename="..\..\boot.ini""#) == "....boot.ini")
        #expect(name(#"attachment; filename="a\"b.txt""#) == #"a"b.txt"#)
        #expect(name("attachment; filename=\"x.txt\"; filename*=UTF-8''%C3%A9t%C3%A9.txt") == "été.txt")
        #expect(name(#"attachment; filename="..""#, "http://h/") == "download")
        #expect(name("attachment; filename=\"a\u{7}b\"") == "ab")
        // Found by the content-disposition fuzz target: C1 controls (U+0080-U+009F) were kept.
        #expect(name("attachment; filename=\"a\u{9B}31mb\u{85}.txt\"") == "a31mb.txt")
        #expect(name("attachment; filename*=UTF-8''x%C2%82y.txt") == "xy.txt")
        #expect(name("attachment; filename=\"\u{82}\u{9F}\"", "http://h/") == "download")
        // Found by the content-disposition fuzz target: a "/" followed by a combining mark is one Character, so
        // the name was not split there (it kept the slash), and a name starting with a combining mark was
        // refused as leaving the directory.
        #expect(name("attachment; filename=\"../\u{356}../\u{356}x.txt\"") == "\u{356}x.txt")
        let directory = FileManager.default.temporaryDirectory.path
        #expect(try DownloadName.path(for: "\u{356}x.txt", in: directory).hasSuffix("/\u{356}x.txt"))
        #expect(throws: FileError.self) { try DownloadName.path(for: "a/\u{356}b", in: directory) }
    }
}

@Suite("Resumed downloads against every server behaviour", .hangGuard)
struct DownloadResumeTests {
    static let size = 2_000_000

    /// Leaves `destination.part` (and its validator) holding exactly the first `kept` bytes of `/download/N`: the
    /// server sends that many and then holds the connection silent (`hold=`), and the download is cancelled once
    /// they are all in the file. (A `cut=` reset can discard bytes still in the socket buffer, all of them even,
    /// and then there is nothing to resume and a resume test would not test resuming.)
    func interrupted(_ server: TestServer, _ destination: String, kept: Int, query: String = "") async throws {
        let url = server.url("/download/\(Self.size)?hold=\(kept)" + query)
        let download = Task { try await Client().download(Request(url: url), to: destination) }
        let partial = destination + ".part"
        let deadline = ContinuousClock.now + .seconds(30)
        while (Client.fileSize(partial) ?? 0) < Int64(kept), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        download.cancel()
        let outcome = await download.result
        guard case .failure(let error as TrawlError) = outcome else {
            Issue.record("the held download did not fail with a TrawlError: \(outcome)")
            return
        }
        #expect(error.code == .cancelled, "\(error)")
        try #require(Client.fileSize(partial) == Int64(kept), "the partial file is not the \(kept) bytes sent")
        #expect(FileManager.default.fileExists(atPath: partial + ".validator"))
    }

    func resume(_ server: TestServer, _ destination: String, query: String = "", hashing: Bool = false)
        async throws -> DownloadResult
    {
        var options = DownloadOptions()
        options.resume = true
        options.computeSHA256 = hashing
        return try await Client().download(
            Request(url: server.url("/download/\(Self.size)?x=1" + query)), to: destination, options: options)
    }

    func expectFile(_ destination: String, seed: Int = 0) {
        let expected = DownloadContent.bytes(0..<Self.size, seed: seed)
        let file = [UInt8](FileManager.default.contents(atPath: destination) ?? Data())
        #expect(firstDifference(file, expected) == nil, "\(destination) is not seed \(seed)'s content")
        #expect(!FileManager.default.fileExists(atPath: destination + ".part"))
    }

    @Test("an interrupted download continues with Range/If-Range and is byte-identical to a fresh one")
    func continues() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            try await interrupted(server, destination, kept: 700_001)
            let result = try await resume(server, destination, hashing: true)
            #expect(result.resumedFrom == 700_001)
            #expect(!result.restarted)
            #expect(result.bytes == Int64(Self.size))
            #expect(result.head.status == 206)
            #expect(result.head.headers["Content-Range"] == "bytes 700001-\(Self.size - 1)/\(Self.size)")
            // The server saw the interrupted request, then one ranged request it answered 206, and nothing else
            // (no second, whole download).
            #expect(server.requestLog.map(\.status) == [200, 206])
            #expect(server.stats.bytesWritten < Self.size + 200_000, "more than the missing bytes were sent")
            expectFile(destination)
            var hash = SHA256()
            hash.update(DownloadContent.bytes(0..<Self.size, seed: 0))
            #expect(result.sha256 == hash.hexDigest())
        }
    }

    @Test("a server that ignores Range sends everything: the download restarts cleanly")
    func rangeIgnored() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            try await interrupted(server, destination, kept: 500_000)
            let result = try await resume(server, destination, query: "&mode=ignore-range")
            #expect(result.resumedFrom == 0)
            #expect(result.restarted)
            expectFile(destination)
        }
    }

    @Test("a resource that changed (If-Range no longer matches) restarts with the new content")
    func resourceChanged() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            // `changing` advances the seed with each request to the path: the first (cut) is seed 0.
            try await interrupted(server, destination, kept: 300_000, query: "&mode=changing")
            let result = try await resume(server, destination, query: "&mode=changing")
            #expect(result.resumedFrom == 0)
            #expect(result.restarted)
            #expect(result.head.status == 200)
            expectFile(destination, seed: 1)
        }
    }

    @Test("a 206 for another range than asked is not appended: the download starts over")
    func wrongRange() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            try await interrupted(server, destination, kept: 400_000)
            let result = try await resume(server, destination, query: "&mode=wrong-range")
            #expect(result.resumedFrom == 0)
            #expect(result.restarted)
            expectFile(destination)
        }
    }

    @Test("a partial file that is already complete is finished from the 416")
    func alreadyComplete() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/file.bin"
            // Every byte arrived but the download was not moved into place (killed just before the rename).
            let content = DownloadContent.bytes(0..<Self.size, seed: 0)
            #expect(FileManager.default.createFile(atPath: destination + ".part", contents: Data(content)))
            let etag = "\"0-\(Self.size)\""
            #expect(FileManager.default.createFile(atPath: destination + ".part.validator", contents: Data(etag.utf8)))
            let result = try await resume(server, destination)
            #expect(result.resumedFrom == Int64(Self.size))
            expectFile(destination)
        }
    }

    @Test("a name from Content-Disposition cannot leave the chosen directory")
    func traversalRefused() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let escaped = "../../etc/passwd".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let result = try await Client().download(
                Request(url: server.url("/download/1000?filename=\(escaped)")), intoDirectory: directory)
            #expect(result.path == URL(fileURLWithPath: directory).standardizedFileURL.path + "/passwd")
            #expect(FileManager.default.contents(atPath: result.path) == Data(DownloadContent.bytes(0..<1000, seed: 0)))
        }
    }
}
