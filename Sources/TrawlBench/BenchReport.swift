import Foundation
import Histogram

/// Latencies of one bench run: an HdrHistogram in microseconds, 3 significant digits.
package typealias BenchHistogram = Histogram<UInt64>

extension Histogram where Count == UInt64 {
    /// An empty latency histogram in microseconds, 3 significant digits, sized for latencies up to one second
    /// (about 90 KB) and growing past that to the largest value recorded (at most an hour).
    static func benchLatencies() -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(
            lowestDiscernibleValue: 1, highestTrackableValue: 1_000_000, numberOfSignificantValueDigits: .three)
        histogram.autoResize = true
        return histogram
    }

    /// Records a duration in microseconds (at least 1, at most the trackable maximum).
    mutating func recordLatency(_ duration: Duration) {
        let micros = duration.wholeMicroseconds
        record(UInt64(Swift.min(Swift.max(micros, 1), 3_600_000_000)))
    }
}

/// What `trawl bench` measured, printed as a table or as one JSON object.
package struct BenchReport {
    package enum Mode: String {
        case closed
        case open
    }

    let urls: [String]
    let concurrency: Int
    /// Engine loop threads (`--loops`).
    var loops = 1
    let mode: Mode
    /// The measured span (after the warm-up).
    let elapsed: Duration
    /// One value per completed request, in microseconds. In the open model, measured from the request's
    /// intended send time.
    let latencies: BenchHistogram
    /// Open model only: the same requests' service times, from their actual send (uncorrected, as wrk2's
    /// "uncorrected" figures); a request that waited for a free slot does not count its wait here.
    var serviceLatencies: BenchHistogram?
    let bytes: Int
    let errors: [String: Int]
    let statuses: [Int: Int]
    let cpuSeconds: Double
    /// Items counted in the pages (paginated flows only).
    var items: Int?
    /// Flows (walks of the pages) finished while measuring (paginated flows only).
    var flows: Int?
    /// The open model's target rate, requests/s (at the start of a ramp).
    var rate: Double?
    var ramp: BenchRunner.Ramp?
    /// Open model: requests that started more than `lateTolerance` after their intended send time.
    var lateStarts = 0
    var maxLateness: Duration = .zero
    /// Open model with -d: requests whose intended send time fell inside the run but that never started.
    var unsent = 0
    /// With -d: requests still in flight at the end plus the grace, cancelled (neither responses nor errors).
    var cutOff = 0
    /// `--timeout`: the per-request limit in seconds.
    var timeoutSeconds: Double?
    /// Wall-clock time (Unix seconds) of the start of the measurement: `--merge` lines up intervals by it.
    var startedAt: Double?
    /// `--expect-status`: any other status is a failed request (in `errors` by class).
    var expectedStatus = BenchStatusSet.success
    var warmupSeconds: Double = 0
    /// Requests sent during the warm-up (not measured).
    var warmupRequests = 0
    /// One row per `--interval` (the last one may be shorter).
    var intervals: [BenchRecorder.Row] = []
    var intervalSeconds: Double = 1
    /// libcurl's phase timings of the measured requests.
    var phases: BenchRecorder.Phases?
    /// Stopped by Ctrl-C before the planned end.
    package var interrupted = false
    /// `--rate-store`: the shared budget's store, key, live processes, pauses and local share.
    var shared: BenchSharedSummary?

    /// How late a start may be before it counts as late (timer jitter).
    static let lateTolerance: Duration = .milliseconds(1)

    package var completed: Int { Int(latencies.totalCount) }
    var failed: Int { errors.values.reduce(0, +) }
    var seconds: Double { Self.seconds(elapsed) }
    var requestsPerSecond: Double { seconds > 0 ? Double(completed) / seconds : 0 }
    var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1e6 / seconds : 0 }
    var itemsPerSecond: Double? { items.map { seconds > 0 ? Double($0) / seconds : 0 } }
    var cpuMicrosecondsPerRequest: Double { completed > 0 ? cpuSeconds * 1e6 / Double(completed) : 0 }
    var maxLatenessMilliseconds: Double { Self.seconds(maxLateness) * 1000 }

    package static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The latency at percentile `p` (0...100) in milliseconds; 100 is the maximum recorded.
    func percentile(_ p: Double) -> Double { Self.percentile(p, of: latencies) }

    /// The service time at percentile `p` in milliseconds (open model; 0 without one).
    func servicePercentile(_ p: Double) -> Double { serviceLatencies.map { Self.percentile(p, of: $0) } ?? 0 }

    static func percentile(_ p: Double, of histogram: BenchHistogram) -> Double {
        guard histogram.totalCount > 0 else { return 0 }
        let micros = p >= 100 ? histogram.maxRecorded : histogram.valueAtPercentile(p)
        return Double(micros) / 1000
    }

    var non2xx: Int { statuses.filter { !(200..<300).contains($0.key) }.values.reduce(0, +) }

    package func table(embeddedServer: Bool, allIntervals: Bool = false) -> String {
        func number(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        let errorText = errors.isEmpty ? "none"
            : errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let statusText = statuses.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        var model = mode == .open ? ", open model at \(number(rate ?? 0, rate.map { $0 < 10 } == true ? 2 : 0)) req/s"
            : ""
        if let ramp, mode == .open {
            model = ", open model ramping \(number(rate ?? 0, 2))→\(number(ramp.endRate, 2)) req/s over "
                + "\(number(ramp.seconds, 1)) s"
        }
        var lines = [
            "trawl bench: \(completed + failed) requests, \(concurrency) \(items != nil ? "flows" : "concurrent")"
                + "\(model), \(urls.count) URL(s)" + (loops > 1 ? ", \(loops) loop threads" : "")
                + (embeddedServer ? " (embedded test server \(urls[0]))" : ""),
        ]
        if warmupSeconds > 0 {
            lines.append("  warm-up       \(number(warmupSeconds, 1)) s, \(warmupRequests) requests not measured")
        }
        lines += [
            "  duration      \(number(seconds, 2)) s",
            "  requests/s    \(number(requestsPerSecond))",
            "  throughput    \(number(megabytesPerSecond, 1)) MB/s",
        ]
        if let items, let itemsPerSecond {
            lines.append("  items/s       \(number(itemsPerSecond)) (\(items) items in \(flows ?? 0) complete flows)")
        }
        lines += [
            "  latency ms    p50 \(number(percentile(50), 2))  p90 \(number(percentile(90), 2))  "
                + "p99 \(number(percentile(99), 2))  p99.9 \(number(percentile(99.9), 2))  "
                + "max \(number(percentile(100), 2))" + (mode == .open ? " (from intended send times)" : ""),
        ]
        if serviceLatencies != nil {
            lines.append(
                "  service ms    p50 \(number(servicePercentile(50), 2))  p90 \(number(servicePercentile(90), 2))  "
                    + "p99 \(number(servicePercentile(99), 2))  p99.9 \(number(servicePercentile(99.9), 2))  "
                    + "max \(number(servicePercentile(100), 2)) (from the actual sends, uncorrected)")
        } else {
            lines.append("  measured      from each request's actual send (closed model: service time)")
        }
        if mode == .open {
            lines.append(
                "  late starts   \(lateStarts) (max \(number(maxLatenessMilliseconds, 2)) ms late)"
                    + (unsent > 0 ? ", \(unsent) scheduled requests never started" : ""))
        }
        if let shared { lines.append(shared.line) }
        lines += [
            "  client CPU    \(number(cpuMicrosecondsPerRequest, 1)) µs/request"
                + (embeddedServer ? " (includes the embedded server)" : ""),
            "  statuses      \(statusText.isEmpty ? "-" : statusText)",
            "  errors        \(errorText)",
        ]
        if cutOff > 0 {
            lines.append(
                "  cut off       \(cutOff) in flight at the end of -d, cancelled after a "
                    + "\(number(BenchReport.seconds(BenchRunner.cutOffGrace), 1)) s grace (not counted as errors)")
        }
        let unexpected = statuses.filter { !expectedStatus.contains($0.key) }.values.reduce(0, +)
        if unexpected > 0 {
            lines.append(
                "  note          \(unexpected) responses had a status outside \(expectedStatus) (failed requests; "
                    + "--expect-status says which succeed)")
        } else if non2xx > 0 {
            lines.append("  note          \(non2xx) responses were not 2xx")
        }
        if interrupted { lines.append("  note          stopped by Ctrl-C: these are the requests measured until then") }
        lines += latencyPictureLines(allIntervals: allIntervals)
        return lines.joined(separator: "\n")
    }

    /// The layout of `json(extra:)`: snake_case keys, as the job report's (`JobReport.formatVersion`).
    package static let formatVersion = 1

    package func json(extra: [String: Any] = [:]) -> String {
        var object: [String: Any] = [
            "version": Self.formatVersion,
            "urls": urls,
            "concurrency": concurrency,
            "loops": loops,
            "mode": mode.rawValue,
            "rate": rate.map { $0 as Any } ?? NSNull(),
            "ramp": ramp.map { ["to_rate": $0.endRate, "seconds": $0.seconds] as Any } ?? NSNull(),
            "requests": completed,
            "failed": failed,
            "duration_s": seconds,
            "warmup_s": warmupSeconds,
            "warmup_requests": warmupRequests,
            "requests_per_s": requestsPerSecond,
            "bytes": bytes,
            "mb_per_s": megabytesPerSecond,
            "items": items.map { $0 as Any } ?? NSNull(),
            "items_per_s": itemsPerSecond.map { $0 as Any } ?? NSNull(),
            "flows": flows.map { $0 as Any } ?? NSNull(),
            "latency_ms": [
                "p50": percentile(50), "p90": percentile(90), "p99": percentile(99),
                "p999": percentile(99.9), "max": percentile(100),
            ],
            "latency_from": serviceLatencies == nil ? "actual_send" : "intended_send",
            "service_latency_ms": serviceLatencies == nil ? NSNull() : [
                "p50": servicePercentile(50), "p90": servicePercentile(90), "p99": servicePercentile(99),
                "p999": servicePercentile(99.9), "max": servicePercentile(100),
            ] as Any,
            "late_starts": lateStarts,
            "max_lateness_ms": maxLatenessMilliseconds,
            "unsent": unsent,
            "cut_off": cutOff,
            "timeout_s": timeoutSeconds.map { $0 as Any } ?? NSNull(),
            "expect_status": expectedStatus.description,
            "cpu_us_per_request": cpuMicrosecondsPerRequest,
            "statuses": Dictionary(uniqueKeysWithValues: statuses.map { (String($0.key), $0.value) }),
            "errors": errors,
            "started_at": startedAt.map { $0 as Any } ?? NSNull(),
            // The whole histograms (HdrHistogram's compressed V2 form, base64): `trawl bench --merge` adds them.
            "histogram": BenchHistogramCodec.encode(latencies),
            "max_us": latencies.totalCount > 0 ? latencies.maxRecorded : 0,
            "service_histogram": serviceLatencies.map { BenchHistogramCodec.encode($0) as Any } ?? NSNull(),
            "service_max_us": serviceLatencies.map { ($0.totalCount > 0 ? $0.maxRecorded : 0) as Any } ?? NSNull(),
        ]
        if let shared { object["rate_store"] = shared.json }
        object.merge(latencyPictureJSON()) { _, new in new }
        object.merge(extra) { _, new in new }
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
