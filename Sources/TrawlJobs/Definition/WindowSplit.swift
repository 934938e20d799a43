import Foundation

/// How an incremental source's range is cut into parallel windows (`incremental.split:`): a value type tested
/// without sockets; the runner walks each window as a unit (`JobRunner+Windows.swift`, docs/jobs.md).
///
/// A window is half-open, `[from, to)`: an item whose cursor equals a boundary belongs to the window that starts
/// there, once. The source's `since` parameter is taken as inclusive (`>=`, what GitHub's `since` and trawl's
/// test feed do) and the upper-bound parameter as exclusive (`<`, the feed's `until`); a server whose upper bound
/// is inclusive gets each boundary item twice, which the primary key's window drops.
///
/// ```swift
/// let windows = try WindowSplit.cut(from: "2024-01-01T00:00:00Z", to: "2024-01-01T00:08:00Z", count: 4)
/// // [00:00, 00:02), [00:02, 00:04), [00:04, 00:06), [00:06, 00:08)
/// ```
public enum WindowSplit {
    /// At most this many windows in a cut (a `windows:` above it is refused, not clamped).
    public static let maxWindows = 1_000
    /// A bisection stops at windows this narrow: 1 second for dates, 1 for integers.
    public static let narrowest = 1.0

    public struct Window: Sendable, Hashable, Codable, CustomStringConvertible {
        /// Inclusive lower bound (the `since` value sent).
        public var from: String
        /// Exclusive upper bound (the upper-bound parameter's value).
        public var to: String
        public var description: String { "[\(from), \(to))" }
    }

    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var hint: String
        public var description: String { "\(message) (\(hint))" }
    }

    /// `[from, to)` cut into at most `count` windows of equal width (whole seconds or whole numbers, the last one
    /// shorter), fewer when the range is narrower than `count` units; none when `to <= from`.
    public static func cut(from: String, to: String, count: Int) throws(Problem) -> [Window] {
        guard (1...maxWindows).contains(count) else {
            throw Problem(
                message: "split windows \(count) is out of range", hint: "give 1 to \(maxWindows) windows")
        }
        let (low, high) = try bounds(from, to)
        guard high.value > low.value else { return [] }
        let width = span(low, high)
        let step = max(narrowest, (width / Double(count)).rounded(.up))
        var windows: [Window] = []
        var start = low
        while start < high {
            let next = advance(low, by: step * Double(windows.count + 1))
            let end = next.map { $0 < high ? $0 : high } ?? high
            windows.append(Window(from: start.text, to: end.text))
            start = end
        }
        return windows
    }

    /// `window` cut in two halves at its middle (whole seconds or numbers); fails for a window of the narrowest
    /// width, naming it (a window that holds more than the page limit even then cannot be split further).
    public static func bisect(_ window: Window) throws(Problem) -> (Window, Window) {
        let (low, high) = try bounds(window.from, window.to)
        let width = span(low, high)
        guard width > narrowest, let middle = advance(low, by: (width / 2).rounded(.down)), low < middle,
            middle < high
        else {
            throw Problem(
                message: "the window \(window) holds more than the page limit and is "
                    + (low.isDate ? "1 second" : "1 unit") + " wide: it cannot be split",
                hint: "raise split.max_pages, or page that window without split")
        }
        return (Window(from: window.from, to: middle.text), Window(from: middle.text, to: window.to))
    }

    private static func bounds(_ from: String, _ to: String) throws(Problem) -> (CursorValue, CursorValue) {
        guard let low = CursorValue(from), let high = CursorValue(to), low.isComparable(to: high) else {
            throw Problem(
                message: "the window bounds '\(from.prefix(40))' and '\(to.prefix(40))' are not two ISO-8601 dates "
                    + "or two integers",
                hint: "give incremental.initial as a date or an integer, like the items' cursor")
        }
        return (low, high)
    }

    private static func span(_ low: CursorValue, _ high: CursorValue) -> Double {
        switch (low.value, high.value) {
        case (.integer(let a), .integer(let b)): Double(b) - Double(a)
        case (.date(let a), .date(let b)): b - a
        default: 0
        }
    }

    /// `value` plus `amount` (seconds or units), as an integer or a date of whole seconds written in `value`'s
    /// zone (`Z` or its offset, as the server was given it).
    private static func advance(_ value: CursorValue, by amount: Double) -> CursorValue? {
        switch value.value {
        case .integer(let integer):
            guard amount < 9.2e18 else { return nil }
            let (sum, overflow) = integer.addingReportingOverflow(Int64(amount))
            return overflow ? nil : CursorValue(String(sum))
        case .date(let seconds):
            let target = (seconds + amount).rounded(.down)
            guard target.isFinite, target < 253_402_300_800 else { return nil }  // 10000-01-01
            let formatter = ISO8601DateFormatter()
            if let zone = zone(of: value.text) { formatter.timeZone = zone }
            return CursorValue(formatter.string(from: Date(timeIntervalSince1970: target)))
        }
    }

    /// The zone of an ISO-8601 date-time's text: its `±HH:MM` offset (`nil`: `Z`, or none readable).
    static func zone(of text: String) -> TimeZone? {
        guard !text.hasSuffix("Z"), !text.hasSuffix("z"), text.count >= 6 else { return nil }
        let tail = Array(text.suffix(6))
        guard tail[0] == "+" || tail[0] == "-", tail[3] == ":", let hours = Int(String(tail[1...2])),
            let minutes = Int(String(tail[4...5])), hours < 24, minutes < 60
        else { return nil }
        let offset = (hours * 3600 + minutes * 60) * (tail[0] == "-" ? -1 : 1)
        return TimeZone(secondsFromGMT: offset)
    }
}
