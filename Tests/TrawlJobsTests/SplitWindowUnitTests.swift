import Foundation
import Testing
import TrawlJSON
import TrawlTestSupport

@testable import TrawlJobs

// Parallel windows' rules without sockets: unit ids, the half-open filter, the ledger's bisection, the job file keys.

private func window(_ from: String, _ to: String, untilParam: String = "until") throws -> IncrementalWindow {
    var spec = IncrementalSpec(cursor: JSONKeyPath("updated_at"), param: "since", initial: "2024-01-01T00:00:00Z")
    spec.split = SplitSpec(untilParam: untilParam, windows: 2, maxPages: 10)
    var made = IncrementalWindow(
        spec: spec, source: "w", start: try #require(CursorValue(from)), primaryKey: nil, seen: [:])
    made.split = IncrementalWindow.SplitPlace(
        bounds: WindowSplit.Window(from: from, to: to), end: try #require(CursorValue(to)), untilParam: untilParam,
        unit: 0, unitID: "w", index: 0, path: .whole, maxPages: 10)
    return made
}

private func lines(_ stamps: [String]) -> [UInt8] {
    Array(stamps.map { "{\"updated_at\":\"\($0)\"}\n" }.joined().utf8)
}

private func splitJob(_ split: String) -> String {
    """
    sources:
      - name: feed
        url: "https://api.example.com/feed"
        paginate: link
        items: ""
        incremental: {cursor: updated_at, param: since, initial: "2024-01-01T00:00:00Z", split: \(split)}
    """
}

private func fileError(_ text: String) -> JobFileError? {
    do {
        _ = try Job.parse(text, file: "jobs.yaml", environment: [:])
    } catch {
        return error
    }
    return nil
}

@Suite("parallel windows without sockets", .hangGuard)
struct SplitWindowUnitTests {
    @Test func unitIDsRoundTripThroughTheirOrdinals() {
        let ids: [UnitID] = [
            .planned(0), .planned(999_999), .child(source: 3, parent: 17, index: 42), .parentEnd(source: 3, parent: 17),
            .window(unit: 5, index: 999, path: .whole), .window(unit: 5, index: 0, path: WindowPath.whole.lower.upper),
        ]
        for id in ids { #expect(UnitID(ordinal: id.ordinal) == id, "\(id)") }
        #expect(Set(ids.map(\.ordinal)).count == ids.count)
        #expect(UnitID.parentEnd(source: 1, parent: 2).isPlaceholder)
        #expect(!UnitID.window(unit: 1, index: 2, path: .whole).isPlaceholder)
    }

    @Test func anOldCheckpointsOrdinalsReadAsBefore() {
        // Ordinals as checkpoints wrote them before the type: a planned unit's position, a child's bit layout.
        #expect(UnitID(ordinal: 7) == .planned(7))
        let child = 1 << 62 | 2 << 52 | 9 << 32 | 4
        #expect(UnitID(ordinal: child) == .child(source: 2, parent: 9, index: 4))
        #expect(UnitID(ordinal: 1 << 62 | 2 << 52 | 9 << 32 | 0xFFFF_FFFF) == .parentEnd(source: 2, parent: 9))
    }

    @Test func windowBoundsKeepTheZoneOfTheStart() throws {
        let windows = try WindowSplit.cut(from: "2024-01-01T02:00:00+02:00", to: "2024-01-01T04:00:00+02:00", count: 2)
        #expect(windows.map(\.from) == ["2024-01-01T02:00:00+02:00", "2024-01-01T03:00:00+02:00"])
        #expect(windows.last?.to == "2024-01-01T04:00:00+02:00")
        let utc = try WindowSplit.cut(from: "2024-01-01T00:00:00Z", to: "2024-01-01T00:10:00Z", count: 2)
        #expect(utc.map(\.to) == ["2024-01-01T00:05:00Z", "2024-01-01T00:10:00Z"])
    }

    @Test func windowPathsNameTheirHalves() {
        let path = WindowPath.whole.lower.upper
        #expect(path.depth == 2)
        #expect(path.description == ".0.1")
        #expect(WindowPath.whole.description.isEmpty)
    }

    @Test func anItemOnTheLowerBoundIsKeptOneOnTheUpperBoundIsLeftToTheNextWindow() throws {
        let made = try window("2024-01-01T00:15:00Z", "2024-01-01T00:30:00Z")
        let page = try made.filter(lines([
            "2024-01-01T00:14:59Z", "2024-01-01T00:15:00Z", "2024-01-01T00:29:59Z", "2024-01-01T00:30:00Z",
        ])).get()
        #expect(page.kept == 2)
        #expect(String(decoding: page.lines, as: UTF8.self)
            == "{\"updated_at\":\"2024-01-01T00:15:00Z\"}\n{\"updated_at\":\"2024-01-01T00:29:59Z\"}\n")
        #expect(page.progress.max == "2024-01-01T00:29:59Z")
    }

    @Test func anItemPastTheUpperBoundFailsThePageNamingTheParameter() throws {
        let made = try window("2024-01-01T00:15:00Z", "2024-01-01T00:30:00Z", untilParam: "updated_before")
        switch made.filter(lines(["2024-01-01T00:20:00Z", "2024-01-01T00:31:00Z"])) {
        case .success: Issue.record("an item past the window's end was accepted")
        case .failure(let problem):
            #expect(problem.message.contains("item 1"))
            #expect(problem.message.contains("the server ignored updated_before=2024-01-01T00:30:00Z"))
        }
    }

    @Test func anUnparsableCursorFailsThePage() throws {
        let made = try window("2024-01-01T00:15:00Z", "2024-01-01T00:30:00Z")
        if case .success = made.filter(lines(["yesterday"])) { Issue.record("'yesterday' was taken as a date") }
    }

    @Test func aBisectedWindowsHalvesGoBeforeItAndItAppendsNothing() {
        var ledger = OutputLedger(order: ["out": [1, 2, 3]])
        _ = ledger.pageCommitted(unit: 2, segment: 100)
        _ = ledger.unitEnded(1, status: .done, segment: 10)
        _ = ledger.unitSplit(2, into: [20, 21])
        #expect(ledger.order["out"] == [1, 20, 21, 2, 3])
        // The halves are not done: nothing past unit 1 is merged, and the bisected window's 100 bytes never are.
        var actions = ledger.batchWritten()
        #expect(actions.contains(.appendSegment(unit: 1, output: "out", length: 10)))
        #expect(!actions.contains { if case .appendSegment(2, _, _) = $0 { true } else { false } })
        _ = ledger.unitEnded(20, status: .done, segment: 5)
        _ = ledger.unitEnded(21, status: .done, segment: 6)
        _ = ledger.unitEnded(3, status: .done, segment: 7)
        actions = ledger.batchWritten()
        let appended = actions.compactMap { action -> Int? in
            if case .appendSegment(let unit, _, _) = action { return unit }
            return nil
        }
        #expect(appended == [20, 21, 3])
        #expect(actions.contains(.merged(unit: 2, output: "out")))
        #expect(ledger.complete)
    }

    @Test func splitKeysParse() throws {
        let job = try Job.parse(
            splitJob("{until_param: updated_before, windows: 8, max_pages: 50, end: \"2024-02-01T00:00:00Z\"}"),
            environment: [:])
        let split = try #require(job.sources.first?.incremental?.split)
        #expect(split == SplitSpec(untilParam: "updated_before", windows: 8, maxPages: 50, end: "2024-02-01T00:00:00Z"))
    }

    @Test func splitChangesTheFingerprint() throws {
        let one = try Job.parse(splitJob("{until_param: until, windows: 8}"), environment: [:])
        let two = try Job.parse(splitJob("{until_param: until, windows: 9}"), environment: [:])
        #expect(one.fingerprint != two.fingerprint)
    }

    @Test(arguments: [
        ("{until_param: until, windows: 0}", "windows"), ("{until_param: until, windows: 1001}", "windows"),
        ("{until_param: until, max_pages: 0}", "max_pages"), ("{until_param: until, max_pages: 100001}", "max_pages"),
        ("{windows: 8}", "until_param"), ("{until_param: until, end: yesterday}", "end"),
        ("{until_param: until, slices: 3}", "slices"),
    ])
    func hostileSplitKeysAreRefusedNamingTheKey(split: String, key: String) throws {
        let error = try #require(fileError(splitJob(split)))
        #expect("\(error)".contains(key), "\(error)")
    }

    @Test func anIntegerCursorNeedsAnEnd() throws {
        let text = splitJob("{until_param: until_id}").replacingOccurrences(
            of: "initial: \"2024-01-01T00:00:00Z\"", with: "initial: 0")
        let error = try #require(fileError(text))
        #expect("\(error)".contains("split.end"), "\(error)")
    }
}
