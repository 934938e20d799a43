import Foundation

extension JobReport {
    /// One report for a job run as shards: totals, sources and hosts added up, units counted, failures, flags and
    /// outputs listed (in the order of `reports`), complete only when every shard is. The run spans from the
    /// earliest start to the latest end. Latency percentiles are the request-weighted mean of the shards' (an
    /// estimate: percentiles do not add up), `max` the largest; adaptive concurrency keeps the lowest `min` and the
    /// highest `max` and `final` per host.
    ///
    /// ```swift
    /// let merged = JobReport.merged([shard0, shard1])
    /// print(merged.totals.items, merged.complete)
    /// ```
    public static func merged(_ reports: [JobReport]) -> JobReport? {
        guard let first = reports.first else { return nil }
        let start = reports.map(\.startedAt).min() ?? first.startedAt
        let end = reports.map { $0.startedAt.addingTimeInterval($0.seconds) }.max() ?? start
        var merged = JobReport(
            startedAt: start, seconds: end.timeIntervalSince(start), complete: reports.allSatisfy(\.complete),
            resumed: reports.contains(where: \.resumed), units: UnitCounts(), totals: JobStats(), sources: [:],
            hosts: [:], failures: [], flags: [], outputs: [], stateDirectory: nil)
        for report in reports {
            merged.units.total.addSaturating(report.units.total)
            merged.units.skipped.addSaturating(report.units.skipped)
            merged.units.done.addSaturating(report.units.done)
            merged.units.failed.addSaturating(report.units.failed)
            merged.failures += report.failures
            merged.flags += report.flags
            merged.outputs += report.outputs
            if let concurrency = report.concurrency {
                var ranges = merged.concurrency ?? [:]
                for (host, range) in concurrency {
                    let earlier = ranges[host] ?? range
                    ranges[host] = ConcurrencyRange(
                        min: Swift.min(earlier.min, range.min), max: Swift.max(earlier.max, range.max),
                        final: Swift.max(earlier.final, range.final))
                }
                merged.concurrency = ranges
            }
        }
        merged.totals = JobStats.added(reports.map(\.totals))
        for key in Set(reports.flatMap(\.sources.keys)) {
            merged.sources[key] = JobStats.added(reports.compactMap { $0.sources[key] })
        }
        for key in Set(reports.flatMap(\.hosts.keys)) {
            merged.hosts[key] = JobStats.added(reports.compactMap { $0.hosts[key] })
        }
        return merged
    }
}

extension JobStats {
    /// The counters added up; see `JobReport.merged` for the latencies.
    static func added(_ all: [JobStats]) -> JobStats {
        var sum = JobStats()
        var weighted = (p50: 0.0, p90: 0.0, p99: 0.0)
        for stats in all {
            sum.requests.addSaturating(stats.requests)
            sum.pages.addSaturating(stats.pages)
            sum.items.addSaturating(stats.items)
            sum.bytes.addSaturating(stats.bytes)
            sum.retries.addSaturating(stats.retries)
            sum.failedAttempts.addSaturating(stats.failedAttempts)
            sum.rateLimitWaits.addSaturating(stats.rateLimitWaits)
            sum.rateLimitWaitSeconds = finite(sum.rateLimitWaitSeconds + stats.rateLimitWaitSeconds)
            sum.cappedWaits.addSaturating(stats.cappedWaits)
            let weight = Double(stats.requests)
            weighted.p50 = finite(weighted.p50 + finite(stats.latencyMs.p50) * weight)
            weighted.p90 = finite(weighted.p90 + finite(stats.latencyMs.p90) * weight)
            weighted.p99 = finite(weighted.p99 + finite(stats.latencyMs.p99) * weight)
            sum.latencyMs.max = Swift.max(sum.latencyMs.max, finite(stats.latencyMs.max))
        }
        if sum.requests > 0 {
            let total = Double(sum.requests)
            func rounded(_ value: Double) -> Double { (value / total * 100).rounded() / 100 }
            sum.latencyMs.p50 = rounded(weighted.p50)
            sum.latencyMs.p90 = rounded(weighted.p90)
            sum.latencyMs.p99 = rounded(weighted.p99)
        }
        return sum
    }
}

/// Reports come from files: a count near the top of its type or a time that is not finite must not trap the merge
/// (a sum stays at the largest value; a non-finite or absurd time counts as the largest finite one).
private func finite(_ value: Double) -> Double { value.isFinite ? value : value.isNaN ? 0 : .greatestFiniteMagnitude }

extension FixedWidthInteger {
    fileprivate mutating func addSaturating(_ other: Self) {
        let (sum, overflow) = addingReportingOverflow(other)
        self = overflow ? (other < 0 ? .min : .max) : sum
    }
}

/// Which units each of `count` shards runs, for fanning a job out from a workflow engine (Argo, Airflow).
///
/// ```swift
/// let plan = try ShardPlan(job: job, count: 4, environment: [:])
/// plan.shards[0].units   // ["repos org=apple", …]
/// ```
public struct ShardPlan: Sendable, Codable {
    public struct Entry: Sendable, Codable {
        /// `I/N`, as `--shard` takes it.
        public var shard: String
        public var index: Int
        /// Unit ids in job order.
        public var units: [String]
    }

    public var count: Int
    public var units: Int
    public var shards: [Entry]

    /// Unit ids do not depend on secrets: variables the templates use that `environment` lacks are filled with
    /// placeholders, so the plan can be made where the secrets are not.
    public init(job: Job, count: Int, environment: [String: String]) throws(JobSpecError) {
        var environment = environment
        for name in job.secretNames where environment[name] == nil { environment[name] = "plan-placeholder" }
        let all = try job.units(environment: environment)
        var shards: [Entry] = []
        for index in 0..<max(1, count) {
            let shard = try Shard(index: index, count: count)
            shards.append(Entry(
                shard: shard.description, index: index, units: all.filter(shard.contains).map(\.id)))
        }
        self.count = count
        self.units = all.count
        self.shards = shards
    }
}
