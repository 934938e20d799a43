import Foundation
import Trawl
import TrawlEngine

/// An incremental source's mark in a run's report.
public struct MarkChange: Sendable, Codable, Equatable {
    /// The committed mark when the run started (`nil`: none yet, the run started at `initial`).
    public var before: String?
    /// The mark after the run: advanced only when the run's output was committed (else equal to `before`).
    public var after: String?
    /// The value sent as the incremental parameter (the mark minus the lookback, or `initial`).
    public var since: String
    /// This run's id (with `--output-dir`, its items are in `DIR/SOURCE/RUN.jsonl`).
    public var run: String
    /// Whether the run committed, and so moved the mark.
    public var committed: Bool

    /// `mark NAME: BEFORE -> AFTER (…)` for the summary.
    public func line(_ source: String) -> String {
        let state = committed ? "committed" : "not committed: the mark stays"
        return "mark \(source): \(before ?? "(none)") -> \(after ?? "(none)") (run \(run), since=\(since); \(state))"
    }
}

/// An incremental run: its id, whether it starts afresh, and each source's mark and window start.
struct IncrementalRun: Sendable {
    var runID: String
    var restart: Bool
    var before: [String: String?]
    var since: [String: String]
    var lookbacks: [String: String?]
    /// With parallel windows: the run's start time (a resumed run's own), and the windows bisected so far.
    var started: String?
    var bisected: Set<Int> = []
}

extension JobRunner {
    /// For a job with incremental sources: commits the marks of a complete earlier run that a crash kept from
    /// being applied, decides whether this run resumes an unfinished one (same run id, same window) or starts a
    /// new one, and sets each incremental unit's window start (`param=`) and the items already written.
    func prepareIncremental(_ units: inout [WorkUnit]) throws -> IncrementalRun? {
        guard units.contains(where: { $0.incremental != nil }) else { return nil }
        guard let directory = options.stateDirectory else {
            throw JobError.state(
                "incremental sources need a state directory: the mark lives there between runs",
                hint: "pass --state DIR, the same directory on every run")
        }
        let marks = MarkStore(stateDirectory: directory)
        var lookbacks: [String: String?] = [:]
        for unit in units { if let spec = unit.incremental { lookbacks[unit.source] = spec.lookback } }
        let existing = (try? DurableFiles.read(directory + "/checkpoint.json")).flatMap { bytes in
            bytes.flatMap { try? Checkpoint.read($0) }.flatMap { $0.intact ? $0.checkpoint : nil }
        }
        var run = IncrementalRun(
            runID: Self.newRunID(), restart: options.restart, before: [:], since: [:], lookbacks: lookbacks)
        if let existing, existing.complete {
            // The last run finished: its output is committed, so its marks are too (again, if a crash came between).
            _ = try marks.commit(existing, lookbacks: lookbacks)
            run.restart = true
        } else if let existing, !options.restart, let id = existing.run {
            run.runID = id
            run.started = existing.started
            run.bisected = Set(existing.bisected ?? [])
        }
        if units.contains(where: { $0.incremental?.split != nil }), run.started == nil {
            // Whole seconds: the windows' bounds are.
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            run.started = ISO8601DateFormatter().string(from: now)
        }
        let file = try marks.load()
        for index in units.indices {
            guard let spec = units[index].incremental else { continue }
            let source = units[index].source
            let committed = file.sources[source]
            let start = spec.windowStart(mark: committed?.mark)
            guard let value = CursorValue(start) else {
                throw JobError.state(
                    "the mark of \(source) in \(marks.path), '\(start)', is neither an ISO-8601 date nor an integer",
                    hint: "set it with trawl state set --state \(directory) \(source) VALUE, or reset it")
            }
            run.before[source] = committed?.mark
            run.since[source] = start
            units[index].request = units[index].request.settingQuery(spec.param, to: start)
            units[index].window = IncrementalWindow(
                spec: spec, source: source, start: value, primaryKey: units[index].primaryKey,
                seen: committed?.window ?? [:])
        }
        units = try units.flatMap { unit in try windows(of: unit, run: run, marks: file) }
        return run
    }

    /// `unit` cut into its parallel windows (`split:`) in order, a window an earlier run of this one bisected coming
    /// right after its halves (recursively); `[unit]` without `split:`. Fails when `initial` is not before the end.
    func windows(of unit: WorkUnit, run: IncrementalRun, marks: MarkStore.File) throws -> [WorkUnit] {
        guard let spec = unit.incremental, let split = spec.split, let window = unit.window else { return [unit] }
        guard childPlan?.isParent(unit) != true else {
            throw JobError.state(
                "\(unit.source) has child sources and incremental.split: its windows cannot each have children yet",
                hint: "remove split from \(unit.source)")
        }
        let since = window.start.text
        let end = split.end ?? run.started ?? since
        let cut: [WindowSplit.Window]
        do {
            cut = try WindowSplit.cut(from: since, to: end, count: split.windows)
        } catch {
            throw JobError.state(
                "\(unit.source): \(error.message)", hint: "give incremental.initial and split.end of one kind")
        }
        if cut.isEmpty, marks.sources[unit.source]?.mark == nil {
            throw JobError.state(
                "\(unit.source): incremental.initial \(since) is not before the end of its windows, \(end)"
                    + (split.end == nil ? " (the run's start)" : ""),
                hint: "give an initial in the past" + (split.end == nil ? "" : ", before split.end"))
        }
        // A mark at or past the end (a server clock ahead of ours): nothing to read this run.
        return cut.enumerated().flatMap { index, bounds in
            expanded(unit, bounds: bounds, index: index, path: .whole, bisected: run.bisected)
        }
    }

    /// The window unit for `bounds`, preceded by its halves when an earlier run of this one bisected it.
    private func expanded(
        _ unit: WorkUnit, bounds: WindowSplit.Window, index: Int, path: WindowPath, bisected: Set<Int>
    ) -> [WorkUnit] {
        guard let made = windowUnit(unit, bounds: bounds, index: index, path: path) else { return [] }
        guard bisected.contains(made.ordinal), let (low, high) = try? WindowSplit.bisect(bounds) else { return [made] }
        return expanded(unit, bounds: low, index: index, path: path.lower, bisected: bisected)
            + expanded(unit, bounds: high, index: index, path: path.upper, bisected: bisected) + [made]
    }

    /// One window of `unit` (a planned unit, or any window of it): `param=from&until_param=to`, its own ordinal and
    /// id (`issues [2024-01-01T00:00:00Z, 2024-01-02T00:00:00Z)`).
    func windowUnit(_ unit: WorkUnit, bounds: WindowSplit.Window, index: Int, path: WindowPath) -> WorkUnit? {
        guard let spec = unit.incremental, let split = spec.split, var window = unit.window,
            let start = CursorValue(bounds.from), let end = CursorValue(bounds.to)
        else { return nil }
        let planned = window.split?.unit ?? unit.ordinal
        let plannedID = window.split?.unitID ?? unit.id
        window.start = start
        window.split = IncrementalWindow.SplitPlace(
            bounds: bounds, end: end, untilParam: split.untilParam, unit: planned, unitID: plannedID, index: index,
            path: path, maxPages: split.maxPages)
        var made = unit
        made.window = window
        made.ordinal = UnitID.window(unit: planned, index: index, path: path).ordinal
        made.id = "\(plannedID) \(bounds)"
        made.request = unit.request.settingQuery(spec.param, to: bounds.from)
            .settingQuery(split.untilParam, to: bounds.to)
        made.maxPages = min(unit.maxPages ?? .max, split.maxPages)
        return made
    }

    /// After the run: the marks it committed (when complete), before and after, by source.
    func commitIncremental(_ run: IncrementalRun, complete: Bool) throws -> [String: MarkChange] {
        var after = run.before
        if complete, let directory = options.stateDirectory {
            let bytes = try DurableFiles.read(directory + "/checkpoint.json") ?? []
            let checkpoint = try Checkpoint.read(bytes).checkpoint
            let file = try MarkStore(stateDirectory: directory).commit(checkpoint, lookbacks: run.lookbacks)
            for source in run.before.keys { after[source] = file.sources[source]?.mark }
        }
        var changes: [String: MarkChange] = [:]
        for (source, before) in run.before {
            changes[source] = MarkChange(
                before: before, after: after[source] ?? nil, since: run.since[source] ?? "", run: run.runID,
                committed: complete)
        }
        return changes
    }

    /// `20241125T144416Z-3fa9c1`: sorts by start time; the suffix keeps two runs of one second apart.
    static func newRunID() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let suffix = String(UInt32.random(in: 0...0xFF_FFFF), radix: 16)
        return formatter.string(from: Date()) + "-" + String(repeating: "0", count: 6 - suffix.count) + suffix
    }
}
