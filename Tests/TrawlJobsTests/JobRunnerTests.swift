import Foundation
import Synchronization
import Testing
import TrawlTestSupport
import TrawlTestServer

@testable import Trawl
@testable import TrawlJobs

/// A unit over `/paged/STYLE` of the test server.
func pagedUnit(
    _ server: TestServer, _ style: String, ordinal: Int, count: Int, perPage: Int = 10, query: String = "",
    source: String = "things"
) -> WorkUnit {
    let pagination: PaginationStyle
    let items: JSONKeyPath
    switch style {
    case "page": pagination = .page(totalPages: "total_pages"); items = "items"
    case "cursor": pagination = .cursor(at: "data.-1.id", param: "starting_after"); items = "data"
    case "next": pagination = .nextURL(at: "next"); items = "results"
    default: pagination = .link(); items = .root
    }
    let url = server.url("/paged/\(style)?n=\(count)&per_page=\(perPage)&limit=\(perPage)\(query)")
    return WorkUnit(
        sourceIndex: 0, source: source, ordinal: ordinal, parameters: [], id: "\(source) \(style) \(ordinal)",
        request: Request(url: url), pagination: pagination, items: items, side: [])
}

func expectedLines(_ ids: Range<Int>) -> String {
    ids.map { "{\"id\":\($0),\"name\":\"item-\($0)\"}\n" }.joined()
}

func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "trawl-job-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func fileText(_ path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

@Suite("Bulk job runner", .hangGuard)
struct JobRunnerTests {
    func settings() -> JobSettings {
        var settings = JobSettings()
        settings.backoff = .milliseconds(5)
        settings.maxBackoff = .milliseconds(50)
        return settings
    }

    @Test("units of every style land in job order, each item once")
    func unitsInOrder() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = [
                pagedUnit(server, "page", ordinal: 0, count: 95, query: "&jitter=5"),
                pagedUnit(server, "cursor", ordinal: 1, count: 40),
                pagedUnit(server, "link", ordinal: 2, count: 33, query: "&jitter=5"),
                pagedUnit(server, "next", ordinal: 3, count: 0),
            ]
            let output = directory + "/out.jsonl"
            let runner = JobRunner(
                units: units, fingerprint: "f1", settings: settings(), options: JobRunOptions(output: .file(output)))
            let report = try await runner.run()
            #expect(report.complete)
            #expect(report.failures.isEmpty)
            #expect(report.units.done == 4)
            #expect(report.totals.items == 95 + 40 + 33)
            #expect(fileText(output) == expectedLines(0..<95) + expectedLines(0..<40) + expectedLines(0..<33))
            #expect(report.stateDirectory == nil)
            #expect(!FileManager.default.fileExists(atPath: output + ".trawl-state"))
        }
    }

    @Test("a page that keeps failing stops its unit, is reported, and the others go on")
    func failedPageReported() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = [
                pagedUnit(server, "page", ordinal: 0, count: 50),
                pagedUnit(server, "cursor", ordinal: 1, count: 50, query: "&fail_page=3"),
                pagedUnit(server, "link", ordinal: 2, count: 50),
            ]
            let output = directory + "/out.jsonl"
            var options = JobRunOptions(output: .file(output), stateDirectory: directory + "/state")
            options.pagesInFlightPerUnit = 1
            let report = try await JobRunner(units: units, fingerprint: "f", settings: settings(), options: options)
                .run()
            #expect(!report.complete)
            #expect(report.units.failed == 1)
            #expect(report.units.done == 2)
            let failure = try #require(report.failures.first)
            #expect(failure.unit == "things cursor 1")
            #expect(failure.pageIndex == 2)
            #expect(failure.attempts == 5)
            #expect(failure.status == 500)
            #expect(failure.error.contains("HTTP 500"))
            #expect(failure.keptPages == 2)
            #expect(failure.keptItems == 20)
            // Every item read is in the output, in job order: unit 0, unit 1's first two pages, unit 2. Only unit
            // 0's bytes are final; unit 2's segment stays in the state for the run that completes unit 1.
            let settled = expectedLines(0..<50)
            #expect(fileText(output) == settled + expectedLines(0..<20) + expectedLines(0..<50))
            let record = try #require(report.outputs.first)
            #expect(record.settledBytes == Int64(settled.utf8.count))
            #expect(record.bytes == Int64(fileText(output).utf8.count))
            #expect(record.units == 2)
            #expect(record.incomplete.map(\.unit) == ["things cursor 1"])
            #expect(record.incomplete.first?.pages == 2)
            #expect(record.incomplete.first?.items == 20)
            #expect(fileText(directory + "/state/segments/2.jsonl") == expectedLines(0..<50))
            #expect(report.totals.retries == 4)
        }
    }

    @Test("after a run with failed pages, the runs that retry them end with exactly an uninterrupted run's output")
    func retryAfterFailureMatchesCleanRun() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // Two units fail for good in the middle of the job (a 404 is not retried): a cursor chain at its third
            // page and a planned walk at its second. The server answers 404 to those pages twice, then normally.
            func units(faults: Bool) -> [WorkUnit] {
                func fault(_ page: Int) -> String { faults ? "&fault_404=\(page)&fault_times=2" : "" }
                return [
                    pagedUnit(server, "page", ordinal: 0, count: 50, query: "&tag=a"),
                    pagedUnit(server, "cursor", ordinal: 1, count: 50, query: "&tag=b" + fault(3)),
                    pagedUnit(server, "page", ordinal: 2, count: 50, query: "&tag=c" + fault(2)),
                    pagedUnit(server, "link", ordinal: 3, count: 50, query: "&tag=d"),
                ]
            }
            let clean = directory + "/clean.jsonl"
            let reference = try await JobRunner(
                units: units(faults: false), fingerprint: "clean", settings: settings(),
                options: JobRunOptions(output: .file(clean))
            ).run()
            #expect(reference.complete)
            let expected = ["a", "b", "c", "d"].map { taggedLines($0, 50) }.joined()
            #expect(fileText(clean) == expected)

            let output = directory + "/out.jsonl"
            let options = JobRunOptions(output: .file(output), stateDirectory: directory + "/state")
            func run() async throws -> JobReport {
                try await JobRunner(
                    units: units(faults: true), fingerprint: "f", settings: settings(), options: options
                ).run()
            }
            let first = try await run()
            #expect(!first.complete)
            #expect(first.failures.map(\.unit) == ["things cursor 1", "things page 2"])
            #expect(first.failures.map(\.pageIndex) == [2, 1])
            #expect(first.failures.map(\.status) == [404, 404])
            #expect(first.failures.map(\.keptPages) == [2, 1])
            let partial = taggedLines("a", 50) + taggedLines("b", 20) + taggedLines("c", 10) + taggedLines("d", 50)
            #expect(fileText(output) == partial)
            #expect(first.outputs.first?.incomplete.map(\.unit) == ["things cursor 1", "things page 2"])

            // The pages fail again: the output is rebuilt the same, nothing duplicated.
            server.resetStats()
            let second = try await run()
            #expect(!second.complete)
            #expect(second.resumed)
            #expect(second.failures.count == 2)
            #expect(fileText(output) == partial)
            // The failed pages again, and for the planned unit at most the pages after its failed one that were
            // in flight with it (fetched, never committed). The server may also count, after `resetStats`, a
            // request the run before had sent and cancelled (pages 3 to 5 of the planned unit, in flight when its
            // page 2 failed) but which a busy server reads only now: what this run asked is in its report.
            #expect(second.totals.requests >= 2 && second.totals.requests <= 5, "\(second.totals.requests) requests")
            #expect(server.stats.requestsServed >= second.totals.requests)
            #expect(server.stats.requestsServed <= second.totals.requests + 3, "\(server.stats.requestsServed)")

            // They succeed: the output is the clean run's, byte for byte; only the missing pages were fetched.
            server.resetStats()
            let third = try await run()
            #expect(third.complete, "\(third.failures)")
            #expect(third.failures.isEmpty)
            #expect(third.units.skipped == 1)
            #expect(third.units.done == 3)
            #expect(FileManager.default.contents(atPath: output) == FileManager.default.contents(atPath: clean))
            #expect(third.outputs.first?.incomplete.isEmpty == true)
            #expect(third.outputs.first?.settledBytes == third.outputs.first?.bytes)
            // Cursor pages 3 to 5 (the last says has_more: false); planned pages 2 to 5: asked once each (a
            // retried attempt would be in `retries`). The server's count can hold the second run's stragglers too
            // (see above): at most its 3 cancelled pages.
            #expect(third.totals.pages == 3 + 4)
            #expect(third.totals.requests >= 3 + 4 && third.totals.requests <= 3 + 4 + third.totals.retries)
            #expect(server.stats.requestsServed >= third.totals.requests)
            #expect(
                server.stats.requestsServed <= 3 + 4 + third.totals.retries + 3, "\(server.stats.requestsServed)")
            let segments = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/state/segments")) ?? []
            #expect(segments.isEmpty)
        }
    }

    @Test("a second run of a finished job with state is a new run: fetched again, the output replaced when whole")
    func finishedJobRunsAgain() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = (0..<6).map { pagedUnit(server, ["page", "cursor", "link"][$0 % 3], ordinal: $0, count: 30) }
            let output = directory + "/out.jsonl"
            let options = JobRunOptions(output: .file(output), stateDirectory: directory + "/state")
            let first = try await JobRunner(units: units, fingerprint: "f", settings: settings(), options: options).run()
            #expect(first.complete)
            let before = fileText(output)
            server.resetStats()
            let said = Mutex<[String]>([])
            var again = options
            again.announce = { line in said.withLock { $0.append(line) } }
            let second = try await JobRunner(units: units, fingerprint: "f", settings: settings(), options: again).run()
            #expect(second.complete)
            #expect(second.units.skipped == 0)
            #expect(second.units.done == 6)
            #expect(server.stats.requestsServed > 0)
            #expect(fileText(output) == before)
            #expect(second.outputs.map(\.path) == [output], "the staged file was renamed over the output")
            #expect(!FileManager.default.fileExists(atPath: output + ".trawl-next"))
            #expect(said.withLock { $0.count == 1 && $0[0].contains("finished, so this is a new run") })
            #expect(before == String(repeating: expectedLines(0..<30), count: 6))
        }
    }

    @Test("state from another job is refused unless restarted")
    func changedJobRefused() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = [pagedUnit(server, "page", ordinal: 0, count: 20)]
            var options = JobRunOptions(output: .file(directory + "/out.jsonl"), stateDirectory: directory + "/state")
            _ = try await JobRunner(units: units, fingerprint: "one", settings: settings(), options: options).run()
            await #expect(throws: JobError.self) {
                _ = try await JobRunner(units: units, fingerprint: "two", settings: self.settings(), options: options)
                    .run()
            }
            options.restart = true
            let report = try await JobRunner(units: units, fingerprint: "two", settings: settings(), options: options)
                .run()
            #expect(report.complete)
            #expect(fileText(directory + "/out.jsonl") == expectedLines(0..<20))
        }
    }

    @Test("with-meta wraps each item with source, unit and page")
    func withMeta() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var options = JobRunOptions(output: .directory(directory))
            options.withMeta = true
            let units = [pagedUnit(server, "page", ordinal: 0, count: 12)]
            _ = try await JobRunner(units: units, fingerprint: "f", settings: settings(), options: options).run()
            let lines = fileText(directory + "/things.jsonl").split(separator: "\n")
            #expect(lines.count == 12)
            #expect(lines.first == #"{"source":"things","unit":"things page 0","page":0,"item":{"id":0,"name":"item-0"}}"#)
            #expect(lines.last == #"{"source":"things","unit":"things page 0","page":1,"item":{"id":11,"name":"item-11"}}"#)
        }
    }

    @Test("with-meta adds the page's side fields when the source names some")
    func withMetaSideFields() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var options = JobRunOptions(output: .file(directory + "/out.jsonl"))
            options.withMeta = true
            var unit = pagedUnit(server, "page", ordinal: 0, count: 12)
            unit.side = ["total_count", "missing.field"]
            _ = try await JobRunner(units: [unit], fingerprint: "f", settings: settings(), options: options).run()
            let lines = fileText(directory + "/out.jsonl").split(separator: "\n")
            #expect(lines.count == 12)
            #expect(lines.last == #"{"source":"things","unit":"things page 0","page":1,"item":{"id":11,"name":"item-11"},"side":{"total_count":12,"missing.field":null}}"#)
        }
    }
}
