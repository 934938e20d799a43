import Foundation
import Histogram

/// The whole latency picture of a bench run: every percentile up to p99.99, a histogram drawn in the terminal
/// (oha's style), libcurl's phase timings and the per-interval rows; the same numbers in the JSON.
extension BenchReport {
    /// The percentiles the summary and the JSON carry, with their JSON names.
    static let summaryPercentiles: [(name: String, value: Double)] = [
        ("p50", 50), ("p75", 75), ("p90", 90), ("p95", 95), ("p99", 99), ("p99.9", 99.9), ("p99.99", 99.99),
        ("max", 100),
    ]

    package struct HistogramBucket: Equatable {
        /// Milliseconds: the bucket holds latencies above `from` up to `to` (the first one includes `from`).
        package var from: Double
        package var to: Double
        package var count: Int
    }

    /// Edges in microseconds on a 1-2-5 log scale, from the largest at or below `low` to the first at or above
    /// `high`.
    package static func logEdges(low: UInt64, high: UInt64) -> [UInt64] {
        var edges: [UInt64] = []
        var decade: UInt64 = 1
        outer: while true {
            for step: UInt64 in [1, 2, 5] {
                let edge = step * decade
                if edge <= low {
                    edges = [edge]
                } else {
                    edges.append(edge)
                    if edge >= high { break outer }
                }
            }
            decade *= 10
        }
        return edges
    }

    /// Latencies in log buckets with 1-2-5 edges (a fast run's requests spread over several bars instead of all
    /// landing in the first of ten equal ones).
    func histogramBuckets() -> [HistogramBucket] {
        guard latencies.totalCount > 0 else { return [] }
        let low = Swift.max(1, latencies.min)
        let high = Swift.max(low, latencies.maxRecorded)
        let edges = Self.logEdges(low: low, high: high)
        guard edges.count >= 2 else {
            return [HistogramBucket(from: Double(low) / 1000, to: Double(high) / 1000, count: Int(latencies.totalCount))]
        }
        var buckets = (0..<(edges.count - 1)).map {
            HistogramBucket(from: Double(edges[$0]) / 1000, to: Double(edges[$0 + 1]) / 1000, count: 0)
        }
        for value in latencies.recordedValues() {
            // A bin stands for its highest equivalent value, clamped to the largest one recorded.
            let micros = Swift.min(latencies.highestEquivalentForValue(value.value), high)
            let index = (edges.firstIndex { micros <= $0 } ?? edges.count - 1) - 1
            buckets[Swift.max(0, Swift.min(buckets.count - 1, index))].count += Int(value.count)
        }
        return buckets
    }

    /// Mean and p99 of one phase, in milliseconds.
    static func phaseSummary(_ histogram: BenchHistogram) -> (mean: Double, p99: Double) {
        guard histogram.totalCount > 0 else { return (0, 0) }
        return (histogram.mean / 1000, Double(histogram.valueAtPercentile(99)) / 1000)
    }

    func phaseSummaries() -> [(name: String, mean: Double, p99: Double)] {
        guard let phases else { return [] }
        return [
            ("dns", phases.dns), ("connect", phases.connect), ("tls", phases.tls), ("first_byte", phases.firstByte),
        ].map { name, histogram in
            let summary = Self.phaseSummary(histogram)
            return (name, summary.mean, summary.p99)
        }
    }

    /// Whether an interval row is shorter than `--interval` by more than 1% (the last one, cut short by the end of
    /// the run; a run that ends a millisecond early is not worth a mark).
    func isPartial(_ row: BenchRecorder.Row) -> Bool { row.end - row.start < intervalSeconds * 0.99 }

    /// Requests/s of an interval over its true length (a partial last row is not a full interval's rate).
    func requestsPerSecond(_ row: BenchRecorder.Row) -> Double {
        let span = row.end - row.start
        return span > 0 ? Double(row.requests) / span : 0
    }

    var meanMilliseconds: Double { latencies.totalCount > 0 ? latencies.mean / 1000 : 0 }

    /// The lines the table adds after its fields. The interval rows are all printed when `allIntervals`, else
    /// only when there are at most 30 of them.
    func latencyPictureLines(allIntervals: Bool) -> [String] {
        func ms(_ value: Double) -> String { String(format: "%.2f", value) }
        var lines = [
            "  percentiles   "
                + Self.summaryPercentiles.map { "\($0.name) \(ms(percentile($0.value)))" }.joined(separator: "  ")
                + "  mean \(ms(meanMilliseconds)) (ms)",
        ]
        let phaseSummaries = phaseSummaries()
        if !phaseSummaries.isEmpty, completed > 0 {
            lines.append(
                "  phases ms     "
                    + phaseSummaries.map { "\($0.name) \(ms($0.mean))/\(ms($0.p99))" }.joined(separator: "  ")
                    + " (mean/p99 from the transfer's start)")
        }
        let buckets = histogramBuckets()
        if !buckets.isEmpty {
            lines.append("")
            lines.append("Latency histogram (ms):")
            let largest = max(1, buckets.map(\.count).max() ?? 1)
            let countWidth = String(largest).count
            for bucket in buckets {
                let bar = String(repeating: "■", count: Int((Double(bucket.count) / Double(largest) * 40).rounded()))
                let count = String(bucket.count)
                lines.append(
                    "  " + String(format: "%10.3f", bucket.to) + " ["
                        + String(repeating: " ", count: countWidth - count.count) + count + "] |" + bar)
            }
        }
        if !intervals.isEmpty {
            lines.append("")
            if allIntervals || intervals.count <= 30 {
                lines.append("Intervals (\(String(format: "%g", intervalSeconds)) s each):")
                lines.append(
                    "          from-to s   requests   errors      bytes    req/s    p50 ms    p99 ms    max ms  in flight")
                for row in intervals {
                    let partial = isPartial(row)
                    let end = String(format: partial ? "%.3f" : "%.2f", row.end)
                    let paddedEnd = end.padding(toLength: max(8, end.count), withPad: " ", startingAt: 0)
                    lines.append(
                        String(format: "  %9.2f-", row.start) + paddedEnd
                            + String(
                                format: " %10d %8d %10d %8.0f", row.requests, row.errors, row.bytes, requestsPerSecond(row))
                            + (partial ? "*" : " ")
                            + String(
                                format: " %9.2f %9.2f %9.2f %10d", Double(row.p50) / 1000, Double(row.p99) / 1000,
                                Double(row.max) / 1000, row.inFlight))
                }
                if let last = intervals.last, isPartial(last) {
                    lines.append(
                        "  * partial: the run ended \(String(format: "%.3f", last.end - last.start)) s into this interval; "
                            + "its req/s is over that time")
                }
            } else {
                lines.append(
                    "Intervals: \(intervals.count) rows of \(String(format: "%g", intervalSeconds)) s "
                        + "(print them with --interval, or see --json / --report)")
            }
        }
        return lines
    }

    /// The JSON keys of the latency picture (documented in docs/load-testing.md).
    func latencyPictureJSON() -> [String: Any] {
        var percentiles: [String: Any] = [:]
        for entry in Self.summaryPercentiles { percentiles[entry.name] = percentile(entry.value) }
        percentiles["mean"] = meanMilliseconds
        var servicePercentiles: [String: Any] = [:]
        if let serviceLatencies, serviceLatencies.totalCount > 0 {
            for entry in Self.summaryPercentiles {
                servicePercentiles[entry.name] = Self.percentile(entry.value, of: serviceLatencies)
            }
            servicePercentiles["mean"] = serviceLatencies.mean / 1000
        }
        var phasesObject: [String: Any] = [:]
        for phase in phaseSummaries() { phasesObject[phase.name] = ["mean": phase.mean, "p99": phase.p99] }
        var distribution: [[String: Any]] = []
        if latencies.totalCount > 0 {
            for point in latencies.percentiles(ticksPerHalfDistance: 5) {
                distribution.append([
                    "percentile": point.percentileLevelIteratedTo, "ms": Double(point.value) / 1000,
                    "count": Int(point.totalCountToThisValue),
                ])
            }
        }
        let classes = ["1xx", "2xx", "3xx", "4xx", "5xx"]
        return [
            "percentiles_ms": percentiles,
            "service_percentiles_ms": serviceLatencies == nil ? NSNull() : servicePercentiles as Any,
            "histogram_ms": histogramBuckets().map { ["from": $0.from, "to": $0.to, "count": $0.count] },
            "phases_ms": phasesObject,
            "distribution_ms": distribution,
            "interval_s": intervalSeconds,
            "intervals": intervals.map { row -> [String: Any] in
                [
                    "start_s": row.start, "end_s": row.end, "requests": row.requests, "errors": row.errors,
                    "bytes": row.bytes, "p50_ms": Double(row.p50) / 1000, "p99_ms": Double(row.p99) / 1000,
                    "max_ms": Double(row.max) / 1000, "in_flight": row.inFlight,
                    "requests_per_s": requestsPerSecond(row), "partial": isPartial(row),
                    "statuses": Dictionary(uniqueKeysWithValues: zip(classes, row.statusClasses)),
                ]
            },
            "interrupted": interrupted,
        ]
    }

    /// The latency percentile distribution in HdrHistogram's `.hgrm` text format (milliseconds), as its
    /// plotters read it.
    package func hgrm() -> String {
        var text = ""
        latencies.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1000)
        return text
    }

    /// Open model: the service times' distribution in the same format (nil in the closed model).
    package func serviceHgrm() -> String? {
        guard let serviceLatencies else { return nil }
        var text = ""
        serviceLatencies.outputPercentileDistribution(to: &text, outputValueUnitScalingRatio: 1000)
        return text
    }

    /// Where `--hgrm FILE` puts the open model's service times: `FILE` with `-service` before `.hgrm`.
    package static func serviceHgrmPath(_ path: String) -> String {
        path.hasSuffix(".hgrm") ? String(path.dropLast(5)) + "-service.hgrm" : path + "-service.hgrm"
    }
}
