import Foundation
import Testing
import TrawlTestServer

@testable import Trawl

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

@Suite("Bulk job runner", .timeLimit(.minutes(2)))
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
            // Unit 0 is in the output; unit 2 waits in its segment until unit 1 succeeds.
            #expect(fileText(output) == expectedLines(0..<50))
            #expect(report.totals.retries == 4)
        }
    }

    @Test("a second run of a finished job with state fetches nothing and leaves the output as it was")
    func finishedJobIsIdempotent() async throws {
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
            let second = try await JobRunner(units: units, fingerprint: "f", settings: settings(), options: options).run()
            #expect(second.complete)
            #expect(second.units.skipped == 6)
            #expect(server.stats.requestsServed == 0)
            #expect(fileText(output) == before)
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
