import Foundation

/// What `trawl bench` measured, printed as a table or as one JSON object.
struct BenchReport {
    let urls: [String]
    let concurrency: Int
    let elapsed: Duration
    /// Sorted, nanoseconds, one per completed request.
    let latencies: [UInt64]
    let bytes: Int
    let errors: [String: Int]
    let statuses: [Int: Int]
    let cpuSeconds: Double

    var completed: Int { latencies.count }
    var failed: Int { errors.values.reduce(0, +) }
    var seconds: Double { Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18 }
    var requestsPerSecond: Double { seconds > 0 ? Double(completed) / seconds : 0 }
    var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1e6 / seconds : 0 }
    var cpuMicrosecondsPerRequest: Double { completed > 0 ? cpuSeconds * 1e6 / Double(completed) : 0 }

    func percentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        let index = min(latencies.count - 1, Int((p / 100 * Double(latencies.count)).rounded(.up)) - 1)
        return Double(latencies[max(0, index)]) / 1e6
    }

    var non2xx: Int { statuses.filter { !(200..<300).contains($0.key) }.values.reduce(0, +) }

    func table(embeddedServer: Bool) -> String {
        func number(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        let errorText = errors.isEmpty ? "none"
            : errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let statusText = statuses.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        var lines = [
            "trawl bench: \(completed + failed) requests, \(concurrency) concurrent, \(urls.count) URL(s)"
                + (embeddedServer ? " (embedded test server \(urls[0]))" : ""),
            "  duration      \(number(seconds, 2)) s",
            "  requests/s    \(number(requestsPerSecond))",
            "  throughput    \(number(megabytesPerSecond, 1)) MB/s",
            "  latency ms    p50 \(number(percentile(50), 2))  p90 \(number(percentile(90), 2))  "
                + "p99 \(number(percentile(99), 2))  max \(number(percentile(100), 2))",
            "  client CPU    \(number(cpuMicrosecondsPerRequest, 1)) µs/request"
                + (embeddedServer ? " (includes the embedded server)" : ""),
            "  statuses      \(statusText.isEmpty ? "-" : statusText)",
            "  errors        \(errorText)",
        ]
        if non2xx > 0 { lines.append("  note          \(non2xx) responses were not 2xx") }
        return lines.joined(separator: "\n")
    }

    func json() -> String {
        let object: [String: Any] = [
            "urls": urls,
            "concurrency": concurrency,
            "requests": completed,
            "failed": failed,
            "duration_s": seconds,
            "requests_per_s": requestsPerSecond,
            "bytes": bytes,
            "mb_per_s": megabytesPerSecond,
            "latency_ms": [
                "p50": percentile(50), "p90": percentile(90), "p99": percentile(99),
                "p999": percentile(99.9), "max": percentile(100),
            ],
            "cpu_us_per_request": cpuMicrosecondsPerRequest,
            "statuses": Dictionary(uniqueKeysWithValues: statuses.map { (String($0.key), $0.value) }),
            "errors": errors,
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// User + system CPU seconds used by this process so far.
    static func cpuTime() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
