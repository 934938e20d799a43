import Foundation

/// `--threshold EXPR`: a budget the run must meet (k6's idea), such as `p99<250ms`, `errors<0.1%`, `rps>5000`.
package struct BenchThreshold: Equatable, Sendable {
    package enum Metric: Equatable, Sendable {
        /// Latency at a percentile (0 < p < 100), in milliseconds.
        case percentile(Double)
        case mean
        case min
        case max
        /// Completed requests per second.
        case rps
        case errors
        /// Responses whose status is in a class (`5xx` -> 5) or is exactly one code (`503`).
        case statusClass(Int)
        case status(Int)
        case lateStarts

        package var isLatency: Bool {
            switch self {
            case .percentile, .mean, .min, .max: true
            default: false
            }
        }

        package var isCount: Bool {
            switch self {
            case .errors, .statusClass, .status, .lateStarts: true
            default: false
            }
        }
    }

    package enum Comparison: String, Sendable, CaseIterable {
        case lessOrEqual = "<="
        case greaterOrEqual = ">="
        case less = "<"
        case greater = ">"
        case equal = "="

        func holds(_ measured: Double, _ limit: Double) -> Bool {
            switch self {
            case .less: measured < limit
            case .lessOrEqual: measured <= limit
            case .greater: measured > limit
            case .greaterOrEqual: measured >= limit
            case .equal: measured == limit
            }
        }
    }

    /// The expression as given.
    let text: String
    let metric: Metric
    let comparison: Comparison
    /// Milliseconds for latencies, requests/s for `rps`, a count or (with `percent`) a percent of the requests.
    let limit: Double
    let percent: Bool

    static let accepted = """
        metrics: p50, p90, p99.9 … (any pN with 0 < N < 100), mean, min, max (latency, with a unit: us, ms or s); \
        rps (requests/s, no unit); errors, status_5xx (any class), status_503 (any code), late_starts (a count, \
        or a percent of the requests with %). Comparisons: < <= > >= =. Examples: p99<250ms, errors<0.1%, \
        rps>5000, status_5xx=0
        """

    package struct ParseError: Error, CustomStringConvertible {
        package let description: String
    }

    package init(_ text: String) throws(ParseError) {
        func fail(_ why: String) -> ParseError {
            ParseError(description: "--threshold '\(text)': \(why). \(Self.accepted)")
        }
        self.text = text
        let compact = text.filter { !$0.isWhitespace }
        guard let operatorStart = compact.firstIndex(where: { "<>=!".contains($0) }) else {
            throw fail("no comparison (<, <=, >, >= or =)")
        }
        let name = String(compact[..<operatorStart]).lowercased()
        let rest = compact[operatorStart...]
        let operatorText = String(rest.prefix { "<>=!".contains($0) })
        guard let comparison = Comparison(rawValue: operatorText == "==" ? "=" : operatorText) else {
            throw fail("'\(operatorText)' is not a comparison (<, <=, >, >= or =)")
        }
        self.comparison = comparison
        guard let metric = Self.metric(name) else {
            throw fail(name.isEmpty ? "no metric before the comparison" : "unknown metric '\(name)'")
        }
        self.metric = metric
        let valueText = String(rest.dropFirst(operatorText.count))
        let numberText = String(valueText.prefix { $0.isNumber || $0 == "." })
        let unit = String(valueText.dropFirst(numberText.count)).lowercased()
        guard !numberText.isEmpty, let number = Double(numberText), number.isFinite, number >= 0,
            number < 1e12
        else {
            throw fail("'\(valueText)' does not start with a number of 0 or more")
        }
        if metric.isLatency {
            let scale: Double
            switch unit {
            case "us", "µs": scale = 0.001
            case "ms": scale = 1
            case "s": scale = 1000
            case "": throw fail("a latency needs a unit: us, ms or s (as in p99<250ms)")
            default: throw fail("'\(unit)' is not a unit of time (us, ms or s)")
            }
            limit = number * scale
            percent = false
        } else if metric == .rps {
            guard unit.isEmpty || unit == "/s" else { throw fail("rps takes a plain number of requests/s") }
            limit = number
            percent = false
        } else {
            switch unit {
            case "": percent = false
            case "%":
                guard number <= 100 else { throw fail("a percent is at most 100") }
                percent = true
            default: throw fail("'\(unit)' does not fit \(name): give a count or a percent (as in errors<0.1%)")
            }
            limit = number
        }
    }

    private static func metric(_ name: String) -> Metric? {
        switch name {
        case "mean", "avg": return .mean
        case "min": return .min
        case "max": return .max
        case "rps": return .rps
        case "errors": return .errors
        case "late_starts": return .lateStarts
        default: break
        }
        if name.hasPrefix("p"), let value = Double(name.dropFirst()), value > 0, value < 100,
            name.dropFirst().allSatisfy({ $0.isNumber || $0 == "." })
        {
            return .percentile(value)
        }
        if name.hasPrefix("status_") {
            let code = name.dropFirst("status_".count)
            if code.count == 3, code.hasSuffix("xx"), let first = code.first?.wholeNumberValue,
                (1...5).contains(first)
            {
                return .statusClass(first)
            }
            if code.count == 3, let value = Int(code), (100...599).contains(value) { return .status(value) }
        }
        return nil
    }

    /// The measured value, in the limit's unit.
    func measured(in report: BenchReport) -> Double {
        let total = Double(report.completed + report.failed)
        func count(_ value: Int) -> Double {
            percent ? (total > 0 ? Double(value) / total * 100 : 0) : Double(value)
        }
        switch metric {
        case .percentile(let p): return report.percentile(p)
        case .mean: return report.meanMilliseconds
        case .min: return report.latencies.totalCount > 0 ? Double(report.latencies.min) / 1000 : 0
        case .max: return report.percentile(100)
        case .rps: return report.requestsPerSecond
        case .errors: return count(report.failed)
        case .statusClass(let first):
            return count(report.statuses.filter { $0.key / 100 == first }.values.reduce(0, +))
        case .status(let code): return count(report.statuses[code] ?? 0)
        case .lateStarts: return count(report.lateStarts)
        }
    }

    package func holds(in report: BenchReport) -> Bool { comparison.holds(measured(in: report), limit) }

    /// `pass  p99<250ms  (measured 3.21 ms)`.
    package func line(for report: BenchReport) -> String {
        let value = measured(in: report)
        let shown: String
        if metric.isLatency {
            shown = String(format: "%.3f ms", value)
        } else if metric == .rps {
            shown = String(format: "%.1f requests/s", value)
        } else {
            shown = percent ? String(format: "%.4g%%", value) : String(Int(value))
        }
        return "threshold \(holds(in: report) ? "pass" : "FAIL")  \(text)  (measured \(shown))"
    }

    package func json(for report: BenchReport) -> [String: Any] {
        ["threshold": text, "pass": holds(in: report), "measured": measured(in: report)]
    }
}
