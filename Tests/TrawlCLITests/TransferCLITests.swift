import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlTestServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    let peak = await peakResidentBytes(of: child)
    let status = try await child.wait()
    return (RunResult(status: status, stdout: child.stdout, stderr: child.stderr), peak)
}

/// The largest peak RSS read from /proc while `child` runs (0 if none could be read), sampled from a thread of its
/// own: a task would wait for the test process's cooperative pool, which the tests running beside it can hold for
/// seconds, longer than a child may live.
func peakResidentBytes(of child: TrawlProcess) async -> Int {
    await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
        let sampler = Thread {
            var peak = 0
            while child.isRunning {
                if let sample = peakResidentBytes(child.process.pid) { peak = max(peak, sample) }
                usleep(2000)
            }
            continuation.resume(returning: peak)
        }
        sampler.name = "trawl-test-memory-sampler"
        sampler.start()
    }
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

/// Free bytes on the temporary directory's file system.
let temporaryFreeBytes: Int64 = {
    let attributes = try? FileManager.default.attributesOfFileSystem(forPath: NSTemporaryDirectory())
    return (attributes?[.systemFreeSize] as? NSNumber)?.int64Value ?? 0
}()

/// Whether the temporary directory can take a 1 GB file, with room to spare.
let roomForGigabyteFile = temporaryFreeBytes > 1_500_000_000

/// Whether the tests run in CI (`CI=true`), where a test that needs a resource fails without it instead of skipping.
let runningInCI = ProcessInfo.processInfo.environment["CI"] == "true"

/// What `watchGrowth` saw of a file a child writes.
struct FileGrowth {
    /// Each time the file grew: when, and its size just before (the bytes written until then).
    var steps: [(at: ContinuousClock.Instant, before: Int)]
    /// The child's peak RSS at the end.
    var peakResident: Int
    /// The file's size at the end.
    var size: Int
    /// What `read()` returned at the end.
    var reading: Int
    /// Whether the whole window was watched: false when the child ended first.
    var watchedWindow: Bool

    /// Bytes per second the file grew at: the least-squares slope of its size over time, `nil` with fewer than 3
    /// growths. A writer that paces itself against a schedule fixed at its start (as `--limit-rate` does) catches up
    /// after being held up, so the slope keeps to its rate; and one odd point (a size seen in the middle of a 1 MB
    /// write, a growth seen late by the watcher) moves a fit over all of them little, where the slope between two
    /// chosen points would take its error whole.
    func rate() -> Double? {
        guard steps.count >= 3, let first = steps.first else { return nil }
        let points = steps.map { step in
            let elapsed = (step.at - first.at).components
            return (size: Double(step.before), time: Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18)
        }
        let meanTime = points.map(\.time).reduce(0, +) / Double(points.count)
        let meanSize = points.map(\.size).reduce(0, +) / Double(points.count)
        let covariance = points.map { ($0.time - meanTime) * ($0.size - meanSize) }.reduce(0, +)
        let variance = points.map { ($0.time - meanTime) * ($0.time - meanTime) }.reduce(0, +)
        return variance > 0 ? covariance / variance : nil
    }
}

/// Watches the file at `path` grow while `child` writes it, from a thread of its own (a task would wait for the
/// test process's cooperative pool, which the tests running beside it can hold for seconds): from the first write
/// to `window` later (or the child's end), when `read` is also called. `nil` when nothing was written within 30 s.
func watchGrowth(
    of path: String, by child: TrawlProcess, for window: Duration, read: @escaping @Sendable () -> Int
) async -> FileGrowth? {
    await withCheckedContinuation { (continuation: CheckedContinuation<FileGrowth?, Never>) in
        let watcher = Thread {
            func size() -> Int {
                var status = stat()
                return stat(path, &status) == 0 ? Int(status.st_size) : 0
            }
            let deadline = ContinuousClock.now + .seconds(30)
            var steps: [(at: ContinuousClock.Instant, before: Int)] = []
            var last = 0
            var peak = 0
            var watched = false
            var rounds = 0
            while child.isRunning {
                let now = ContinuousClock.now
                let current = size()
                if rounds % 20 == 0 { peak = peakResidentBytes(child.process.pid) ?? peak }
                rounds += 1
                if let first = steps.first, now >= first.at + window {
                    peak = peakResidentBytes(child.process.pid) ?? peak
                    watched = true
                    break
                }
                if current > last {
                    steps.append((now, last))
                    last = current
                }
                if steps.isEmpty, now > deadline { break }
                usleep(500)
            }
            let current = size()
            if current > last { steps.append((ContinuousClock.now, last)) }
            let growth = FileGrowth(
                steps: steps, peakResident: peak, size: current, reading: read(), watchedWindow: watched)
            continuation.resume(returning: steps.isEmpty ? nil : growth)
        }
        watcher.name = "trawl-test-growth-watcher"
        watcher.start()
    }
}

/// Whether `path` is still a symbolic link to `/dev/null`, and `/dev/null` still a character device.
func linkedToDevNull(_ path: String) throws -> Bool {
    let manager = FileManager.default
    let link = try manager.attributesOfItem(atPath: path)[.type] as? FileAttributeType
    let device = try manager.attributesOfItem(atPath: "/dev/null")[.type] as? FileAttributeType
    return link == .typeSymbolicLink && (try? manager.destinationOfSymbolicLink(atPath: path)) == "/dev/null"
        && device == .typeCharacterSpecial
}

extension Client {
    static func fileSizeForTests(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size].flatMap { ($0 as? NSNumber)?.int64Value }
    }
}

@Suite("trawl get: uploads and downloads", .endToEnd)
struct TransferCLITests {
    static let gigabyte = 1_000_000_000

    @Test("a 1 GB body streamed through trawl get keeps memory under 64 MB (generated, nothing on disk)")
    func gigabyteStream() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // To /dev/null through a link (see outputToDevice), with a --limit-rate far above what the transfer
            // reaches here: -o then streams, as it does to /dev/null.
            try FileManager.default.createSymbolicLink(atPath: workspace.path("sink"), withDestinationPath: "/dev/null")
            let (result, peak) = try await runMeasuringMemory(
                ["get", server.url("/bytes/\(Self.gigabyte)"), "-o", "sink", "--limit-rate", "4000000000"],
                in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(peak > 0 && peak < 64 << 20, "peak RSS \(peak)")
            // All of it went through: the server wrote the whole body (and a response head), into the device.
            let written = server.stats.bytesWritten
            #expect(written > Self.gigabyte && written < Self.gigabyte + 1000, "\(written) bytes written")
            #expect(try linkedToDevNull(workspace.path("sink")))
        }
    }

    @Test("-o onto a device writes through it: a link to /dev/null stays a link, /dev/null a device")
    func outputToDevice() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // Through a link, so that a trawl that replaces its output file replaces the link, not /dev/null (it
            // did: run as root, `trawl get URL -o /dev/null` left a regular file in its place).
            try FileManager.default.createSymbolicLink(atPath: workspace.path("sink"), withDestinationPath: "/dev/null")
            let result = try await trawl(
                ["get", server.url("/bytes/100000"), "-o", "sink", "--limit-rate", "1000000000"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try linkedToDevNull(workspace.path("sink")))
        }
    }

    // The one test here that needs the disk: the file is the point. Elsewhere it may skip; in CI it fails instead.
    @Test(
        "a 1 GB download to a file keeps memory under 64 MB and lands whole",
        .enabled(if: roomForGigabyteFile || runningInCI, "needs 1.5 GB free in the temporary directory"))
    func gigabyteDownload() async throws {
        try #require(
            roomForGigabyteFile,
            "CI=true: the temporary directory needs 1.5 GB free for a 1 GB download, has \(temporaryFreeBytes) bytes")
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

    @Test("a 1 GB upload, raw and as a multipart file part, streams from the file in under 64 MB")
    func gigabyteUpload() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // A sparse file: 1 GB long, read back as zeros, with no blocks on the disk.
            let path = workspace.path("up.bin")
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            let handle = try #require(FileHandle(forWritingAtPath: path))
            try handle.truncate(atOffset: UInt64(Self.gigabyte))
            try handle.close()
            let (raw, rawPeak) = try await runMeasuringMemory(
                ["get", "-X", "POST", "--data-file", "up.bin", server.url("/upload")], in: workspace)
            #expect(raw.status == 0, "\(raw.stderr)")
            #expect(raw.stdout == "{\"bytes\":\(Self.gigabyte)}")
            #expect(rawPeak > 0 && rawPeak < 64 << 20, "peak RSS \(rawPeak)")
            let (form, formPeak) = try await runMeasuringMemory(
                ["get", "-F", "note=hello", "-F", "file=@up.bin", server.url("/upload")], in: workspace)
            #expect(form.status == 0, "\(form.stderr)")
            let bytes = Int(form.stdout.filter(\.isNumber)) ?? 0
            #expect(bytes > Self.gigabyte && bytes < Self.gigabyte + 1000, "\(form.stdout)")
            #expect(formPeak > 0 && formPeak < 64 << 20, "peak RSS \(formPeak)")
        }
    }

    @Test("--limit-rate: the body is written at that rate, the server is held back, and memory stays small")
    func limitRate() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // A 1 GB body read at 4 MB/s, watched for 2.5 s (then the run is stopped): unpaced, the reader takes it
            // in at hundreds of MB/s; without back-pressure the server sends it all and the client holds it.
            let rate = 4_000_000
            let child = try TrawlProcess(
                ["get", server.url("/bytes/\(Self.gigabyte)"), "-o", "slow.bin", "--limit-rate", "\(rate)"],
                in: workspace, environment: [:])
            // Through the partial file, as a plain -o download is (resumable, the destination untouched until whole).
            let growth = await watchGrowth(of: workspace.path("slow.bin.part"), by: child, for: .milliseconds(2500)) {
                server.stats.bytesWritten
            }
            child.kill()
            try await child.wait()
            let seen = try #require(growth, "trawl get wrote nothing: \(child.stderr)")
            #expect(seen.watchedWindow, "trawl get ended after \(seen.size) bytes: \(child.stderr)")
            let measured = try #require(seen.rate(), "too few writes: \(seen.steps)")
            #expect(abs(measured / Double(rate) - 1) <= 0.2, "\(measured) bytes/s, not \(rate): \(seen.steps)")
            #expect(seen.peakResident > 0 && seen.peakResident < 64 << 20, "peak RSS \(seen.peakResident)")
            // The server got no further ahead of the reader than the buffers between them hold (socket buffers,
            // libcurl's, the 1 MB stream buffer).
            let ahead = seen.reading - seen.size
            #expect(ahead < 32 << 20, "the server wrote \(ahead) bytes more than were read")
        }
    }

    @Test("--limit-rate on a stream (a device, as stdout): the reader keeps to the rate and holds the server back")
    func limitRateStreamed() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // A link to /dev/null streams (as stdout does) rather than downloading through FILE.part, so the pacing
            // is the stream's own (RatePacer), not the download's. Unpaced, 1 GB goes through at hundreds of MB/s.
            try FileManager.default.createSymbolicLink(atPath: workspace.path("sink"), withDestinationPath: "/dev/null")
            let child = try TrawlProcess(
                ["get", server.url("/bytes/\(Self.gigabyte)"), "-o", "sink", "--limit-rate", "4000000"],
                in: workspace, environment: [:])
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(30)
            while server.stats.bytesWritten == 0, clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let started = clock.now
            try await Task.sleep(for: .seconds(2))
            let written = server.stats.bytesWritten
            let elapsed = clock.now - started
            child.kill()
            try await child.wait()
            #expect(written > 0, "nothing was sent: \(child.stderr)")
            // 4 MB/s for the time watched, plus what the buffers between server and reader hold (socket buffers,
            // libcurl's, the stream's): the server cannot get further ahead of a paced reader.
            let bound = Int(elapsed / .seconds(1) * 4_000_000) + (32 << 20)
            #expect(written < bound, "the server wrote \(written) bytes in \(elapsed) (bound \(bound))")
        }
    }

    @Test("-F sends multipart: fields, files with types and names as the server reports them")
    func multipartForm() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("report.csv", "a,b\n1,2\n")
            let result = try await trawl(
                [
                    "get", "-F", "title=Q3 \"final\"", "-F", "data=@report.csv",
                    "-F", "raw=@report.csv;type=text/x-raw;filename=r.txt", server.url("/multipart"),
                ], in: workspace)
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
            #expect(missing.status == 26, "curl's read error")
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
