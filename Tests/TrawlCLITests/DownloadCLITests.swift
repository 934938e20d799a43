import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlTestServer

@Suite("trawl get -o: failures, hints and checks before sending", .endToEnd)
struct DownloadCLITests {
    @Test("a body cut mid-way keeps the partial file with a hint to --continue, which then finishes it")
    func cutThenContinue() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let size = 2_000_000
            let cut = try await trawl(
                ["get", server.url("/download/\(size)?cut=800000"), "-o", "file.bin"], in: workspace)
            #expect(cut.status == 56, "curl's receive failure, as curl exits for the same cut")
            #expect(cut.stderr.contains("the partial file file.bin.part is kept: rerun with --continue"), "\(cut.stderr)")
            // The library's own hint ("download again with resume") is not repeated in CLI terms.
            #expect(!cut.stderr.contains("with resume"), "\(cut.stderr)")
            #expect(workspace.exists("file.bin.part"))
            #expect(!workspace.exists("file.bin"))

            try await expectResumedDownload(server.url("/download/\(size)"), size: size, in: workspace)
        }
    }

    @Test("an error status says HTTP N once and gives no resume hint")
    func errorStatus() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(["get", server.url("/status/404"), "-o", "x.bin"], in: workspace)
            #expect(result.status == 22)
            #expect(result.stderr.components(separatedBy: "HTTP 404").count == 2, "\(result.stderr)")
            #expect(!result.stderr.contains("--continue"))
            #expect(!workspace.exists("x.bin"))
        }
    }

    @Test("a wrong --sha256 deletes the download with one hint; --continue then starts fresh instead of looping")
    func checksumMismatch() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let url = server.url("/download/5000")
            let wrong = String(repeating: "a", count: 64)
            let failed = try await trawl(["get", url, "-o", "small.bin", "--sha256", wrong], in: workspace)
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("SHA-256"))
            #expect(failed.stderr.contains("the download was deleted"), "\(failed.stderr)")
            #expect(!failed.stderr.contains("--continue") && !failed.stderr.contains("partial file"), "\(failed.stderr)")
            #expect(!workspace.exists("small.bin") && !workspace.exists("small.bin.part"))
            #expect(!workspace.exists("small.bin.part.validator"))

            var hash = SHA256()
            hash.update(DownloadContent.bytes(0..<5000, seed: 0))
            let right = try await trawl(
                ["get", url, "-o", "small.bin", "--continue", "--sha256", hash.hexDigest()], in: workspace)
            #expect(right.status == 0, "\(right.stderr)")
            #expect(workspace.data("small.bin") == Data(DownloadContent.bytes(0..<5000, seed: 0)))
        }
    }

    @Test("bad -o, --sha256 and -F values are refused before anything is sent")
    func refusedBeforeSending() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try FileManager.default.createDirectory(atPath: workspace.path("dir"), withIntermediateDirectories: true)
            try workspace.write("note.txt", "hello")
            let url = server.url("/download/1000")
            let cases: [(arguments: [String], status: Int32, message: String)] = [
                (["-o", "dir"], 2, "-o 'dir' names a directory: give a file name, for example -o dir/NAME"),
                (["-o", "dir/"], 2, "-o 'dir/' names a directory"),
                (["-o", "nodir/x"], 23, "cannot write 'nodir/x': the directory 'nodir' does not exist"),
                (["-o", "note.txt/x"], 23, "'note.txt' is not a directory"),
                (["-o", "x.bin", "--sha256", "abc"], 2, "--sha256 must be 64 hexadecimal digits"),
                (["-o", "x.bin", "--sha256", String(repeating: "z", count: 64)], 2, "64 hexadecimal digits"),
                (["-F", "f=@dir"], 26, "-F f: 'dir' is a directory; name a file to upload"),
                (["-F", "f=@note.txt;type=text/plain\r\nX-Injected: 1"], 2, "must not contain CR, LF"),
            ]
            for (arguments, status, message) in cases {
                let result = try await trawl(["get", url] + arguments, in: workspace)
                #expect(result.status == status, "\(arguments): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
                #expect(!result.stderr.contains(".tmp-"), "\(arguments): \(result.stderr)")
            }
            #expect(server.stats.requestsServed == 0)
            #expect(!workspace.exists("dir.part") && !workspace.exists("dir/.part"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.path("dir")).isEmpty)
        }
    }

    @Test("-i on a partial file that was already whole shows the server's 416 and says what it means")
    func alreadyComplete() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let content = Data(DownloadContent.bytes(0..<3000, seed: 0))
            #expect(FileManager.default.createFile(atPath: workspace.path("done.bin.part"), contents: content))
            try workspace.write("done.bin.part.validator", "\"0-3000\"")
            let result = try await trawl(
                ["get", server.url("/download/3000"), "-o", "done.bin", "--continue", "-i"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix("HTTP/1.1 416 Range Not Satisfiable\r\n"), "\(result.stdout)")
            #expect(result.stderr.contains("done.bin was already complete"), "\(result.stderr)")
            #expect(result.stderr.contains("nothing was downloaded"), "\(result.stderr)")
            #expect(!result.stderr.contains("resumed at byte"), "\(result.stderr)")
            #expect(workspace.data("done.bin") == content)
        }
    }
}
