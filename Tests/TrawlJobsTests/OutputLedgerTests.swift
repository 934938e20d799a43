import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// The job store's output rules (`OutputLedger`), without files: a small in-memory disk plays the store, doing each
/// action as `JobStore` does, and can be killed after any action (`kill -9`: what was written stays). Whatever the
/// kill point, the reopened run ends with an output that holds every page once, in job order.
@Suite("The job store's output ledger", .hangGuard)
struct OutputLedgerTests {
    typealias Action = OutputLedger.Action

    struct Killed: Error {}

    /// What the checkpoint holds, as far as the ledger is concerned (and the pages counted, for the resume).
    struct Record: Equatable {
        var outputs: [String: Checkpoint.OutputState] = [:]
        var units: [Int: OutputLedger.Unit] = [:]
        var pages: [Int: Int] = [:]
    }

    /// The store's side in memory: segment and output bytes, the checkpoint being built and the one written.
    struct Disk {
        var segments: [Int: [UInt8]] = [:]
        var outputs: [String: [UInt8]] = [:]
        var recording = Record()
        var written: Record?
        /// Actions left before the kill (nil: never killed).
        var budget: Int?
        var log: [Action] = []

        mutating func perform(_ actions: [Action]) throws {
            for action in actions {
                if let left = budget {
                    guard left > 0 else { throw Killed() }
                    budget = left - 1
                }
                log.append(action)
                switch action {
                case .syncSegment: break
                case .appendSegment(let unit, let output, let length), .appendCopy(let unit, let output, let length):
                    let segment = segments[unit] ?? []
                    #expect(Int64(segment.count) == length, "unit \(unit)'s segment holds what the ledger counts")
                    outputs[output, default: []] += segment
                case .merged(let unit, _):
                    recording.units[unit] = nil
                    recording.pages[unit] = nil
                case .syncOutput(let output, let state):
                    #expect(Int64(outputs[output, default: []].count) == state.provisional ?? state.length)
                    recording.outputs[output] = state
                case .parentEndDone(let unit):
                    recording.units[unit] = OutputLedger.Unit(status: .done)
                case .writeCheckpoint:
                    written = recording
                case .removeSegment(let unit):
                    segments[unit] = nil
                case .truncateOutput(let output, let length):
                    #expect(outputs[output, default: []].count >= Int(length), "the output holds what was recorded")
                    outputs[output] = Array(outputs[output, default: []].prefix(Int(length)))
                }
            }
        }
    }

    static func page(_ unit: Int, _ page: Int) -> [UInt8] { Array("{\"unit\":\(unit),\"page\":\(page)}\n".utf8) }

    /// A job: per output, its units in order, and each unit's page count.
    struct Job {
        var order: [String: [Int]]
        var pages: [Int: Int]
        /// Parent units' ends, and the children their pages named (placed before the end when the run starts).
        var ends: [Int: [Int]] = [:]
        var children: [Int: [Int]] = [:]

        func ledger() -> OutputLedger {
            var ledger = OutputLedger(order: order, ends: ends)
            for (end, units) in children.sorted(by: { $0.key < $1.key }) {
                _ = ledger.childrenAnnounced(units, before: end)
            }
            return ledger
        }

        func expected(_ output: String) -> [UInt8] {
            (order[output] ?? []).flatMap { unit in
                (0..<(pages[unit] ?? 0)).flatMap { OutputLedgerTests.page(unit, $0) }
            }
        }
    }

    /// One step of a run: a page committed, a unit done, or a batch written (then its checkpoint).
    enum Step { case page(Int), done(Int), batch }

    /// Plays the store: the page's bytes go to the segment, then the ledger hears of it.
    static func play(_ steps: [Step], _ ledger: inout OutputLedger, _ disk: inout Disk, _ job: Job) throws {
        for step in steps {
            switch step {
            case .page(let unit):
                let number = disk.recording.pages[unit] ?? 0
                disk.segments[unit, default: []] += page(unit, number)
                let length = Int64(disk.segments[unit]!.count)
                disk.recording.pages[unit] = number + 1
                disk.recording.units[unit, default: OutputLedger.Unit()].segment = length
                try disk.perform(ledger.pageCommitted(unit: unit, segment: length))
            case .done(let unit):
                let length = Int64(disk.segments[unit]?.count ?? 0)
                disk.recording.units[unit] = OutputLedger.Unit(status: .done, segment: length)
                try disk.perform(ledger.unitEnded(unit, status: .done, segment: length))
            case .batch:
                try disk.perform(ledger.batchWritten())
                try disk.perform(ledger.checkpointWritten())
            }
        }
    }

    /// After a kill: what the store does at open (segments cut back to their counted bytes, segments the checkpoint
    /// does not know removed), the ledger's truncations, then the rest of the job walked from the saved pages.
    static func resume(_ disk: inout Disk, _ job: Job) throws -> OutputLedger {
        disk.budget = nil
        let record = disk.written ?? Record()
        disk.recording = record
        for unit in Array(disk.segments.keys) {
            if let saved = record.units[unit] {
                disk.segments[unit] = Array(disk.segments[unit]!.prefix(Int(saved.segment)))
            } else {
                disk.segments[unit] = nil
            }
        }
        var ledger = job.ledger()
        try disk.perform(ledger.reopened(outputs: record.outputs, units: record.units))
        let ends = Set(job.ends.values.joined())
        var steps: [Step] = []
        for output in ledger.order.keys.sorted() {
            for unit in (ledger.order[output] ?? []).dropFirst(ledger.outputs[output]?.merged ?? 0)
            where !ends.contains(unit) {
                if ledger.units[unit]?.status != .done {
                    let from = record.pages[unit] ?? 0
                    steps += Array(repeating: Step.page(unit), count: (job.pages[unit] ?? 0) - from)
                }
                steps.append(.done(unit))
            }
        }
        try play(steps + [.batch], &ledger, &disk, job)
        return ledger
    }

    static let job = Job(order: ["out": [0, 1, 2]], pages: [0: 2, 1: 3, 2: 1])
    /// Units finish out of order: 2 before 1, so 2 waits in its segment.
    static let steps: [Step] = [
        .page(1), .page(0), .batch, .page(0), .done(0), .page(2), .batch, .page(1), .done(2), .batch, .page(1),
        .done(1), .batch,
    ]

    @Test func anUninterruptedRunHoldsEveryPageOnceInOrder() throws {
        var ledger = OutputLedger(order: Self.job.order)
        var disk = Disk()
        try Self.play(Self.steps, &ledger, &disk, Self.job)
        #expect(disk.outputs["out"] == Self.job.expected("out"))
        #expect(ledger.complete)
        let length = Int64(Self.job.expected("out").count)
        #expect(disk.written?.outputs["out"] == Checkpoint.OutputState(length: length, merged: 3))
        #expect(disk.segments.isEmpty, "every merged segment is removed once the checkpoint says so")
    }

    @Test func pagesAreSyncedBeforeTheCheckpointThatCountsThem() {
        var ledger = OutputLedger(order: ["out": [0, 1]])
        #expect(ledger.pageCommitted(unit: 1, segment: 10) == [], "nothing reaches the output with a page")
        #expect(ledger.pageCommitted(unit: 0, segment: 5) == [])
        #expect(ledger.batchWritten() == [.syncSegment(unit: 0), .syncSegment(unit: 1), .writeCheckpoint])
        #expect(ledger.batchWritten() == [.writeCheckpoint], "a segment synced once is not synced again")
    }

    @Test func aDoneUnitWaitsForTheUnitsBeforeIt() {
        var ledger = OutputLedger(order: ["out": [0, 1]])
        _ = ledger.pageCommitted(unit: 1, segment: 7)
        _ = ledger.unitEnded(1, status: .done, segment: 7)
        #expect(ledger.batchWritten() == [.syncSegment(unit: 1), .writeCheckpoint])
        _ = ledger.unitEnded(0, status: .done, segment: 3)
        #expect(ledger.batchWritten() == [
            .appendSegment(unit: 0, output: "out", length: 3), .merged(unit: 0, output: "out"),
            .appendSegment(unit: 1, output: "out", length: 7), .merged(unit: 1, output: "out"),
            .syncOutput(output: "out", state: Checkpoint.OutputState(length: 10, merged: 2)), .writeCheckpoint,
        ])
        #expect(ledger.complete)
        #expect(ledger.checkpointWritten() == [.removeSegment(unit: 0), .removeSegment(unit: 1)])
        #expect(ledger.checkpointWritten() == [], "segments are removed once")
    }

    @Test func aFailedUnitHoldsBackTheOutputAndClosingAppendsAProvisionalTail() {
        var ledger = OutputLedger(order: ["out": [0, 1, 2], "other": [3]])
        _ = ledger.unitEnded(0, status: .done, segment: 4)
        _ = ledger.unitEnded(1, status: .failed, segment: 6)
        _ = ledger.unitEnded(2, status: .done, segment: 5)
        _ = ledger.unitEnded(3, status: .done, segment: 0)
        _ = ledger.batchWritten()
        _ = ledger.checkpointWritten()
        #expect(ledger.outputs["out"] == Checkpoint.OutputState(length: 4, merged: 1))
        #expect(!ledger.complete)
        #expect(ledger.closing() == [
            .appendCopy(unit: 1, output: "out", length: 6), .appendCopy(unit: 2, output: "out", length: 5),
            .syncOutput(output: "out", state: Checkpoint.OutputState(length: 4, merged: 1, provisional: 15)),
            .writeCheckpoint,
        ])
        // The next run cuts the provisional tail off and merges again as units finish.
        var next = OutputLedger(order: ["out": [0, 1, 2], "other": [3]])
        let reopened = next.reopened(
            outputs: ledger.outputs,
            units: [1: .init(status: .failed, segment: 6), 2: .init(status: .done, segment: 5)])
        #expect(reopened == [
            .truncateOutput(output: "other", length: 0), .truncateOutput(output: "out", length: 4),
        ])
        #expect(next.outputs["out"]?.provisional == nil)
        _ = next.unitEnded(1, status: .done, segment: 9)
        #expect(next.batchWritten().contains(.syncOutput(output: "out", state: .init(length: 18, merged: 3))))
    }

    @Test func aCompleteJobAppendsNoTail() {
        var ledger = OutputLedger(order: ["out": [0]])
        _ = ledger.unitEnded(0, status: .done, segment: 2)
        _ = ledger.batchWritten()
        #expect(ledger.closing() == [])
    }

    @Test func childrenGoBeforeTheirParentsEndWhichPassesOnlyWhenTheParentIsDone() {
        // Parent unit 0 in "parents"; its children in "children", before its end (unit 100), after an earlier
        // parent's unit 50.
        var ledger = OutputLedger(order: ["parents": [0], "children": [50, 100]], ends: [0: [100]])
        _ = ledger.childrenAnnounced([7, 8], before: 100)
        _ = ledger.childrenAnnounced([9], before: 100)
        #expect(ledger.order["children"] == [50, 7, 8, 9, 100])
        #expect(ledger.output(of: 9) == "children")
        for unit in [50, 9, 8, 7] { _ = ledger.unitEnded(unit, status: .done, segment: 1) }
        var actions = ledger.batchWritten()
        #expect(ledger.outputs["children"]?.merged == 4, "every child is merged, in order")
        #expect(actions.filter { if case .merged = $0 { true } else { false } } == [
            .merged(unit: 50, output: "children"), .merged(unit: 7, output: "children"),
            .merged(unit: 8, output: "children"), .merged(unit: 9, output: "children"),
        ])
        // More children may come while the parent walks: its end is not passed.
        _ = ledger.childrenAnnounced([10], before: 100)
        _ = ledger.unitEnded(10, status: .done, segment: 1)
        #expect(ledger.unitEnded(0, status: .done, segment: 3) == [.parentEndDone(unit: 100)])
        actions = ledger.batchWritten()
        #expect(actions.contains(.merged(unit: 10, output: "children")))
        #expect(actions.contains(.merged(unit: 100, output: "children")))
        #expect(!actions.contains(.appendSegment(unit: 100, output: "children", length: 0)), "an end has no pages")
        #expect(ledger.complete)
    }

    @Test func aFailedParentLeavesItsEndOpen() {
        var ledger = OutputLedger(order: ["parents": [0], "children": [100]], ends: [0: [100]])
        #expect(ledger.unitEnded(0, status: .failed, segment: 3) == [])
        _ = ledger.batchWritten()
        #expect(ledger.outputs["children"]?.merged == 0)
    }

    @Test func childrenAnnouncedBeforeAnUnknownEndAreIgnored() {
        var ledger = OutputLedger(order: ["out": [0]])
        #expect(ledger.childrenAnnounced([5], before: 99) == [])
        #expect(ledger.order["out"] == [0])
    }

    // MARK: - Kills

    /// Runs the job once without a kill to count its actions, then once per kill point: after each resume the
    /// output holds every page once, in order.
    @Test func everyKillPointComesBackToEveryPageOnceInOrder() throws {
        var ledger = OutputLedger(order: Self.job.order)
        var whole = Disk()
        try Self.play(Self.steps, &ledger, &whole, Self.job)
        let total = whole.log.count
        #expect(total > 20)
        for kill in 0...total {
            var disk = Disk(budget: kill)
            var ledger = OutputLedger(order: Self.job.order)
            do {
                try Self.play(Self.steps, &ledger, &disk, Self.job)
            } catch is Killed {}
            _ = try Self.resume(&disk, Self.job)
            #expect(disk.outputs["out"] == Self.job.expected("out"), "killed after \(kill) actions")
        }
    }

    /// The index of the first action matching `match` in an uninterrupted run (the kill point just before it).
    static func killPoint(before match: (Action) -> Bool) throws -> Int {
        var ledger = OutputLedger(order: job.order)
        var disk = Disk()
        try play(steps, &ledger, &disk, job)
        let index = disk.log.firstIndex(where: match)
        return try #require(index)
    }

    static func killed(before match: (Action) -> Bool) throws -> Disk {
        var disk = Disk(budget: try killPoint(before: match))
        var ledger = OutputLedger(order: job.order)
        #expect(throws: Killed.self) { try play(steps, &ledger, &disk, job) }
        return disk
    }

    @Test func killAfterTheSegmentWriteBeforeTheCheckpoint() throws {
        var disk = try Self.killed { $0 == .writeCheckpoint }
        #expect(disk.written == nil, "no checkpoint yet")
        #expect(disk.segments[1] == Self.page(1, 0), "the page is in its segment but not counted")
        _ = try Self.resume(&disk, Self.job)
        #expect(disk.outputs["out"] == Self.job.expected("out"))
    }

    @Test func killAfterTheCheckpointBeforeTheOutputAppend() throws {
        var disk = try Self.killed { if case .appendSegment = $0 { true } else { false } }
        #expect(disk.written?.units[0] != nil, "the checkpoint counts unit 0's pages")
        #expect(disk.outputs["out", default: []].isEmpty)
        _ = try Self.resume(&disk, Self.job)
        #expect(disk.outputs["out"] == Self.job.expected("out"))
    }

    @Test func killAfterTheAppendBeforeTheNextCheckpoint() throws {
        // Unit 0 is appended and its output synced, but the checkpoint still says the output is empty.
        var disk = try Self.killed { if case .syncOutput = $0 { true } else { false } }
        #expect(disk.outputs["out"] == Self.job.expected("out").prefix(2 * Self.page(0, 0).count).map { $0 })
        #expect(disk.written?.outputs["out"]?.merged ?? 0 == 0)
        #expect(disk.segments[0] != nil, "the segment stays until the checkpoint records the merge")
        let ledger = try Self.resume(&disk, Self.job)
        #expect(disk.outputs["out"] == Self.job.expected("out"), "the append is cut back and done again, once")
        #expect(ledger.complete)
    }

    @Test func reopenWithATornTail() throws {
        var ledger = OutputLedger(order: Self.job.order)
        var disk = Disk()
        try Self.play(Array(Self.steps.prefix(7)), &ledger, &disk, Self.job)
        let recorded = try #require(disk.written?.outputs["out"])
        #expect(recorded.merged == 1)
        // Half a page past the recorded length in the output, and in a segment past its counted bytes.
        disk.outputs["out", default: []] += Array("{\"unit\":1,\"pa".utf8)
        disk.segments[1, default: []] += Array("{\"unit\":1".utf8)
        var reopened = Self.job.ledger()
        let actions = reopened.reopened(outputs: disk.written!.outputs, units: disk.written!.units)
        #expect(actions == [.truncateOutput(output: "out", length: recorded.length)])
        _ = try Self.resume(&disk, Self.job)
        #expect(disk.outputs["out"] == Self.job.expected("out"))
    }

    @Test func everyKillPointOfAJobWithChildren() throws {
        // Parent 0 named children 7 and 8; parent 1 none. Child 8 ends first; parent 0 ends last.
        let job = Job(
            order: ["parents": [0, 1], "children": [100, 101]], pages: [0: 1, 1: 1, 7: 2, 8: 1],
            ends: [0: [100], 1: [101]], children: [100: [7, 8]])
        let steps: [Step] = [
            .page(0), .page(1), .batch, .page(7), .page(8), .done(8), .batch, .page(7), .done(7), .done(1), .batch,
            .done(0), .batch,
        ]
        var expected = job
        expected.order["children"] = [7, 8, 100, 101]
        var ledger = job.ledger()
        var whole = Disk()
        try Self.play(steps, &ledger, &whole, job)
        #expect(ledger.order["children"] == [7, 8, 100, 101])
        #expect(whole.outputs["children"] == expected.expected("children"))
        #expect(whole.outputs["parents"] == expected.expected("parents"))
        #expect(whole.log.contains(.parentEndDone(unit: 100)))
        for kill in 0...whole.log.count {
            var disk = Disk(budget: kill)
            var ledger = job.ledger()
            do {
                try Self.play(steps, &ledger, &disk, job)
            } catch is Killed {}
            _ = try Self.resume(&disk, job)
            #expect(disk.outputs["children"] == expected.expected("children"), "killed after \(kill) actions")
            #expect(disk.outputs["parents"] == expected.expected("parents"), "killed after \(kill) actions")
        }
    }
}
