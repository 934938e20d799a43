import ArgumentParser
import Foundation
import Trawl
import TrawlJobs
import TrawlEngine
import TrawlTestServer

/// `trawl demo`: the main job end to end against the embedded server — a bulk job over a synthetic API with
/// injected faults, its output verified against what the server served.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a bulk job against the embedded loopback API (with injected faults) and verify the output.",
        discussion: """
            Starts the test server on 127.0.0.1 with three sources: repositories paginated by Link headers, \
            events by page number with a total, charges by cursor (about 2,000 pages of 100 items). Some \
            pages answer 429 with Retry-After, 503, or cut their body short; the job retries them. The JSONL \
            output is then checked against the items the server generates: count, checksum, no duplicates.
            """)

    @Option(
        name: [.customShort("o"), .customLong("output-dir")],
        help: "Where the JSONL files go (default: a new temporary directory per run).")
    var outputDirectory: String?

    @Option(
        help: "Scale the number of items per unit (default 1: 200,000 items).",
        transform: { try NumberOption.number($0, unit: "times", positive: true, upTo: 1000) })
    var scale: Double = 1

    @Flag(help: "Inject no faults.")
    var noFaults = false

    @Flag(name: [.customShort("q"), .customLong("quiet")], help: "No progress display.")
    var quiet = false

    func validate() throws {
        if scale <= 0 || scale > 100 { throw ValidationError("--scale must be in (0, 100]") }
    }

    func run() async throws {
        // A directory of its own per run, so that two demos at once don't write (and restart) the same files.
        let directory = outputDirectory ?? (NSTemporaryDirectory() + "trawl-demo-" + UUID().uuidString)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let server = try await TestServer.start(threads: 2)
        do {
            try await runDemo(server: server, directory: directory)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    private func runDemo(server: TestServer, directory: String) async throws {
        let demo = DemoAPI(base: String(server.url("/").dropLast()), scale: scale, faults: !noFaults)
        print("trawl demo: \(demo.job.sources.count) sources, \(demo.unitCount) units, about \(demo.pageCount) pages "
            + "of 100 items from the embedded API at \(server.url("/"))")
        if !noFaults {
            print("injected faults: 429 + Retry-After on ~0.2% of pages, 503 on ~1%, reset mid-body ~0.5%, truncated ~0.5%")
        }
        var options = JobRunOptions(output: .directory(directory), stateDirectory: directory + "/.state")
        options.restart = true
        let runner = try JobRunner(job: demo.job, options: options)
        let display = JobProgressDisplay(quiet: quiet)
        display.start { runner.progress }
        let report = try await runner.run()
        display.stop(runner.progress)
        print(JobSummary.text(report))
        let verification = try demo.verify(directory: directory)
        for line in verification.lines { print(line) }
        print("output: \(directory)/{\(demo.job.sources.map(\.name).joined(separator: ","))}.jsonl")
        guard report.failures.isEmpty, report.complete, verification.ok else {
            if !report.failures.isEmpty {
                FileHandle.standardError.write(Data(TerminalText.safe(JobSummary.failureText(report, retry: "trawl demo")).utf8))
            }
            throw CLIFailure("error: the demo's output does not match what the server served")
        }
        try? FileManager.default.removeItem(atPath: directory + "/.state")
    }
}

/// The demo's synthetic API: three sources over `/paged/*`, each unit tagged so its items are unique.
struct DemoAPI {
    let job: Job
    let itemsPerUnit: [String: Int]

    init(base: String, scale: Double, faults: Bool) {
        let faultQuery = faults
            ? "&rate_429=0.002&retry_after=1&rate_5xx=0.01&rate_reset=0.005&rate_trunc=0.005" : ""
        func count(_ items: Int) -> Int { max(1, Int((Double(items) * scale).rounded())) }
        let repos = count(8_000)
        let events = count(10_000)
        let charges = count(10_000)
        itemsPerUnit = ["repos": repos, "events": events, "charges": charges]
        let orgs = ["apple", "swiftlang", "vapor", "hummingbird", "grpc", "pointfree", "apollo", "realm",
                    "kitura", "perfect"]
        let days = (1...6).map { String(format: "2024-01-%02d", $0) }
        let accounts = (1...6).map { "acct_\($0)" }
        var settings = JobSettings()
        settings.concurrency = 16
        settings.perHost = 16
        settings.backoff = .milliseconds(50)
        settings.maxBackoff = .seconds(1)
        settings.attempts = 6
        settings.timeout = .seconds(20)
        job = Job(
            sources: [
                JobSource(
                    name: "repos", url: base + "/paged/link?n=\(repos)&per_page=100&tag=repos-{org}" + faultQuery,
                    pagination: .link(), items: .root,
                    matrix: [MatrixAxis(name: "org", values: orgs)]),
                JobSource(
                    name: "events",
                    url: base + "/paged/page?n=\(events)&per_page=100&tag=events-{day}" + faultQuery,
                    pagination: .page(totalPages: "total_pages", totalItems: "total_count"), items: "items",
                    side: ["total_count"], matrix: [MatrixAxis(name: "day", values: days)]),
                JobSource(
                    name: "charges",
                    url: base + "/paged/cursor?n=\(charges)&limit=100&tag=charges-{account}" + faultQuery,
                    pagination: .cursor(at: "data.-1.id", param: "starting_after"), items: "data",
                    matrix: [MatrixAxis(name: "account", values: accounts)]),
            ],
            settings: settings)
    }

    var unitCount: Int { job.sources.reduce(0) { $0 + ($1.matrix.first?.values.count ?? 1) } }

    var pageCount: Int {
        job.sources.reduce(0) { total, source in
            total + (source.matrix.first?.values.count ?? 1) * ((itemsPerUnit[source.name, default: 0] + 99) / 100)
        }
    }

    struct Verification {
        var ok: Bool
        var lines: [String]
    }

    /// Compares each source's file with the items the server generates for its units, in job order.
    func verify(directory: String) throws -> Verification {
        var ok = true
        var lines: [String] = []
        for source in job.sources {
            let axis = source.matrix[0]
            var expected = LineDigest()
            for value in axis.values {
                let tag = source.name + "-" + value.value
                for id in 0..<itemsPerUnit[source.name, default: 0] {
                    expected.add(Array((SyntheticItems.json(id: id, tag: tag) + "\n").utf8))
                }
            }
            let actual = try LineDigest(file: directory + "/" + source.name + ".jsonl")
            let match = expected.count == actual.count && expected.checksum == actual.checksum
                && actual.duplicates == 0 && actual.complete
            ok = ok && match
            lines.append(
                "verify \(source.name): \(actual.count) items (expected \(expected.count)), "
                    + String(format: "checksum %016llx (expected %016llx)", actual.checksum, expected.checksum)
                    + ", \(actual.duplicates) duplicates" + (actual.complete ? "" : ", last line torn")
                    + (match ? ": OK" : ": MISMATCH"))
        }
        return Verification(ok: ok, lines: lines)
    }
}

/// Line count, an order-sensitive FNV-1a checksum of the bytes, and duplicate lines (by 64-bit line hash).
struct LineDigest {
    var count = 0
    var checksum: UInt64 = 0xcbf2_9ce4_8422_2325
    var duplicates = 0
    var complete = true
    private var seen = Set<UInt64>()
    private var line: UInt64 = 0xcbf2_9ce4_8422_2325

    init() {}

    init(file path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIFailure("error: the output \(path) is missing")
        }
        defer { try? handle.close() }
        var pending = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            for byte in chunk {
                feed(byte)
                pending = byte == UInt8(ascii: "\n") ? 0 : pending + 1
            }
        }
        complete = pending == 0
    }

    mutating func add(_ bytes: [UInt8]) {
        for byte in bytes { feed(byte) }
    }

    private mutating func feed(_ byte: UInt8) {
        checksum = (checksum ^ UInt64(byte)) &* 0x100_0000_01b3
        line = (line ^ UInt64(byte)) &* 0x100_0000_01b3
        if byte == UInt8(ascii: "\n") {
            count += 1
            if !seen.insert(line).inserted { duplicates += 1 }
            line = 0xcbf2_9ce4_8422_2325
        }
    }
}
