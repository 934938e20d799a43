import Foundation
import Synchronization
import Testing
@testable import TrawlEngine
import TrawlTestServer

/// The test server's `/bytes/N` pattern: byte i is i % 251.
func patternBytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8($0 % 251) } }

func scratchDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "trawl-download-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

@Suite("Downloads to a file", .timeLimit(.minutes(1)))
struct DownloadTests {
    @Test("the body lands in place through a .part file; progress ends at the total; the hash is reported")
    func plainDownload() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/out.bin"
            let seen = Mutex<[DownloadProgress]>([])
            var options = DownloadOptions()
            options.onProgress = { progress in seen.withLock { $0.append(progress) } }
            let result = try await Client().download(
                Request(url: server.url("/bytes/3000000")), to: destination, options: options)
            let expected = patternBytes(3_000_000)
            var hash = SHA256()
            hash.update(expected)
            #expect(result.bytes == 3_000_000)
            #expect(result.sha256 == hash.hexDigest())
            #expect(result.resumedFrom == 0)
            #expect(FileManager.default.contents(atPath: destination) == Data(expected))
            #expect(!FileManager.default.fileExists(atPath: destination + ".part"))
            #expect(!FileManager.default.fileExists(atPath: destination + ".part.validator"))
            let progress = seen.withLock { $0 }
            #expect(progress.last == DownloadProgress(written: 3_000_000, total: 3_000_000))
            #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.written <= $1.written })
        }
    }

    @Test("a wrong checksum fails and leaves the destination untouched")
    func checksumMismatch() async throws {
        try await withServer { server in
            let directory = try scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let destination = directory + "/out.bin"
            var options = DownloadOptions()
            options.expectedSHA256 = String(repeating: "0", count: 64)
            await #expect(throws: TrawlError.self) {
                _ = try await Client().download(Request(url: server.url("/bytes/1000")), to: destination, options: options)
            }
            #expect(!FileManager.default.fileExists(atPath: destination))
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
    }
}
