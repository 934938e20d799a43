import Foundation
import TrawlEngine

/// `--rounds N` (each round's numbers kept in the JSON) and `--compare BEFORE.json AFTER.json`.
/// A result file given to `--compare` that is not one: the CLI says which flag and what to give.
package struct BenchResultFileError: Error, Equatable {
    package enum Problem: Sendable, Equatable {
        /// The file cannot be read.
        case unreadable
        /// It is not JSON of `trawl bench --json` (no `requests_per_s`).
        case notABenchResult
    }

    package let path: String
    package let problem: Problem
}

package enum BenchRounds {
    /// One round's numbers, as the JSON keeps them under `rounds`.
    package static func summary(_ report: BenchReport) -> [String: Any] {
        var percentiles: [String: Any] = [:]
        for entry in BenchReport.summaryPercentiles { percentiles[entry.name] = report.percentile(entry.value) }
        return [
            "requests": report.completed, "failed": report.failed, "duration_s": report.seconds,
            "requests_per_s": report.requestsPerSecond, "percentiles_ms": percentiles,
        ]
    }

    package static func line(_ report: BenchReport, round: Int, of rounds: Int) -> String {
        String(
            format: "round %d/%d: %.0f requests/s, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d errors", round, rounds,
            report.requestsPerSecond, report.percentile(50), report.percentile(99), report.percentile(100),
            report.failed)
    }

    /// What --compare shows: name, where to find it in a round, whether more is better.
    static let metrics: [(name: String, value: @Sendable ([String: Any]) -> Double?, higherIsBetter: Bool)] = [
        ("requests/s", { number($0["requests_per_s"]) }, true),
        ("p50 ms", { percentile($0, "p50") }, false),
        ("p90 ms", { percentile($0, "p90") }, false),
        ("p99 ms", { percentile($0, "p99") }, false),
        ("p99.9 ms", { percentile($0, "p99.9") }, false),
        ("max ms", { percentile($0, "max") }, false),
        ("errors", { number($0["failed"]) }, false),
    ]

    private static func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    private static func percentile(_ round: [String: Any], _ name: String) -> Double? {
        if let value = number((round["percentiles_ms"] as? [String: Any])?[name]) { return value }
        return number((round["latency_ms"] as? [String: Any])?[name == "p99.9" ? "p999" : name])
    }

    /// The rounds of a result file (a result without `rounds` is one round).
    package static func rounds(of path: String) throws -> [[String: Any]] {
        guard let data = (try? DurableFiles.read(path, limit: 64 << 20)).map({ Data($0) }) else {
            throw BenchResultFileError(path: path, problem: .unreadable)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            number(object["requests_per_s"]) != nil
        else {
            throw BenchResultFileError(path: path, problem: .notABenchResult)
        }
        return (object["rounds"] as? [[String: Any]]).flatMap { $0.isEmpty ? nil : $0 } ?? [object]
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The side-by-side table: medians, the rounds' ranges, the ratio after/before, and a verdict: within
    /// noise when the ranges overlap, better or worse when they do not (judged only with 2+ rounds each).
    package static func comparison(
        before: (name: String, rounds: [[String: Any]]), after: (name: String, rounds: [[String: Any]])
    ) -> String {
        var integers = false
        func fmt(_ value: Double) -> String { String(format: value >= 100 || integers ? "%.0f" : "%.2f", value) }
        var lines = [
            "trawl bench --compare: \(before.name) (\(before.rounds.count) round(s)) vs \(after.name) "
                + "(\(after.rounds.count) round(s)); values are medians, [min-max] over the rounds",
            "  " + "metric".padding(toLength: 12, withPad: " ", startingAt: 0)
                + "before".leftPadded(26) + "after".leftPadded(26) + "ratio".leftPadded(9),
        ]
        let judged = before.rounds.count > 1 && after.rounds.count > 1
        for metric in metrics {
            let a = before.rounds.compactMap(metric.value)
            let b = after.rounds.compactMap(metric.value)
            guard !a.isEmpty, !b.isEmpty else { continue }
            let (ma, mb) = (median(a), median(b))
            integers = metric.name == "errors"
            func cell(_ values: [Double], _ middle: Double) -> String {
                values.count > 1
                    ? "\(fmt(middle)) [\(fmt(values.min() ?? 0))-\(fmt(values.max() ?? 0))]" : fmt(middle)
            }
            let ratio = ma > 0 ? String(format: "%.2fx", mb / ma) : (mb == 0 ? "1.00x" : "-")
            var verdict = ""
            if judged {
                let overlap = (a.min() ?? 0) <= (b.max() ?? 0) && (b.min() ?? 0) <= (a.max() ?? 0)
                if overlap {
                    verdict = "within noise"
                } else {
                    verdict = (mb > ma) == metric.higherIsBetter ? "better" : "worse"
                }
            }
            lines.append(
                "  " + metric.name.padding(toLength: 12, withPad: " ", startingAt: 0) + cell(a, ma).leftPadded(26)
                    + cell(b, mb).leftPadded(26) + ratio.leftPadded(9) + (verdict.isEmpty ? "" : "  " + verdict))
        }
        if !judged { lines.append("  (run both with --rounds 3 or more to tell a difference from noise)") }
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? " " + self : String(repeating: " ", count: width - count) + self
    }
}

extension BenchRounds {
    /// What `--compare` checks before it calls one run better: the facts that define what was measured.
    static let measuredFacts: [(key: String, name: String)] = [
        ("urls", "URLs"), ("method", "method"), ("mode", "model"), ("concurrency", "-c"), ("rate", "rate"),
        ("ramp", "ramp"), ("plan", "-n/-d"), ("http_version", "HTTP version"), ("loops", "loop threads"),
        ("cores", "cores"), ("trawl_version", "trawl version"),
    ]

    /// The top-level object of a result file.
    package static func result(of path: String) throws -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchResultFileError(path: path, problem: .unreadable)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            number(object["requests_per_s"]) != nil
        else {
            throw BenchResultFileError(path: path, problem: .notABenchResult)
        }
        return object
    }

    /// How two results differ in what was measured, one line per fact ("-c: 1 vs 4"); empty when they measured
    /// the same thing. A fact missing from both (an older result) is not a difference.
    package static func differences(_ before: [String: Any], _ after: [String: Any]) -> [String] {
        func text(_ value: Any?, key: String) -> String {
            guard let value, !(value is NSNull) else { return "none" }
            if key == "urls", let urls = value as? [Any] { return urls.map { "\($0)" }.sorted().joined(separator: " ") }
            if let object = value as? [String: Any] {
                return object.keys.sorted().map { "\($0)=\(text(object[$0], key: $0))" }.joined(separator: ",")
            }
            if let number = value as? NSNumber { return String(format: "%g", number.doubleValue) }
            return "\(value)"
        }
        return measuredFacts.compactMap { fact in
            let left = text(before[fact.key], key: fact.key)
            let right = text(after[fact.key], key: fact.key)
            guard left != right else { return nil }
            return "\(fact.name): \(left.prefix(200)) vs \(right.prefix(200))"
        }
    }
}
