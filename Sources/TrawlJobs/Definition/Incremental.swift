import Foundation
import TrawlJSON

/// A source's incremental sync (`incremental:` in a job file, `--incremental` on the command line): each run
/// asks only for what changed since the high-water mark of the last committed run.
///
/// ```swift
/// var source = JobSource(name: "issues", url: "https://api.example.com/issues", pagination: .link(), items: .root)
/// source.incremental = IncrementalSpec(cursor: "updated_at", param: "since", initial: "2024-01-01T00:00:00Z",
///                                      lookback: "1h")
/// source.primaryKey = "id"
/// ```
///
/// The first request of each unit carries `param=MARK` (the mark minus `lookback`; `initial` before the first
/// committed run). Items whose cursor is below that value are not written; the largest cursor of the items read
/// becomes the new mark once the run's output is committed.
public struct IncrementalSpec: Sendable, Hashable {
    public enum Order: String, Sendable, Hashable {
        /// Oldest first: every page of the window is read.
        case asc
        /// Newest first: the walk stops after the first page holding an item older than the window.
        case desc
    }

    /// Key path of each item's cursor (an ISO-8601 date or an integer).
    public var cursor: JSONKeyPath
    /// The query parameter that carries the window's start.
    public var param: String
    /// The first run's window start.
    public var initial: String
    /// How far before the mark each run starts (`90s`, `15m`, `2h`, `1d` for dates; an integer for integers).
    public var lookback: String?
    public var order: Order
    /// Parallel windows (`split:`): the range from the window start to the run's start is cut into windows walked
    /// as units of their own.
    public var split: SplitSpec?

    public init(cursor: JSONKeyPath, param: String, initial: String, lookback: String? = nil, order: Order = .asc) {
        self.cursor = cursor
        self.param = param
        self.initial = initial
        self.lookback = lookback
        self.order = order
    }

    /// Hashed into the job's fingerprint.
    var canonicalDescription: String {
        var fields = [cursor.description, param, initial, lookback ?? "", order.rawValue]
        if let split { fields.append(split.canonicalDescription) }
        return fields.joined(separator: "\u{1F}")
    }

    /// Checks `initial` and `lookback`; the error names what is wrong (`field` is the spec's place).
    public func validate(field: String) throws(JobSpecError) {
        guard !param.isEmpty else {
            throw JobSpecError(field: "\(field).param", "the parameter name is empty", hint: "e.g. param: since")
        }
        guard let start = CursorValue(initial) else {
            throw JobSpecError(
                field: "\(field).initial", "'\(initial)' is neither an ISO-8601 date nor an integer",
                hint: "write e.g. initial: \"2024-01-01T00:00:00Z\" or initial: 0")
        }
        if let split { try split.validate(field: "\(field).split", initial: start) }
        if let lookback {
            guard start.subtracting(lookback) != nil else {
                throw JobSpecError(
                    field: "\(field).lookback",
                    start.isDate
                        ? "'\(lookback)' is not a duration" : "'\(lookback)' is not a whole number (the cursor is one)",
                    hint: start.isDate ? "write e.g. 90s, 15m, 2h or 1d" : "write e.g. lookback: 100")
            }
        }
    }

    /// The value sent as `param` by a run whose committed mark is `mark`.
    func windowStart(mark: String?) -> String {
        guard let mark else { return initial }
        guard let lookback, let value = CursorValue(mark), let start = value.subtracting(lookback) else { return mark }
        return start.text
    }
}

/// A cursor value read from an item or a mark: an integer, or an ISO-8601 date-time (its text kept as given).
struct CursorValue: Sendable, Comparable {
    enum Value: Sendable, Comparable {
        case integer(Int64)
        case date(Double)
    }

    var value: Value
    var text: String

    init?(_ text: String) {
        self.text = text
        if let integer = Int64(text) {
            value = .integer(integer)
        } else if let date = Self.date(text) {
            value = .date(date.timeIntervalSince1970)
        } else {
            return nil
        }
    }

    /// An item's cursor: a JSON number or string.
    init?(_ json: JSONValue) {
        switch json {
        case .number(let text): self.init(text)
        case .string(let text): self.init(text)
        default: return nil
        }
    }

    var isDate: Bool {
        if case .date = value { return true }
        return false
    }

    /// Whether both are dates or both integers.
    func isComparable(to other: CursorValue) -> Bool { isDate == other.isDate }

    static func < (lhs: CursorValue, rhs: CursorValue) -> Bool { lhs.value < rhs.value }
    static func == (lhs: CursorValue, rhs: CursorValue) -> Bool { lhs.value == rhs.value }

    /// This value minus `lookback` (a duration for dates, an integer for integers), in this value's form.
    func subtracting(_ lookback: String) -> CursorValue? {
        switch value {
        case .integer(let integer):
            guard let amount = Int64(lookback), amount >= 0 else { return nil }
            // A lookback past the smallest integer re-reads everything: the window starts at Int64.min.
            let (start, overflow) = integer.subtractingReportingOverflow(amount)
            return CursorValue(String(overflow ? Int64.min : start))
        case .date(let seconds):
            guard let amount = Self.duration(lookback) else { return nil }
            // No earlier than the first days of year 1, which ISO 8601 (and the formatter) can still write.
            let date = Date(timeIntervalSince1970: max(seconds - amount, Self.earliestDate))
            let formatter = ISO8601DateFormatter()
            if text.contains(".") { formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds] }
            return CursorValue(formatter.string(from: date))
        }
    }

    /// 0001-01-01T00:00:00Z (proleptic Gregorian) in seconds since 1970: the earliest window start.
    static let earliestDate: Double = -62_135_596_800

    /// `90s`, `15m`, `2h`, `1d` (or `0`) in seconds.
    static func duration(_ text: String) -> Double? {
        if text == "0" { return 0 }
        guard let unit = text.last, let amount = Double(text.dropLast()), amount >= 0, amount.isFinite else {
            return nil
        }
        switch unit {
        case "s": return amount
        case "m": return amount * 60
        case "h": return amount * 3600
        case "d": return amount * 86400
        default: return nil
        }
    }

    private static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}

extension IncrementalSpec {
    /// Whether `initial` is an ISO-8601 date or an integer (a mark `trawl state set` may store).
    public var isValidInitial: Bool { CursorValue(initial) != nil }
}

/// An incremental source's parallel windows (`incremental.split:` in a job file): the range from the window start
/// (the mark minus the lookback, or `initial`) to `end` (by default the run's start time, fixed when the run starts
/// and kept in its checkpoint) is cut into `windows` half-open windows `[a, b)`, each walked as a unit with
/// `param=a&untilParam=b`. A window that walks more than `maxPages` pages is bisected while running.
///
/// ```swift
/// spec.split = SplitSpec(untilParam: "until", windows: 8, maxPages: 50)
/// ```
public struct SplitSpec: Sendable, Hashable {
    /// The query parameter that carries a window's (exclusive) upper bound.
    public var untilParam: String
    /// How many windows the range is cut into at the start (1 to `WindowSplit.maxWindows`).
    public var windows: Int
    /// Pages a window may walk before it is bisected (1 to `maxPagesLimit`).
    public var maxPages: Int
    /// The range's upper end; `nil`: the run's start time (dates only: an integer cursor needs it).
    public var end: String?

    /// The largest `max_pages`.
    public static let maxPagesLimit = 100_000

    public init(untilParam: String, windows: Int, maxPages: Int, end: String? = nil) {
        self.untilParam = untilParam
        self.windows = windows
        self.maxPages = maxPages
        self.end = end
    }

    var canonicalDescription: String {
        ["split", untilParam, String(windows), String(maxPages), end ?? ""].joined(separator: ",")
    }

    func validate(field: String, initial: CursorValue) throws(JobSpecError) {
        guard !untilParam.isEmpty else {
            throw JobSpecError(
                field: "\(field).until_param", "the parameter name is empty", hint: "e.g. until_param: until")
        }
        guard (1...WindowSplit.maxWindows).contains(windows) else {
            throw JobSpecError(
                field: "\(field).windows", "\(windows) windows is out of range",
                hint: "give 1 to \(WindowSplit.maxWindows) windows")
        }
        guard (1...Self.maxPagesLimit).contains(maxPages) else {
            throw JobSpecError(
                field: "\(field).max_pages", "\(maxPages) pages is out of range",
                hint: "give 1 to \(Self.maxPagesLimit) pages per window before it is bisected")
        }
        if let end {
            guard let value = CursorValue(end), value.isComparable(to: initial) else {
                throw JobSpecError(
                    field: "\(field).end", "'\(end)' is not " + (initial.isDate ? "an ISO-8601 date" : "an integer")
                        + " like initial",
                    hint: initial.isDate ? "write e.g. end: \"2024-02-01T00:00:00Z\", or leave it out (the run's start)"
                        : "write e.g. end: 100000")
            }
        } else if !initial.isDate {
            throw JobSpecError(
                field: "\(field).end", "an integer cursor has no 'now' to split up to",
                hint: "give split.end, the largest cursor value to read (exclusive)")
        }
    }
}
