import Prometheus
import Synchronization
import TrawlJobs

/// A job's counters as Prometheus metrics (`--metrics-listen`, `--metrics-push`), labelled by host, source and
/// shard, in a registry of the job's own.
///
/// The registry is swift-prometheus's, the backend of swift-metrics; it is used directly instead of through
/// `MetricsSystem.bootstrap`, which is process-wide and once only, so that each job (and each test) keeps its
/// own counters and their help text.
final class JobPrometheusMetrics: JobMetricsObserver {
    let registry = PrometheusCollectorRegistry()
    private let shard: String
    private let series = Mutex<[SeriesKey: Series]>([:])

    /// Seconds: the buckets of `trawl_request_duration_seconds`.
    static let latencyBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    private struct SeriesKey: Hashable {
        var source: String
        var host: String
    }

    /// One (source, host)'s metrics, made once.
    private struct Series {
        var requests: Counter
        var retries: Counter
        var failures: Counter
        var pages: Counter
        var items: Counter
        var bytes: Counter
        var tooManyRequests: Counter
        var pauses: Counter
        var latency: DurationHistogram
    }

    /// `shard`: the run's shard (`I/N`), or `all` for a whole run.
    init(shard: String) { self.shard = shard }

    /// The metrics in Prometheus text exposition format (version 0.0.4).
    var text: [UInt8] { registry.emitToBuffer() }

    func pageFetched(source: String, host: String, bytes: Int, latency: Duration) {
        let series = self.series(source, host)
        series.requests.increment()
        series.bytes.increment(by: Int64(bytes))
        series.latency.record(latency)
    }

    func attemptFailed(source: String, host: String, retried: Bool) {
        let series = self.series(source, host)
        series.requests.increment()
        series.failures.increment()
        if retried { series.retries.increment() }
    }

    func responded(source: String, host: String, status: Int) {
        if status == 429 { series(source, host).tooManyRequests.increment() }
    }

    func pageCommitted(source: String, host: String, items: Int) {
        let series = self.series(source, host)
        series.pages.increment()
        series.items.increment(by: Int64(items))
    }

    func paused(source: String, host: String) { series(source, host).pauses.increment() }

    private func series(_ source: String, _ host: String) -> Series {
        let key = SeriesKey(source: source, host: host)
        return series.withLock { table in
            if let made = table[key] { return made }
            let made = make(key)
            table[key] = made
            return made
        }
    }

    private func make(_ key: SeriesKey) -> Series {
        let labels = [("host", key.host), ("source", key.source), ("shard", shard)]
        func counter(_ name: String, _ help: String) -> Counter {
            let descriptor = MetricNameDescriptor(
                namespace: "trawl", metricName: name, unitName: "total", helpText: help)
            return registry.makeCounter(descriptor: descriptor, labels: labels)
        }
        return Series(
            requests: counter("requests", "Requests sent, answered or failed (every attempt counts)."),
            retries: counter("retries", "Failed attempts followed by another attempt."),
            failures: counter("failed_attempts", "Attempts that failed (an error status or a network error)."),
            pages: counter("pages", "Pages written durably."),
            items: counter("items", "Items written durably."),
            bytes: counter("bytes", "Response body bytes of successful requests."),
            tooManyRequests: counter("http_429", "Responses with status 429 Too Many Requests."),
            pauses: counter("pauses", "Host pauses imposed by Retry-After or rate-limit headers."),
            latency: registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(
                    namespace: "trawl", metricName: "request_duration", unitName: "seconds",
                    helpText: "Time to the last byte of successful requests."),
                labels: labels, buckets: Self.latencyBuckets))
    }
}
