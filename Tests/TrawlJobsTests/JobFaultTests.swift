import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@testable import Trawl
@testable import TrawlJobs

/// The lines a tagged unit of `/paged/*` must produce.
func taggedLines(_ tag: String, _ count: Int) -> String {
    (0..<count).map { SyntheticItems.json(id: $0, tag: tag) + "\n" }.joined()
}

@Suite("Bulk jobs against injected faults: output equals ground truth", .hangGuard)
struct JobFaultTests {
    func settings(attempts: Int = 5, maxWait: Duration = .seconds(5)) -> JobSettings {
        var settings = JobSettings()
        settings.attempts = attempts
        settings.backoff = .milliseconds(5)
        settings.maxBackoff = .milliseconds(40)
        settings.maxWait = maxWait
        settings.timeout = .seconds(10)
        return settings
    }

    func run(_ units: [WorkUnit], settings: JobSettings, in directory: String) async throws -> (JobReport, String) {
        let output = directory + "/out.jsonl"
        let report = try await JobRunner(
            units: units, fingerprint: "faults", settings: settings,
            options: JobRunOptions(output: .file(output), stateDirectory: directory + "/state")
        ).run()
        return (report, fileText(output))
    }

    @Test(
        "each fault kind on chosen pages, in every walk shape, is retried and leaves no trace in the output",
        arguments: ["fault_5xx", "fault_reset", "fault_trunc", "fault_short", "fault_drip", "fault_429"])
    func faultKinds(fault: String) async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let query = "&\(fault)=2,5&drip_ms=200&retry_after=0"
            let units = ["page", "cursor", "link", "next"].enumerated().map { ordinal, style in
                pagedUnit(server, style, ordinal: ordinal, count: 60, query: "&tag=\(style)" + query)
            }
            let (report, output) = try await run(units, settings: settings(), in: directory)
            #expect(report.failures.isEmpty, "\(report.failures)")
            #expect(report.complete)
            let expected = ["page", "cursor", "link", "next"].map { taggedLines($0, 60) }.joined()
            #expect(output == expected)
            if fault == "fault_drip" {
                #expect(report.totals.retries == 0)
            } else {
                #expect(report.totals.retries == 8, "two faulty pages in each of four units")
            }
            if fault == "fault_429" { #expect(report.totals.rateLimitWaits == 8) }
        }
    }

    @Test("a 5xx storm (30% of pages fail twice) still ends with every item exactly once")
    func serverErrorStorm() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = (0..<6).map {
                pagedUnit(
                    server, ["page", "cursor", "link"][$0 % 3], ordinal: $0, count: 200,
                    query: "&tag=u\($0)&rate_5xx=0.2&rate_reset=0.1&fault_times=2")
            }
            let (report, output) = try await run(units, settings: settings(attempts: 4), in: directory)
            #expect(report.failures.isEmpty, "\(report.failures)")
            #expect(output == (0..<6).map { taggedLines("u\($0)", 200) }.joined())
            #expect(report.totals.retries > 20)
            #expect(report.totals.pages == 120)
        }
    }

    @Test("Retry-After on one page pauses every request to the host until it passes")
    func retryAfterPausesTheHost() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = [
                pagedUnit(server, "page", ordinal: 0, count: 300, query: "&tag=a&fault_429=3&retry_after=1&delay=2"),
                pagedUnit(server, "page", ordinal: 1, count: 300, query: "&tag=b&delay=2"),
            ]
            // One request at a time per host: when the 429 arrives nothing else is on its way, so any request
            // the server sees during the second after it would have been let through the pause.
            var oneAtATime = settings()
            oneAtATime.perHost = 1
            let (report, output) = try await run(units, settings: oneAtATime, in: directory)
            #expect(output == taggedLines("a", 300) + taggedLines("b", 300))
            #expect(report.totals.rateLimitWaits == 1)
            #expect(report.hosts.values.first?.rateLimitWaitSeconds == 1)
            let log = server.requestLog
            let limited = try #require(log.first { $0.status == 429 })
            let quiet = log.filter {
                $0.receivedAt > limited.receivedAt + .milliseconds(100)
                    && $0.receivedAt < limited.receivedAt + .milliseconds(900)
            }
            #expect(quiet.isEmpty, "\(quiet.map(\.target))")
            #expect(log.contains { $0.receivedAt >= limited.receivedAt + .milliseconds(900) })
        }
    }

    @Test("Retry-After as an HTTP date pauses every request to the host until that time")
    func retryAfterDatePausesTheHost() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // The date is whole seconds: now + 3 s rounded down by the server, so more than 2 s after the 429 was
            // received. The client pauses the host until that date however late it reads the answer (a loaded
            // client that reads it late pauses for less, or not at all), so the checks are on what the server saw
            // and on counts, not on how long the client waited.
            let units = [
                pagedUnit(
                    server, "page", ordinal: 0, count: 100,
                    query: "&tag=d&fault_429=3&retry_after=3&retry_after_date=1&delay=2"),
                pagedUnit(server, "cursor", ordinal: 1, count: 100, query: "&tag=e&delay=2"),
            ]
            var oneAtATime = settings()
            oneAtATime.perHost = 1
            let (report, output) = try await run(units, settings: oneAtATime, in: directory)
            #expect(output == taggedLines("d", 100) + taggedLines("e", 100))
            #expect(report.totals.rateLimitWaits == 1)
            #expect(report.totals.rateLimitWaitSeconds <= 3, "\(report.totals.rateLimitWaitSeconds) s")
            // One request at a time: when the 429 arrives nothing else is on its way, and the next request can only
            // start once the date has passed. None arrives within 2 s of the 429 (less 50 ms for the wall clock the
            // date is read against), and the page is fetched again after it.
            let log = server.requestLog
            let limited = try #require(log.first { $0.status == 429 })
            let early = log.filter {
                $0.receivedAt > limited.receivedAt && $0.receivedAt < limited.receivedAt + .milliseconds(1950)
            }
            #expect(early.isEmpty, "\(early.map { ($0.target, $0.receivedAt - limited.receivedAt) })")
            #expect(log.contains { $0.target == limited.target && $0.status == 200 })
        }
    }

    @Test(
        "remaining 0 on a successful page pauses the host until the reset: X-RateLimit-*, RateLimit-*, RateLimit:",
        arguments: ["", "ietf", "combined"])
    func rateLimitHeadersPause(style: String) async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = [
                pagedUnit(
                    server, "cursor", ordinal: 0, count: 100,
                    query: "&tag=c&ratelimit_page=2&retry_after=1&ratelimit_style=\(style)")
            ]
            let clock = ContinuousClock()
            let start = clock.now
            let (report, output) = try await run(units, settings: settings(), in: directory)
            #expect(output == taggedLines("c", 100))
            #expect(report.totals.rateLimitWaits == 1)
            #expect(report.totals.retries == 0)
            // The X- form's reset is a whole Unix second, so its pause can be anything up to a second; the IETF
            // forms' is the full second.
            if style != "" {
                #expect(clock.now - start >= .milliseconds(900))
                #expect(report.totals.rateLimitWaitSeconds == 1)
            }
        }
    }

    @Test("a pause longer than the job's maximum wait is capped, and reported as capped")
    func cappedWait() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let units = [pagedUnit(server, "page", ordinal: 0, count: 50, query: "&tag=p&fault_429=2&retry_after=3600")]
            let clock = ContinuousClock()
            let start = clock.now
            let (report, output) = try await run(
                units, settings: settings(maxWait: .milliseconds(200)), in: directory)
            #expect(output == taggedLines("p", 50))
            #expect(report.totals.cappedWaits == 1)
            #expect(clock.now - start < .seconds(120), "far less than the hour asked for")
        }
    }

    @Test("a cursor that ends empty stops the unit; one that cycles back fails the unit with the loop, not forever")
    func cursorEndsAndCycles() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            func tokenUnit(_ ordinal: Int, _ query: String) -> WorkUnit {
                var unit = pagedUnit(server, "page", ordinal: ordinal, count: 30)
                unit.request.url = server.url("/paged/token?n=30&per_page=10\(query)")
                unit.pagination = .cursor(at: "next_cursor", param: "cursor", hasMore: nil)
                unit.items = "items"
                return unit
            }
            // Unit 0 ends with next_cursor "", unit 1's last page points back at page 2's cursor (2 -> 3 -> 2).
            let (report, output) = try await run(
                [tokenUnit(0, ""), tokenUnit(1, "&loop_to=2")], settings: settings(), in: directory)
            #expect(output.hasPrefix(expectedLines(0..<30)))
            let failure = try #require(report.failures.first)
            #expect(report.failures.count == 1)
            #expect(failure.unit == "things page 1")
            #expect(failure.error.contains("a pagination loop"), "\(failure.error)")
            #expect(failure.error.contains("already fetched as page index 1"), "\(failure.error)")
            // The cycle was caught when its cursor came back: three pages fetched, none twice.
            #expect(server.requestLog.filter { $0.target.contains("loop_to") }.count == 3)
            // What the report says was kept is what was written: the three pages read, the one that loops
            // included (its items are whole; only its cursor cannot go on).
            #expect(failure.keptPages == 3)
            #expect(failure.keptItems == 30)
            // A second run with the same state fails there again, asking nothing: it does not take the unit for
            // finished, and does not write the kept pages twice.
            let (again, _) = try await run(
                [tokenUnit(0, ""), tokenUnit(1, "&loop_to=2")], settings: settings(), in: directory)
            #expect(again.failures.count == 1)
            #expect(again.failures.first?.error.contains("a pagination loop") == true)
            #expect(!again.complete)
            #expect(server.requestLog.filter { $0.target.contains("loop_to") }.count == 3)
        }
    }

    @Test("a page whose items pass the page byte limit fails as too large, not retried, the pages before it kept")
    func pageByteLimit() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var unit = pagedUnit(server, "page", ordinal: 0, count: 30)
            unit.request.url = server.url("/paged/page?n=30&per_page=10&tag=big&fault_times=0")
            let output = directory + "/out.jsonl"
            var options = JobRunOptions(output: .file(output), stateDirectory: directory + "/state")
            // One page of ten tagged items is about 1.3 KB; the limit lets none through.
            options.maxPageBytes = 500
            let report = try await JobRunner(units: [unit], fingerprint: "limit", settings: settings(), options: options)
                .run()
            let failure = try #require(report.failures.first)
            #expect(failure.error.contains("exceed 500 bytes"), "\(failure.error)")
            #expect(failure.error.contains("--max-page-bytes"))
            #expect(failure.attempts == 1)
            #expect(fileText(output).isEmpty)
        }
    }

    @Test("a 4xx other than 408/429 is not retried")
    func clientErrorsAreFinal() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var unit = pagedUnit(server, "page", ordinal: 0, count: 50)
            unit.request.url = server.url("/status/404")
            let (report, _) = try await run([unit], settings: settings(), in: directory)
            let failure = try #require(report.failures.first)
            #expect(failure.attempts == 1)
            #expect(failure.status == 404)
            #expect(report.totals.retries == 0)
        }
    }

    @Test("a page that is not JSON, or has nothing at the items path, fails at once with what and where")
    func malformedPages() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var notJSON = pagedUnit(server, "page", ordinal: 0, count: 10)
            notJSON.request.url = server.url("/bytes/100")
            var noItems = pagedUnit(server, "page", ordinal: 1, count: 10)
            noItems.request.url = server.url("/json/small")
            noItems.items = "no.such.path"
            let good = pagedUnit(server, "cursor", ordinal: 2, count: 30)
            let (report, output) = try await run([notJSON, noItems, good], settings: settings(), in: directory)
            #expect(report.failures.count == 2)
            let byUnit = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.unit, $0) })
            let bad = try #require(byUnit[notJSON.id])
            #expect(bad.attempts == 1)
            #expect(bad.pageIndex == 0)
            #expect(bad.error.contains("the page is not the expected JSON"), "\(bad.error)")
            #expect(bad.error.contains("byte"), "\(bad.error)")
            let missing = try #require(byUnit[noItems.id])
            #expect(missing.attempts == 1)
            #expect(missing.error.contains("the page has no value at 'no.such.path'"), "\(missing.error)")
            // The good unit's items are in the output, past the failed units (nothing of which is kept), and its
            // segment stays in the state so that a retry can write them again after the failed units' items.
            #expect(report.units.done == 1)
            #expect(report.totals.items == 30)
            #expect(output == expectedLines(0..<30))
            let record = try #require(report.outputs.first)
            #expect(record.settledBytes == 0)
            #expect(record.bytes == Int64(expectedLines(0..<30).utf8.count))
            #expect(record.incomplete.map(\.unit) == [notJSON.id, noItems.id])
            #expect(record.incomplete.map(\.pages) == [0, 0])
            let segments = try FileManager.default.contentsOfDirectory(atPath: directory + "/state/segments")
            #expect(segments.sorted() == ["2.jsonl", "2.pages"], "the segment and its page index (SegmentIndex)")
            #expect(fileText(directory + "/state/segments/2.jsonl") == expectedLines(0..<30))
        }
    }
}
