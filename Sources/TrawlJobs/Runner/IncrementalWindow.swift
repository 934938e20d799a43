import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// An item seen in a window: the hash of its line and its cursor (to drop it once it falls out of the window).
struct SeenItem: Codable, Sendable, Hashable {
    /// SHA-256 (first 128 bits, hex) of the item's compact JSON line as trawl writes it.
    var h: String
    /// The item's cursor, as given.
    var c: String
}

/// What a unit of an incremental source has read so far (kept in its checkpoint state, then folded into the
/// run's until the run commits): the largest cursor and the items near it.
struct IncrementalProgress: Codable, Sendable {
    var source: String
    /// The largest cursor read (its text as the server gave it).
    var max: String?
    /// Items within `lookback` of `max`, by key (the primary key's JSON, or the hash without one).
    var window: [String: SeenItem] = [:]

    /// Drops the items older than `max` minus `lookback`.
    mutating func prune(lookback: String?) {
        guard let max, let top = CursorValue(max) else { return }
        let floor = lookback.flatMap { top.subtracting($0) } ?? top
        window = window.filter { _, item in
            guard let cursor = CursorValue(item.c), cursor.isComparable(to: floor) else { return false }
            return cursor >= floor
        }
    }

    /// Takes in `other` (a later page, another unit of the source): the larger mark, the union of the windows
    /// (`other`'s entry wins for a key in both), pruned.
    mutating func merge(_ other: IncrementalProgress, lookback: String?) {
        if let theirs = other.max.flatMap(CursorValue.init) {
            let mine = max.flatMap(CursorValue.init)
            if mine == nil || !(mine?.isComparable(to: theirs) ?? false) || (mine.map { $0 < theirs } ?? true) {
                max = other.max
            }
        }
        window.merge(other.window) { _, new in new }
        prune(lookback: lookback)
    }
}

/// The incremental side of one unit's walk: the window it asks for and the items already written in earlier
/// runs, which it does not write again unless they changed.
struct IncrementalWindow: Sendable {
    var spec: IncrementalSpec
    var source: String
    /// The value sent as `spec.param` (the committed mark minus the lookback, or `initial`).
    var start: CursorValue
    var primaryKey: JSONKeyPath?
    /// The items of the last committed window, by key.
    var seen: [String: SeenItem]
    /// A parallel window's place (`split:`): its bounds `[start, end)` and where it came from.
    var split: SplitPlace? = nil

    /// One window of a split source: `bounds.from` is sent as `spec.param`, `bounds.to` as `untilParam`.
    struct SplitPlace: Sendable {
        var bounds: WindowSplit.Window
        /// The exclusive upper bound, read.
        var end: CursorValue
        var untilParam: String
        /// The planned unit's ordinal and id, which every window of it shares.
        var unit: Int
        var unitID: String
        var index: Int
        var path: WindowPath
        /// Pages a walk of this window may take before it is bisected.
        var maxPages: Int
    }

    /// The result of filtering one page.
    struct Page: Sendable {
        var lines: [UInt8]
        var kept: Int
        var progress: IncrementalProgress
        /// Some item is older than the window's start (`order: desc`: the walk is past the mark).
        var reachedOlder: Bool
    }

    /// Keeps the lines of the items that are in the window and not already written unchanged; reads the
    /// cursors. Returns the problem as text for an item whose cursor is not a date or integer of the mark's kind.
    func filter(_ lines: [UInt8]) -> Result<Page, WindowProblem> {
        var page = Page(lines: [], kept: 0, progress: IncrementalProgress(source: source), reachedOlder: false)
        page.lines.reserveCapacity(lines.count)
        var top: CursorValue?
        var start = lines.startIndex
        var index = 0
        let decoder = JSONItemDecoder()
        while start < lines.endIndex {
            let end = lines[start...].firstIndex(of: UInt8(ascii: "\n")) ?? lines.endIndex
            let line = Array(lines[start..<end])
            defer {
                start = end + 1
                index += 1
            }
            guard let json = try? decoder.decode(JSONValue.self, from: line, at: spec.cursor), !json.isNull else {
                page.lines += line
                page.lines.append(UInt8(ascii: "\n"))
                page.kept += 1
                continue
            }
            guard let cursor = CursorValue(json), cursor.isComparable(to: self.start) else {
                let text = String(decoding: json.json, as: UTF8.self)
                return .failure(WindowProblem(
                    message: "item \(index) has \(spec.cursor) \(text.prefix(80)), not "
                        + (self.start.isDate ? "an ISO-8601 date" : "an integer") + " like '\(self.start.text)'",
                    hint: "check the incremental cursor key path against the items"))
            }
            if cursor < self.start {
                page.reachedOlder = true
                continue
            }
            if let split, !(cursor < split.end) {
                // An item on the end belongs to the next window (a server whose upper bound is inclusive sends it
                // to both); one past it means the server did not bound the window at all.
                if cursor == split.end { continue }
                let text = String(decoding: json.json, as: UTF8.self)
                return .failure(WindowProblem(
                    message: "item \(index) has \(spec.cursor) \(text.prefix(80)), past the end of the window "
                        + "\(split.bounds): the server ignored \(split.untilParam)=\(split.bounds.to)",
                    hint: "name the API's upper-bound parameter in split.until_param (it must bound what it lists), or "
                        + "remove split"))
            }
            var hasher = SHA256()
            hasher.update(line)
            let hash = String(hasher.hexDigest().prefix(32))
            let key = primaryKey.flatMap { try? decoder.decode(JSONValue.self, from: line, at: $0) }
                .map { String(decoding: $0.json, as: UTF8.self) } ?? hash
            if top.map({ $0 < cursor }) ?? true { top = cursor }
            page.progress.window[key] = SeenItem(h: hash, c: cursor.text)
            if seen[key]?.h == hash { continue }
            page.lines += line
            page.lines.append(UInt8(ascii: "\n"))
            page.kept += 1
        }
        page.progress.max = top?.text
        page.progress.prune(lookback: spec.lookback)
        return .success(page)
    }
}

struct WindowProblem: Error {
    var message: String
    var hint: String
}

extension IncrementalWindow {
    /// ``filter(_:)`` for a page of a walk: a cursor of the wrong kind fails the page (not retried).
    func page(_ lines: [UInt8], request: PageRequest, index: Int, url: String) throws(PaginationError) -> Page {
        switch filter(lines) {
        case .success(let page):
            return page
        case .failure(let problem):
            let underlying = TrawlError(
                code: .invalidBody, message: problem.message, hint: problem.hint,
                method: request.request.method.rawValue, url: url)
            var error = PaginationError(position: request.position, index: index, url: url, underlying: underlying)
            error.kind = .pagination
            throw error
        }
    }
}

extension UnitDriver {
    /// Adds what an incremental source's page read (its largest cursor, its window items) to the unit's state.
    func noteIncremental(_ page: PageLines, state: inout Checkpoint.UnitState) {
        guard let read = page.incremental, let window = unit.window else { return }
        var progress = state.incremental ?? IncrementalProgress(source: unit.source)
        progress.merge(read.progress, lookback: window.spec.lookback)
        state.incremental = progress
    }
}
