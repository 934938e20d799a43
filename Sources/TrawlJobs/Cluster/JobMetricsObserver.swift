/// Sees a job's counters as the runner counts them, for an exporter (the CLI's Prometheus endpoint and push).
///
/// Called from the runner's tasks, concurrently: an observer must be cheap and thread-safe. The runner counts the
/// same events in its report; an observer sees each event once, as it happens.
public protocol JobMetricsObserver: Sendable {
    /// A request answered successfully: its body's bytes and the time to its last byte.
    func pageFetched(source: String, host: String, bytes: Int, latency: Duration)
    /// A request that failed (an error status or a transport error); `retried` when another attempt follows.
    func attemptFailed(source: String, host: String, retried: Bool)
    /// A response's status, whatever became of it (a 429 counts here even when it is retried).
    func responded(source: String, host: String, status: Int)
    /// A page written durably with its items.
    func pageCommitted(source: String, host: String, items: Int)
    /// A host paused by a rate-limit signal (`Retry-After`, rate-limit headers).
    func paused(source: String, host: String)
}

extension JobMetrics {
    /// The status of a response, told to the observer only (the report counts outcomes, not statuses).
    func responded(source: String, host: String, status: Int) {
        observer?.responded(source: source, host: host, status: status)
    }
}
