import Foundation
import Testing
import TrawlEngine
import TrawlTestServer

/// The peak resident memory of a running process, from /proc (VmHWM), in bytes.
func peakResidentBytes(_ pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.filter(\.isNumber)
        return Int(digits).map { $0 * 1024 }
    }
    return nil
}

/// Runs `trawl ARGUMENTS` to the end, sampling its peak RSS every few milliseconds.
func runMeasuringMemory(_ arguments: [String], in workspace: Workspace) async throws -> (RunResult, peak: Int) {
    let child = try TrawlProcess(arguments, in: workspace, environment: [:])
    var peak = 0
    while child.isRunning {
        if let sample = peakResidentBytes(child.process.pid) { peak = max(peak, sample) }
        try await Task.sleep(for: .milliseconds(5))
    }
    let status = try await child.wait()
    return (RunResult(status: status, stdout: child.stdout, stderr: child.stderr), peak)
}

/// Whether a file holds `/download/N`'s content (seed 0), compared in 1 MB pieces so the test process stays small
/// (other suites measure its memory) and never hashes in a debug build.
func fileMatchesContent(_ path: String, size: Int) throws -> Bool {
    let handle = try #require(FileHandle(forReadingAtPath: path))
    defer { try? handle.close() }
    var offset = 0
    while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
        guard data == Data(DownloadContent.bytes(offset..<offset + data.count, seed: 0)) else { return false }
        offset += data.count
    }
    return offset == size
}

/// Runs `trawl get URL -o file.bin --continue` in `workspace`, where `file.bin.part` holds the start of the
/// download, and checks that it resumed and left the whole, correct `file.bin` and no part file.
func expectResumedDownload(
    _ url: String, size: Int, in workspace: Workspace, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let resumed = try await trawl(["get", url, "-o", "file.bin", "--continue"], in: workspace)
    #expect(resumed.status == 0, "\(resumed.stderr)", sourceLocation: sourceLocation)
    #expect(resumed.stderr.contains("resumed at byte"), "\(resumed.stderr)", sourceLocation: sourceLocation)
    #expect(try fileMatchesContent(workspace.path("file.bin"), size: size), sourceLocation: sourceLocation)
    #expect(!workspace.exists("file.bin.part"), sourceLocation: sourceLocation)
}

/// Free bytes on the temporary directory's file system: the 1 GB tests need about 2.5 GB.
let temporaryFreeBytes: Int64 = {
    let attributes = try? FileManager.default.attributesOfFileSystem(forPath: NSTemporaryDirectory())
    return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value ?? 0
}()

extension Client {
    static func fileSizeForTests(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size].flatMap { ($0 as? NSNumber)?.int64Value }
    }
}

@Suite("trawl get: uploads and downloads", .timeLimit(.minutes(3)))
struct TransferCLITests {
    static let gigabyte = 1_000_000_000

    @Test(
        "a 1 GB download to a file keeps memory under 64 MB and lands whole",
        .enabled(if: temporaryFreeBytes > 3 << 30, "needs 3 GB free in the temporary directory"))
    func gigabyteDownload() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let (result, peak) = try await runMeasuringMemory(
                ["get", server.url("/bytes/\(Self.gigabyte)"), "-o", "big.bin"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(peak > 0 && peak < 64 << 20, "peak RSS \(peak)")
            let attributes = try FileManager.default.attributesOfItem(atPath: workspace.path("big.bin"))
            #expect((attributes[.size] as? NSNumber)?.intValue == Self.gigabyte)
            let handle = try #require(FileHandle(forReadingAtPath: workspace.path("big.bin")))
            defer { try? handle.close() }
            for offset in [0, 123_456_789, Self.gigabyte - 1000] {
                try handle.seek(toOffset: UInt64(offset))
                let bytes = try #require(try handle.read(upToCount: 1000))
                #expect(Array(bytes) == (offset..<offset + 1000).map { UInt8($0 % 251) }, "at \(offset)")
            }
            #expect(!workspace.exists("big.bin.part"))
        }
    }

    @Test(
        "a 1 GB upload, raw and as a multipart file part, streams from disk in under 64 MB",
        .enabled(if: temporaryFreeBytes > 3 << 30, "needs 3 GB free in the temporary directory"))
    func gigabyteUpload() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let path = workspace.path("up.bin")
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try #require(FileHandle(forWritingAtPath: path))
            let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) })
            for _ in 0..<(Self.gigabyte >> 20) { try handle.write(contentsOf: block) }
            try handle.close()
            let size = (Self.gigabyte >> 20) << 20
            let (raw, rawPeak) = try await runMeasuringMemory(
                ["get", "-X", "POST", "--data-file", "up.bin", server.url("/upload")], in: workspace)
            #expect(raw.status == 0, "\(raw.stderr)")
            #expect(raw.stdout == "{\"bytes\":\(size)}")
            #expect(rawPeak > 0 && rawPeak < 64 << 20, "peak RSS \(rawPeak)")
            let (form, formPeak) = try await runMeasuringMemory(
                ["get", "-F", "note=hello", "-F", "file=@up.bin", server.url("/upload")], in: workspace)
            #expect(form.status == 0, "\(form.stderr)")
            let bytes = Int(form.stdout.filter(\.isNumber)) ?? 0
            #expect(bytes > size && bytes < size + 1000, "\(form.stdout)")
            #expect(formPeak > 0 && formPeak < 64 << 20, "peak RSS \(formPeak)")
        }
    }

    @Test("-F sends multipart: fields, files with types and names as the server reports them")
    func multipartForm() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("report.csv", "a,b\n1,2\n")
            let result = try await trawl(
                ["get", "-F", "title=Q3 \"final\"", "-F", "data=@report.csv", "-F", "raw=@report.csv;type=text/x-raw;filename=r.txt",
                 server.url("/multipart")], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let parts = try #require(object?["parts"] as? [[String: Any]])
            #expect(parts.map { $0["name"] as? String } == ["title", "data", "raw"])
            #expect(parts[0]["value"] as? String == "Q3 \"final\"")
            #expect(parts[1]["filename"] as? String == "report.csv")
            #expect(parts[1]["content_type"] as? String == "text/csv")
            #expect(parts[1]["size"] as? Int == 8)
            #expect(parts[2]["filename"] as? String == "r.txt")
            #expect(parts[2]["content_type"] as? String == "text/x-raw")
            let missing = try await trawl(["get", "-F", "f=@nope.bin", server.url("/multipart")], in: workspace)
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("cannot read 'nope.bin'"))
        }
    }

    @Test("kill -9 mid-download, then --continue: resumes at the partial length and ends byte-identical")
    func killAndContinue() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            let size = 20_000_000
            // The server sends 3 MB and then holds the connection open and silent, so the child is still
            // waiting for the rest (its stall timeout is 30 s) however late a busy test process gets to the kill.
            let held = server.url("/download/\(size)?hold=3000000")
            let child = try TrawlProcess(["get", held, "-o", "file.bin"], in: workspace, environment: [:])
            let deadline = ContinuousClock.now + .seconds(20)
            while child.isRunning, (Client.fileSizeForTests(workspace.path("file.bin.part")) ?? 0) < 3_000_000,
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            child.kill()
            try await child.wait()
            #expect(child.wasKilled, "the download ended before it was killed")
            let kept = Int(Client.fileSizeForTests(workspace.path("file.bin.part")) ?? 0)
            #expect(kept == 3_000_000)
            #expect(!workspace.exists("file.bin"))

            try await expectResumedDownload(server.url("/download/\(size)"), size: size, in: workspace)

            // --sha256 checks the result; a wrong value fails and keeps nothing in place.
            let wrong = try await trawl(
                ["get", server.url("/download/1000"), "-o", "small.bin", "--sha256", String(repeating: "a", count: 64)],
                in: workspace)
            #expect(wrong.status == 1)
            #expect(wrong.stderr.contains("SHA-256"))
            #expect(!workspace.exists("small.bin"))
        }
    }
}
