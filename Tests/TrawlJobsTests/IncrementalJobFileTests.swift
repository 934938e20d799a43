import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlJSON
import TrawlTestSupport

@testable import Trawl
@testable import TrawlJobs

private func source(_ incremental: String, extra: String = "") -> String {
    """
    sources:
      - name: issues
        url: "https://api.example.com/issues"
        paginate: link
        items: $
        \(incremental)
    \(extra)
    """
}

private func fileError(_ text: String) -> JobFileError? {
    do {
        _ = try Job.parse(text, file: "jobs.yaml", environment: [:])
    } catch {
        return error
    }
    Issue.record("expected a JobFileError")
    return nil
}

@Suite("incremental: and primary_key: in a job file", .hangGuard)
struct IncrementalJobFileTests {
    @Test func parsesEveryKey() throws {
        let job = try Job.parse(
            source(
                "incremental: {cursor: meta.updated_at, param: since, initial: \"2024-01-01T00:00:00Z\", "
                    + "lookback: 2h, order: desc}\n    primary_key: id"),
            environment: [:])
        let spec = try #require(job.sources[0].incremental)
        #expect(spec.cursor == JSONKeyPath("meta.updated_at"))
        #expect(spec.param == "since")
        #expect(spec.initial == "2024-01-01T00:00:00Z")
        #expect(spec.lookback == "2h")
        #expect(spec.order == .desc)
        #expect(job.sources[0].primaryKey == JSONKeyPath("id"))
        let units = try job.units(environment: [:])
        #expect(units[0].incremental == spec)
        // The fingerprint tells an incremental job from the same job without it.
        let plain = try Job.parse(source(""), environment: [:])
        #expect(plain.fingerprint != job.fingerprint)
    }

    @Test func integerCursorsAndTheirLookback() throws {
        let job = try Job.parse(
            source("incremental: {cursor: id, param: since_id, initial: 0, lookback: 100}"), environment: [:])
        let spec = try #require(job.sources[0].incremental)
        #expect(spec.windowStart(mark: nil) == "0")
        #expect(spec.windowStart(mark: "1500") == "1400")
        #expect(spec.order == .asc)
    }

    @Test func dateLookbackKeepsTheMarksForm() throws {
        let spec = IncrementalSpec(cursor: "u", param: "since", initial: "2024-01-01T00:00:00Z", lookback: "90m")
        #expect(spec.windowStart(mark: "2024-03-01T12:00:00Z") == "2024-03-01T10:30:00Z")
        #expect(spec.windowStart(mark: "2024-03-01T12:00:00+02:00") == "2024-03-01T08:30:00Z")
        #expect(spec.windowStart(mark: "2024-03-01T12:00:00.250Z") == "2024-03-01T10:30:00.250Z")
    }

    @Test func errorsNameTheKeyAndLine() throws {
        let badInitial = try #require(fileError(source("incremental: {cursor: u, param: since, initial: yesterday}")))
        #expect(badInitial.field == "sources[0].incremental.initial")
        #expect(badInitial.message.contains("neither an ISO-8601 date nor an integer"))
        #expect(badInitial.line == 6)
        let badLookback = try #require(
            fileError(source("incremental: {cursor: u, param: since, initial: 0, lookback: 2h}")))
        #expect(badLookback.field == "sources[0].incremental.lookback")
        #expect(badLookback.message.contains("not a whole number"))
        let badOrder = try #require(
            fileError(source("incremental: {cursor: u, param: since, initial: 0, order: newest}")))
        #expect(badOrder.field == "sources[0].incremental.order")
        let missing = try #require(fileError(source("incremental: {cursor: u, initial: 0}")))
        #expect(missing.message.contains("param is missing"))
        let unknown = try #require(fileError(source("incremental: {cursor: u, param: p, initial: 0, since: 1}")))
        #expect(unknown.message.contains("unknown key 'since'"))
    }

    @Test("a lookback past the smallest cursor starts the window at the smallest one instead of trapping")
    func hugeLookbackIsClamped() throws {
        let integer = try #require(CursorValue("-9223372036854775807"))
        #expect(integer.subtracting("9223372036854775807")?.text == "-9223372036854775808")
        let date = try #require(CursorValue("2024-01-01T00:00:00Z"))
        // The first days of year 1 (the formatter's calendar before 1582 shifts the day), a date that parses back.
        for huge in ["999999999999d", "1e300d"] {
            let start = try #require(date.subtracting(huge))
            #expect(start.text.hasPrefix("0001-01-"), "\(start.text)")
            #expect(CursorValue(start.text).map { $0 < date } == true)
        }
        #expect(date.subtracting("1h")?.text == "2023-12-31T23:00:00Z")
        let spec = IncrementalSpec(
            cursor: "id", param: "since", initial: "-9223372036854775807", lookback: "9223372036854775807")
        #expect(throws: Never.self) { try spec.validate(field: "sources[0].incremental") }
    }

    @Test("docs/jobs.md's incremental example parses as it says")
    func documentedExample() throws {
        let yaml = try codeBlock("yaml", after: "## Incremental sync", in: try docsFile("jobs.md"))
        let job = try Job.parse(yaml, environment: [:])
        #expect(job.sources[0].incremental == IncrementalSpec(
            cursor: "updated_at", param: "since", initial: "2024-01-01T00:00:00Z", lookback: "1h", order: .asc))
        #expect(job.sources[0].primaryKey == "id")
    }

    @Test func cacheSettings() throws {
        let job = try Job.parse(source("", extra: "settings: {cache: jobs.cache, on_not_modified: skip}"), environment: [:])
        #expect(job.settings.cache == "jobs.cache")
        #expect(job.settings.skipNotModified)
        let plain = try Job.parse(source(""), environment: [:])
        #expect(plain.settings.cache == nil && !plain.settings.skipNotModified)
        let bad = try #require(fileError(source("", extra: "settings: {cache: c, on_not_modified: maybe}")))
        #expect(bad.field == "settings.on_not_modified")
        #expect(bad.message.contains("unknown value 'maybe'"))
    }

    @Test func windowFilterKeepsNewAndChangedItems() throws {
        let spec = IncrementalSpec(cursor: "u", param: "since", initial: "0", lookback: "5")
        let seen = ["1": SeenItem(h: hash(#"{"id":1,"u":10}"#), c: "10")]
        let window = IncrementalWindow(
            spec: spec, source: "s", start: try #require(CursorValue("5")), primaryKey: "id", seen: seen)
        let lines = Array("""
            {"id":0,"u":4}
            {"id":1,"u":10}
            {"id":2,"u":12}
            {"id":3}

            """.utf8)
        let page = try window.filter(lines).get()
        #expect(String(decoding: page.lines, as: UTF8.self) == "{\"id\":2,\"u\":12}\n{\"id\":3}\n")
        #expect(page.kept == 2)
        #expect(page.reachedOlder)
        #expect(page.progress.max == "12")
        #expect(Set(page.progress.window.keys) == ["1", "2"])
        let wrongKind = IncrementalWindow(
            spec: spec, source: "s", start: try #require(CursorValue("5")), primaryKey: nil, seen: [:])
        guard case .failure(let problem) = wrongKind.filter(Array("{\"u\":\"soon\"}\n".utf8)) else {
            Issue.record("a cursor that is not an integer was taken")
            return
        }
        #expect(problem.message.contains("item 0 has u \"soon\", not an integer like '5'"))
    }
}

private func hash(_ line: String) -> String {
    var hasher = SHA256()
    hasher.update(Array(line.utf8))
    return String(hasher.hexDigest().prefix(32))
}
