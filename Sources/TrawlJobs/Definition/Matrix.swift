extension MatrixAxis {
    /// Most values one axis may have.
    static let maxValues = 1_000_000

    /// An axis from a range: date windows `START..END step Nd` (or `Nw`; default `1d`) or integers
    /// `A..B step S` (default `1`), both inclusive.
    ///
    /// A date window binds `{name}` to its first day and `{name.end}` to its last (`YYYY-MM-DD`, UTC Gregorian);
    /// the last window is clipped to `END`. An integer value `v` binds `{name.end}` to `min(v + S - 1, B)`.
    ///
    /// ```swift
    /// let weeks = try MatrixAxis.range("week", "2024-01-01..2024-01-31 step 7d")
    /// // 2024-01-01 (end 2024-01-07), 2024-01-08, 2024-01-15, 2024-01-22, 2024-01-29 (end 2024-01-31)
    /// let pages = try MatrixAxis.range("n", "1..10 step 3")    // 1 (end 3), 4, 7, 10 (end 10)
    /// ```
    public static func range(_ name: String, _ spec: String) throws(JobSpecError) -> MatrixAxis {
        let parsed = try RangeSpec(spec)
        switch parsed.bounds {
        case .days(let start, let end):
            // A step longer than the range is one window (and `999999999999999999w` must not overflow).
            let (days, overflow) = parsed.step.multipliedReportingOverflow(by: parsed.unit == "w" ? 7 : 1)
            let step = overflow ? end - start + 1 : min(days, end - start + 1)
            let count = (end - start) / step + 1
            guard count <= maxValues else { throw tooMany(count, spec) }
            return MatrixAxis(name: name, values: MatrixValues(.days(start: start, end: end, step: step, count: count)))
        case .integers(let start, let end):
            let (span, overflow) = end.subtractingReportingOverflow(start)
            let count = overflow ? Int.max : span / parsed.step + 1
            guard count <= maxValues else { throw tooMany(count, spec) }
            return MatrixAxis(
                name: name, values: MatrixValues(.integers(start: start, end: end, step: parsed.step, count: count)))
        }
    }

    /// Whether `text` is written as a range (`A..B`, with an optional step) rather than a single value.
    static func looksLikeRange(_ text: String) -> Bool { text.contains("..") }

    private static func tooMany(_ count: Int, _ spec: String) -> JobSpecError {
        JobSpecError(
            "range '\(spec)' has \(count) values, more than \(maxValues)", hint: "use a larger step or a shorter range")
    }
}

/// The values of one axis: a list, or a range whose values are made when read (a range of a million days costs
/// a few words until the units are built, however often the job is parsed, checked or compared).
public struct MatrixValues: RandomAccessCollection, Sendable, Hashable, ExpressibleByArrayLiteral {
    enum Storage: Sendable, Hashable {
        case list([MatrixValue])
        /// Windows of `step` days from `start` (days since 1970-01-01) through `end`, the last clipped to `end`.
        case days(start: Int, end: Int, step: Int, count: Int)
        /// `start`, `start + step`, ... through `end`; `{name.end}` is `min(v + step - 1, end)`.
        case integers(start: Int, end: Int, step: Int, count: Int)
    }

    let storage: Storage

    init(_ storage: Storage) { self.storage = storage }

    public init(_ values: [MatrixValue]) { self.storage = .list(values) }

    public init(arrayLiteral elements: MatrixValue...) { self.storage = .list(elements) }

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .list(let values): values.count
        case .days(_, _, _, let count), .integers(_, _, _, let count): count
        }
    }

    public subscript(position: Int) -> MatrixValue {
        precondition(position >= 0 && position < endIndex, "MatrixValues: index \(position) out of range")
        switch storage {
        case .list(let values):
            return values[position]
        case .days(let start, let end, let step, _):
            let first = start + position * step
            return MatrixValue(
                CivilDate.string(fromDay: first),
                extra: [MatrixBinding(name: "end", value: CivilDate.string(fromDay: Swift.min(first + step - 1, end)))])
        case .integers(let start, let end, let step, _):
            // Within Int: position * step <= end - start, which the count check bounded.
            let first = start + position * step
            let (last, overflow) = first.addingReportingOverflow(step - 1)
            let through = overflow ? end : Swift.min(last, end)
            return MatrixValue(String(first), extra: [MatrixBinding(name: "end", value: String(through))])
        }
    }

    /// The names every value binds besides the axis itself (a range's `end`), without reading every value.
    var sharedExtraNames: [String] {
        switch storage {
        case .list(let values):
            let extras = values.first?.extra.map(\.name) ?? []
            return extras.filter { name in values.allSatisfy { $0.extra.contains { $0.name == name } } }
        case .days, .integers:
            return ["end"]
        }
    }

    /// Whether two values are the same (a range's values are distinct by construction).
    var firstRepeatedValue: String? {
        guard case .list(let values) = storage else { return nil }
        var seen: Set<String> = []
        return values.first { !seen.insert($0.value).inserted }?.value
    }

    /// Equal when they hold the same values in the same order, however they are stored.
    public static func == (lhs: MatrixValues, rhs: MatrixValues) -> Bool {
        if lhs.storage == rhs.storage { return true }
        return lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    public func hash(into hasher: inout Hasher) {
        // Equal collections have equal counts and first values; hashing those keeps a range's hash O(1).
        hasher.combine(count)
        hasher.combine(first)
    }
}

/// `START..END [step N[d|w]]`.
private struct RangeSpec {
    enum Bounds {
        case days(Int, Int)
        case integers(Int, Int)
    }

    var bounds: Bounds
    var step: Int
    /// `d`, `w` or `""` for integers.
    var unit: String

    static let usage = "write START..END [step N], as in 2024-01-01..2024-12-31 step 7d or 1..100 step 10"

    init(_ spec: String) throws(JobSpecError) {
        let words = spec.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard words.count == 1 || (words.count == 3 && words[1] == "step"),
            let dots = words[0].range(of: "..")
        else { throw JobSpecError("'\(spec)' is not a range", hint: Self.usage) }
        let lower = String(words[0][..<dots.lowerBound])
        let upper = String(words[0][dots.upperBound...])
        let stepText = words.count == 3 ? words[2] : nil

        if let start = CivilDate.day(lower) {
            guard let end = CivilDate.day(upper) else {
                throw JobSpecError("'\(upper)' is not a date (YYYY-MM-DD) in '\(spec)'", hint: Self.usage)
            }
            guard start <= end else {
                throw JobSpecError("range '\(spec)' ends before it starts", hint: "put the earlier date first")
            }
            var step = 1
            var unit = "d"
            if let stepText {
                guard let last = stepText.last, last == "d" || last == "w", let count = Int(stepText.dropLast()),
                    count >= 1
                else {
                    throw JobSpecError(
                        "'\(stepText)' is not a date step in '\(spec)'",
                        hint: "write a number of days or weeks: 1d, 7d, 2w")
                }
                step = count
                unit = String(last)
            }
            self.bounds = .days(start, end)
            self.step = step
            self.unit = unit
            return
        }
        if CivilDate.looksLikeDate(lower) {
            throw JobSpecError(
                "'\(lower)' is not a valid date in '\(spec)'", hint: "dates are YYYY-MM-DD and must exist")
        }
        guard let start = Int(lower), let end = Int(upper) else {
            throw JobSpecError("'\(spec)' has bounds that are neither dates nor integers", hint: Self.usage)
        }
        guard start <= end else {
            throw JobSpecError("range '\(spec)' ends before it starts", hint: "put the smaller number first")
        }
        var step = 1
        if let stepText {
            guard let value = Int(stepText), value >= 1 else {
                throw JobSpecError("'\(stepText)' is not a positive integer step in '\(spec)'", hint: Self.usage)
            }
            step = value
        }
        self.bounds = .integers(start, end)
        self.step = step
        self.unit = ""
    }
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (the UTC calendar), without Foundation.
enum CivilDate {
    static func looksLikeDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0].count == 4 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// The day number of `YYYY-MM-DD`, or `nil` when it is not a real date.
    static func day(_ text: String) -> Int? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        return daysFromCivil(year: year, month: month, day: day)
    }

    static func string(fromDay days: Int) -> String {
        let (year, month, day) = civil(fromDays: days)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
