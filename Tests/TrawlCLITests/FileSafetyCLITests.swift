import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlTestServer

#if canImport(Glibc)
    import Glibc
#endif

// Issue 13, "Files: write where asked, never elsewhere": source names as file names, symbolic links planted where
// trawl writes, -o naming a pipe or device, --limit-rate on the download path, one run per state directory.

/// A FIFO made by the test, opened for reading without blocking (so a writer never waits for a reader and a run
/// that never opens it cannot hang the test); `drain()` reads what is buffered (keep it under the 64 KiB pipe
/// buffer).
private final class FIFOReader {
    let path: String
    private let descriptor: Int32

    init(_ path: String) throws {
        self.path = path
        try #require(mkfifo(path, 0o600) == 0, "mkfifo \(path): \(String(cString: strerror(errno)))")
        descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(descriptor >= 0)
    }

    deinit { close(descriptor) }

    func drain() -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Still a FIFO, not replaced by a regular file.
    var isFIFO: Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO
    }
}

@Suite("Issue 13: trawl writes where asked, never elsewhere", .endToEnd)
struct FileSafetyCLITests {
    @Test(
        "a source name that is not a safe file name is a usage error naming it; nothing is sent or written",
        arguments: [
            ("../x", "starts with '.'"), ("a/b", "contains '/'"), ("a\\rb", "carriage return"),
            ("a\\nb", "line feed"), ("a\\0b", "NUL"), ("", "is empty"), (".hidden", "starts with '.'"),
            (String(repeating: "n", count: 101), "is 101 bytes long"), ("sp ace", "a space"),
        ])
    func unsafeSourceNames(name: String, problem: String) async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try FileManager.default.createDirectory(atPath: workspace.path("out"), withIntermediateDirectories: true)
            let url = server.url("/paged/link?n=3")
            try workspace.write(
                "job.yaml", "sources:\n  - {name: \"\(name)\", url: \"\(url)\", paginate: link, items: \"\"}\n")
            let result = try await trawl(["fetch", "job.yaml", "--output-dir", "out", "-q"], in: workspace)
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("sources[0].name: "), "\(result.stderr)")
            #expect(result.stderr.contains(problem), "\(result.stderr)")
            #expect(!result.stderr.contains("\r"), "control characters are escaped")
            #expect(server.stats.requestsServed == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: workspace.path("out")).isEmpty)
            #expect(!workspace.exists("x.jsonl"))
        }
    }

    @Test("--name ../x is refused with exit 2 too, and nothing lands outside the directory")
    func unsafeNameFlag() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let result = try await trawl(
                ["fetch", "--url", server.url("/paged/link?n=3"), "--paginate", "link", "--items", "", "--name",
                 "../x", "--output-dir", "out", "-q"], in: workspace)
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("'../x'"), "\(result.stderr)")
            #expect(!workspace.exists("x.jsonl") && !workspace.exists("out"))
            #expect(server.stats.requestsServed == 0)
        }
    }

    @Test("two sources whose names differ only in case are a usage error (one file on a case-insensitive disk)")
    func caseFoldedNames() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let url = "http://127.0.0.1:9/x"
        try workspace.write(
            "job.yaml",
            "sources:\n  - {name: Repos, url: \"\(url)\", paginate: link, items: \"\"}\n"
                + "  - {name: repos, url: \"\(url)\", paginate: link, items: \"\"}\n")
        let result = try await trawl(["fetch", "job.yaml", "--output-dir", "out", "-q"], in: workspace)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("'repos' and sources[0] 'Repos' differ only in case"), "\(result.stderr)")
        #expect(!workspace.exists("out"))
    }

    @Test("a symbolic link planted at get -o's partial file is an error naming it, never written through")
    func plantedPartialLink() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("victim.txt", "precious\n")
            try FileManager.default.createSymbolicLink(
                atPath: workspace.path("f.bin.part"), withDestinationPath: workspace.path("victim.txt"))
            for extra in [[], ["--continue"], ["--limit-rate", "1000000"]] {
                let result = try await trawl(
                    ["get", server.url("/download/5000"), "-o", "f.bin", "-s"] + extra, in: workspace)
                #expect(result.status == 23, "\(extra): \(result.stderr)")
                #expect(result.stderr.contains("f.bin.part: it is a symbolic link"), "\(extra): \(result.stderr)")
                #expect(workspace.text("victim.txt") == "precious\n", "\(extra)")
                #expect(!workspace.exists("f.bin"))
            }
        }
    }

    @Test("fetch: a link planted at the output or as the segments directory is an error, never written through")
    func plantedFetchLinks() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let arguments = ["fetch", "--url", server.url("/paged/link?n=30&per_page=10"), "--paginate", "link",
                             "--items", "", "-q"]
            try workspace.write("victim.txt", "precious\n")
            try FileManager.default.createSymbolicLink(
                atPath: workspace.path("out.jsonl"), withDestinationPath: workspace.path("victim.txt"))
            let output = try await trawl(arguments + ["-o", "out.jsonl"], in: workspace)
            #expect(output.status == 1, "\(output.stderr)")
            #expect(output.stderr.contains("out.jsonl: it is a symbolic link"), "\(output.stderr)")
            #expect(workspace.text("victim.txt") == "precious\n")

            let elsewhere = workspace.path("elsewhere")
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: workspace.path("st"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: workspace.path("st/segments"), withDestinationPath: elsewhere)
            let segments = try await trawl(arguments + ["-o", "real.jsonl", "--state", "st"], in: workspace)
            #expect(segments.status == 1, "\(segments.stderr)")
            #expect(segments.stderr.contains("st/segments is a symbolic link"), "\(segments.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)

            // Found by the hostile sweep: --report wrote through a link planted at its path.
            try FileManager.default.createSymbolicLink(
                atPath: workspace.path("r.json"), withDestinationPath: workspace.path("victim.txt"))
            let report = try await trawl(arguments + ["-o", "r.jsonl", "--report", "r.json"], in: workspace)
            #expect(report.status == 1, "\(report.stderr)")
            #expect(report.stderr.contains("r.json: it is a symbolic link"), "\(report.stderr)")
            #expect(workspace.text("victim.txt") == "precious\n")
            // A FIFO named as the report is written into, as -o is.
            let fifo = try FIFOReader(workspace.path("r.fifo"))
            let piped = try await trawl(arguments + ["-o", "r2.jsonl", "--report", "r.fifo"], in: workspace)
            #expect(piped.status == 0, "\(piped.stderr)")
            #expect(fifo.drain().contains("\"outputs\""))
        }
    }

    @Test("get -o FIFO writes into the FIFO as curl does: no .part, no rename, the FIFO stays; --continue is refused")
    func getIntoFIFO() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let fifo = try FIFOReader(workspace.path("pipe"))
            let result = try await trawl(["get", server.url("/paged/link?n=5&per_page=5"), "-o", "pipe", "-s"],
                                         in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(fifo.drain().hasPrefix("[{\"id\":0"))
            #expect(fifo.isFIFO, "the FIFO was replaced")
            #expect(!workspace.exists("pipe.part") && !workspace.exists("pipe.part.validator"))
            // With --limit-rate too (it used to be the only way in place; now both are).
            let paced = try await trawl(
                ["get", server.url("/paged/link?n=5&per_page=5"), "-o", "pipe", "-s", "--limit-rate", "1000000"],
                in: workspace)
            #expect(paced.status == 0, "\(paced.stderr)")
            #expect(fifo.drain().hasPrefix("[{\"id\":0"))
            #expect(fifo.isFIFO)
            let resume = try await trawl(["get", server.url("/download/10"), "-o", "pipe", "-C"], in: workspace)
            #expect(resume.status == 2, "\(resume.stderr)")
            #expect(resume.stderr.contains("--continue needs -o naming a regular file"), "\(resume.stderr)")
        }
    }

    @Test("fetch -o FIFO, /dev/stdout and /dev/null write in place (no state beside them), every item in order")
    func fetchIntoFIFOAndDevNull() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let fifo = try FIFOReader(workspace.path("pipe"))
            let arguments = ["fetch", "--url", server.url("/paged/link?n=30&per_page=10"), "--paginate", "link",
                             "--items", "", "-q"]
            let result = try await trawl(arguments + ["-o", "pipe"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(fifo.drain() == itemLines(0..<30))
            #expect(fifo.isFIFO)
            // /dev/stdout is a link to the descriptor, here a regular file (the test's capture of stdout).
            let stdout = try await trawl(arguments + ["-o", "/dev/stdout"], in: workspace)
            #expect(stdout.status == 0, "\(stdout.stderr)")
            #expect(stdout.stdout == itemLines(0..<30))
            let null = try await trawl(arguments + ["-o", "/dev/null"], in: workspace)
            #expect(null.status == 0, "\(null.stderr)")
            var status = stat()
            #expect(lstat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR, "/dev/null is a device")
            #expect(!FileManager.default.fileExists(atPath: "/dev/null.trawl-state"))
        }
    }

    @Test("--limit-rate downloads like plain -o: an error status or a cut keeps the old file; --continue finishes")
    func limitRateKeepsTheDownloadPath() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("f.bin", "old content\n")
            let failed = try await trawl(
                ["get", server.url("/status/500"), "-o", "f.bin", "--limit-rate", "1000000", "-s"], in: workspace)
            #expect(failed.status == 22)
            #expect(workspace.text("f.bin") == "old content\n", "the existing file is kept on an error status")
            let size = 60_000
            let cut = try await trawl(
                ["get", server.url("/download/\(size)?cut=20000"), "-o", "f.bin", "--limit-rate", "10000000", "-s"],
                in: workspace)
            #expect(cut.status == 56, "the server closed mid-body: curl's receive failure")
            #expect(cut.stderr.contains("rerun with --continue"), "\(cut.stderr)")
            #expect(workspace.text("f.bin") == "old content\n", "the existing file is kept when the transfer fails")
            #expect(workspace.data("f.bin.part").count == 20000)
            var hash = SHA256()
            hash.update(DownloadContent.bytes(0..<size, seed: 0))
            let resumed = try await trawl(
                ["get", server.url("/download/\(size)"), "-o", "f.bin", "--limit-rate", "10000000", "-C", "--sha256",
                 hash.hexDigest(), "-s"], in: workspace)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(resumed.stderr.contains("resumed at byte 20000"), "\(resumed.stderr)")
            #expect(workspace.data("f.bin") == Data(DownloadContent.bytes(0..<size, seed: 0)))
            let wrong = try await trawl(
                ["get", server.url("/download/\(size)"), "-o", "g.bin", "--limit-rate", "10000000", "--sha256",
                 String(repeating: "0", count: 64), "-s"], in: workspace)
            #expect(wrong.status == 1)
            #expect(wrong.stderr.contains("SHA-256"), "\(wrong.stderr)")
            #expect(!workspace.exists("g.bin"))
        }
    }

    @Test("a second fetch on a state directory in use exits 1 at once naming the holder's pid; a kill frees it")
    func stateDirectoryIsLocked() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Page 2's first answer is half a body, then silence: the first run holds the state until it is killed.
            let arguments = ["fetch", "--url", server.url("/paged/link?n=30&per_page=10&fault_hold=2"), "--paginate",
                             "link", "--items", "", "-q", "-o", "out.jsonl", "--state", "st"]
            let first = try TrawlProcess(arguments, in: workspace, environment: [:])
            defer { first.kill() }
            // The first run holds the lock once it wrote its pid into st/lock.
            let deadline = ContinuousClock.now + .seconds(30)
            while workspace.text("st/lock") != "\(first.process.pid)\n", ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let clock = ContinuousClock()
            let started = clock.now
            let second = try await trawl(arguments, in: workspace)
            #expect(clock.now - started < .seconds(20), "at once, not after the first run")
            #expect(second.status == 1, "\(second.stderr)")
            #expect(second.stderr.contains("st is in use by another trawl run (pid \(first.process.pid))"),
                    "\(second.stderr)")
            #expect(first.isRunning, "the first run was still holding the state")
            // The kernel drops the lock with its process: the next run resumes and finishes the job.
            first.kill()
            try await first.wait()
            let third = try await trawl(arguments, in: workspace)
            #expect(third.status == 0, "\(third.stderr)")
            #expect(workspace.text("out.jsonl") == itemLines(0..<30))
        }
    }
}
