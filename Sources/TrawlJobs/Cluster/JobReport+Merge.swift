import Foundation

extension JobReport {
    /// One report for a job run as shards: totals, sources and hosts added up, units counted, failures, flags and
    /// outputs listed (in the order of `reports`), complete only when every shard is. The run spans from the
    /// earliest start to the latest end. Latency percentiles are the request-weighted mean of the shards' (an
    /// estimate: percentiles do not add up), `max` the largest; adaptive concurrency keeps the lowest `min` and the
    /// highest `max` and `final` per host; incremental marks are listed (a shard's own, the first on a clash).
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
            merged.units.total = saturatingSum(merged.units.total, report.units.total)
            merged.units.skipped = saturatingSum(merged.units.skipped, report.units.skipped)
            merged.units.done = saturatingSum(merged.units.done, report.units.done)
            merged.units.failed = saturatingSum(merged.units.failed, report.units.failed)
            merged.failures += report.failures
            merged.flags += report.flags
            merged.outputs += report.outputs
            if let marks = report.marks {
                merged.marks = (merged.marks ?? [:]).merging(marks) { first, _ in first }
            }
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

/// Two optional counters added up: absent when both are. A function of its own, not branches in `added`'s loop
/// (nested branches there once made the optimizer run for many minutes; `scripts/build-times` guards it).
@inline(never)
private func optionalSum(_ first: Int?, _ second: Int?) -> Int? {
    guard first != nil || second != nil else { return nil }
    return saturatingSum(first ?? 0, second ?? 0)
}

extension JobStats {
    /// The counters added up; see `JobReport.merged` for the latencies.
    static func added(_ all: [JobStats]) -> JobStats {
        var sum = JobStats()
        var weighted = (p50: 0.0, p90: 0.0, p99: 0.0)
        for stats in all {
            sum.requests = saturatingSum(sum.requests, stats.requests)
            sum.pages = saturatingSum(sum.pages, stats.pages)
            sum.items = saturatingSum(sum.items, stats.items)
            sum.bytes = saturatingSum(sum.bytes, stats.bytes)
            sum.retries = saturatingSum(sum.retries, stats.retries)
            sum.failedAttempts = saturatingSum(sum.failedAttempts, stats.failedAttempts)
            sum.rateLimitWaits = saturatingSum(sum.rateLimitWaits, stats.rateLimitWaits)
            sum.rateLimitWaitSeconds = finite(sum.rateLimitWaitSeconds + stats.rateLimitWaitSeconds)
            sum.cappedWaits = saturatingSum(sum.cappedWaits, stats.cappedWaits)
            sum.notModified = saturatingSum(sum.notModified, stats.notModified)
            sum.duplicatesDropped = optionalSum(sum.duplicatesDropped, stats.duplicatesDropped)
            sum.rereads = optionalSum(sum.rereads, stats.rereads)
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

/// `a + b`, or the bound in `b`'s direction when that overflows. Written without a branch inside the overflow
/// branch: with the nested `b < 0 ? .min : .max` form, the release build spent over 30 minutes in the SIL
/// optimizer's alias analysis (ARC code motion, loop-invariant code motion) on `JobStats.added`'s loop of ten
/// such sums (1.9 s for this file with this form; `scripts/build-times` watches for the next one).
private func saturatingSum(_ a: Int, _ b: Int) -> Int {
    let (sum, overflow) = a.addingReportingOverflow(b)
    // b >> (bitWidth - 1) is 0 when b >= 0 and all ones when b < 0: Int.max ^ that is .max or .min.
    return overflow ? Int.max ^ (b >> (Int.bitWidth - 1)) : sum
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
        // Checked before anything is allocated by the count; each unit is hashed once, not once per shard.
        _ = try Shard(index: 0, count: count)
        let all = try job.units(environment: environment)
        var shards = (0..<count).map { Entry(shard: "\($0)/\(count)", index: $0, units: []) }
        for unit in all {
            shards[Int(FNV1a.hash64(unit.id) % UInt64(count))].units.append(unit.id)
        }
        self.count = count
        self.units = all.count
        self.shards = shards
    }
}
