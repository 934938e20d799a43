import Foundation
import Synchronization
import Trawl

/// What a bulk job did: totals, per source and per host, failures, rate-limit waits and completeness flags.
/// Written as JSON by `trawl fetch --report FILE`: snake_case keys and a top-level `version`
/// (`JobReport.formatVersion`); `JobReport.decoded(from:)` also reads the camelCase reports of earlier releases.
///
/// ```swift
/// let report = try await JobRunner(job: job, options: options).run()
/// print(report.totals.items, report.failures.count)
/// ```
public struct JobReport: Sendable, Codable {
    public var startedAt: Date
    public var seconds: Double
    /// Every unit of this run (or shard) is in the output.
    public var complete: Bool
    public var resumed: Bool
    public var units: UnitCounts
    public var totals: JobStats
    public var sources: [String: JobStats]
    public var hosts: [String: JobStats]
    public var failures: [PageFailureRecord]
    /// Completeness flags of every unit of this run (or shard), including those found by earlier runs of the
    /// same job, in job order.
    public var flags: [CompletenessFlag]
    public var outputs: [OutputRecord]
    /// The state directory holding the checkpoint (kept when the job did not complete).
    public var stateDirectory: String?
    /// Incremental sources: the mark before and after this run, by source.
    public var marks: [String: MarkChange]?
    /// With `--adaptive`: per host, the lowest, highest and final concurrency allowed.
    public var concurrency: [String: ConcurrencyRange]? = nil
    /// A resumed run: what earlier runs of it had committed (the totals count only this run's pages).
    public var kept: Kept? = nil
    /// The layout of the JSON form: `formatVersion` when written by this release.
    public var version = JobReport.formatVersion

    /// The JSON layout this release writes: snake_case keys. Reports without a `version` are the camelCase
    /// layout of earlier releases.
    public static let formatVersion = 1

    enum CodingKeys: String, CodingKey {
        case version, seconds, complete, resumed, units, totals, sources, hosts, failures, flags, outputs, marks
        case concurrency, kept
        case startedAt = "started_at"
        case stateDirectory = "state_directory"
    }

    /// Pages and items an interrupted run had committed for the units this run went on with, and the units it
    /// had finished (whose pages are in the output, not counted here).
    public struct Kept: Sendable, Codable {
        public var pages: Int
        public var items: Int
        public var units: Int
    }

    public struct UnitCounts: Sendable, Codable {
        public var total = 0
        /// Merged into the output by an earlier run of the same job.
        public var skipped = 0
        public var done = 0
        public var failed = 0
    }

    /// One output file at the end of the run.
    public struct OutputRecord: Sendable, Codable {
        public var path: String
        /// Bytes in the file.
        public var bytes: Int64
        /// Units whose every item is in the file.
        public var units: Int
        /// Bytes that later runs keep as they are: the units in job order before the first incomplete one. Equal
        /// to `bytes` when nothing is incomplete; past it, the file holds the later units' items (the
        /// incomplete units' kept pages, the others whole), which the run that completes the job writes again in
        /// job order.
        public var settledBytes: Int64
        /// Units of this file that are not done (a page failed for good), in job order.
        public var incomplete: [IncompleteUnit]

        enum CodingKeys: String, CodingKey {
            case path, bytes, units, incomplete
            case settledBytes = "settled_bytes"
        }
    }

    /// A unit that is not done and what of it is in its output.
    public struct IncompleteUnit: Sendable, Codable {
        public var unit: String
        /// Pages (from the first, in order) and items of the unit that are in the output.
        public var pages: Int
        public var items: Int
    }
}

/// Counters of one scope (the job, a source or a host) for this run.
public struct JobStats: Sendable, Codable {
    public var requests = 0
    public var pages = 0
    public var items = 0
    /// Response body bytes received (decoded).
    public var bytes = 0
    /// Attempts that failed and were tried again.
    public var retries = 0
    /// Attempts that failed (retried or not).
    public var failedAttempts = 0
    /// Pauses imposed on the host by `Retry-After` or rate-limit headers, and the wall time they paused it
    /// (overlapping pauses count once: the union of their intervals).
    public var rateLimitWaits = 0
    public var rateLimitWaitSeconds = 0.0
    /// Pauses shortened to the job's maximum wait.
    public var cappedWaits = 0
    /// Pages the server answered `304 Not Modified` (conditional requests with `--cache`): the stored page was
    /// used. Counted in `requests` and `pages` too.
    public var notModified = 0
    /// With a primary key: items dropped because their key was written already (absent when none).
    public var duplicatesDropped: Int? = nil
    /// With a primary key: pages read again after drift (absent when none).
    public var rereads: Int? = nil
    public var latencyMs = Percentiles()

    enum CodingKeys: String, CodingKey {
        case requests, pages, items, bytes, retries
        case failedAttempts = "failed_attempts"
        case rateLimitWaits = "rate_limit_waits"
        case rateLimitWaitSeconds = "rate_limit_wait_seconds"
        case cappedWaits = "capped_waits"
        case notModified = "not_modified"
        case duplicatesDropped = "duplicates_dropped"
        case rereads
        case latencyMs = "latency_ms"
    }

    public struct Percentiles: Sendable, Codable {
        public var p50 = 0.0
        public var p90 = 0.0
        public var p99 = 0.0
        public var max = 0.0
    }
}

/// A page that still failed after its attempts: the unit stops there and the rest of the job goes on.
public struct PageFailureRecord: Sendable, Codable {
    public var source: String
    public var unit: String
    /// The page's position (`page 7`, `cursor ch_42`, …) and 0-based index in its unit.
    public var page: String
    public var pageIndex: Int
    /// Redacted.
    public var url: String
    public var attempts: Int
    public var status: Int?
    /// Redacted.
    public var error: String
    /// The unit's pages before this one (from its first, in order) and their items: they are kept, in the
    /// output, and not fetched again by the retry.
    public var keptPages = 0
    public var keptItems = 0

    enum CodingKeys: String, CodingKey {
        case source, unit, page, url, attempts, status, error
        case pageIndex = "page_index"
        case keptPages = "kept_pages"
        case keptItems = "kept_items"
    }
}

/// A sign the output may not hold the whole collection even though every page succeeded.
public struct CompletenessFlag: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// A page said `"incomplete_results": true` (GitHub search when it timed out).
        case incompleteResults = "incomplete_results"
        /// `max_items` or `max_pages` stopped the unit before the end of its collection.
        case capped
        /// The pages held fewer items than the first page announced.
        case shortOfTotal = "short_of_total"
        /// With a primary key: keys repeated or missing that a re-read did not settle (or a walk that cannot be
        /// read again), named in the message; `trawl fetch` exits 1 unless `allow_drift`.
        case drift
        /// With a primary key: more keys than ``DriftCheck/keyCap``; the rest were written unchecked.
        case driftUnchecked = "drift_unchecked"
    }

    public var source: String
    public var unit: String
    public var kind: Kind
    public var message: String
    /// For `incompleteResults`: the 0-based indices of the pages that said so.
    public var pageIndices: [Int]?

    enum CodingKeys: String, CodingKey {
        case source, unit, kind, message
        case pageIndices = "page_indices"
    }
}

/// A live view of a running job, for progress displays.
public struct JobProgress: Sendable {
    public var unitsTotal = 0
    public var unitsDone = 0
    public var unitsFailed = 0
    /// Units merged into the output by an earlier run (counted in `unitsDone`, their pages in no count here).
    public var unitsSkipped = 0
    /// Pages written durably (committed): what a resume keeps.
    public var pagesDone = 0
    /// Pages read so far, committed or not yet (a unit's pages commit in order, so this runs ahead).
    public var pagesFetched = 0
    /// Items in the pages read so far.
    public var itemsFetched = 0
    /// Pages of this run known in advance, summed over the units whose page count is known.
    public var pagesPlanned = 0
    /// Units of this run whose page count is known: planned walks once their first page is in, chains once
    /// they end.
    public var unitsPlanned = 0
    /// Units whose page count is not known (cursor and next-URL chains still walking).
    public var unitsOpenEnded = 0
    public var items = 0
    public var bytes = 0
    public var requests = 0
    public var retries = 0
    public var errors = 0
    public var waits = 0
    public var elapsed: Duration = .zero

    /// Zero everywhere; `JobRunner.progress` gives a running job's.
    public init() {}

    /// The pages of this run in all, once every unit's page count is known; `nil` before (a unit not started
    /// or a chain still walking could add any number).
    public var pagesTotal: Int? {
        unitsTotal > 0 && unitsPlanned >= unitsTotal - unitsSkipped ? max(pagesPlanned, pagesDone) : nil
    }
}

/// Thread-safe counters behind `JobProgress` and `JobReport`.
final class JobMetrics: Sendable {
    private struct Scope {
        var stats = JobStats()
        var latencies: [Double] = []
        /// When the latest pause counted in this scope ends: a pause that overlaps it adds only what lies beyond.
        var pausedUntil: ContinuousClock.Instant?
    }

    private struct State {
        var totals = Scope()
        var sources: [String: Scope] = [:]
        var hosts: [String: Scope] = [:]
        var progress = JobProgress()
        var failures: [PageFailureRecord] = []
    }

    private let state = Mutex(State())
    private let started = ContinuousClock.now
    let observer: (any JobMetricsObserver)?

    init(observer: (any JobMetricsObserver)? = nil) { self.observer = observer }
    /// Latencies kept per scope for percentiles; beyond it, a reservoir sample.
    private static let latencyCap = 50_000

    /// Child units found as their parents' pages arrived.
    func addUnits(_ count: Int) { state.withLock { $0.progress.unitsTotal += count } }

    func setUnits(total: Int, skipped: Int) {
        state.withLock {
            $0.progress.unitsTotal = total
            $0.progress.unitsDone = skipped
            $0.progress.unitsSkipped = skipped
        }
    }

    /// A page answered `304`, served from the cache.
    func notModified(source: String, host: String) {
        state.withLock { state in
            state.totals.stats.notModified += 1
            state.sources[source, default: Scope()].stats.notModified += 1
            state.hosts[host, default: Scope()].stats.notModified += 1
        }
    }

    /// A page read again after drift (``DriftCheck``).
    func reread(source: String) {
        state.withLock { state in
            let before = state.sources[source]?.stats.rereads ?? 0
            state.totals.stats.rereads = (state.totals.stats.rereads ?? 0) + 1
            state.sources[source, default: Scope()].stats.rereads = before + 1
        }
    }

    /// Items dropped as they were read because their key was written already: they leave the progress line's
    /// items read too.
    func duplicatesDropped(source: String, _ count: Int) {
        guard count > 0 else { return }
        state.withLock { state in
            state.progress.itemsFetched = max(0, state.progress.itemsFetched - count)
            Self.countDropped(&state, source: source, count)
        }
    }

    private static func countDropped(_ state: inout State, source: String, _ count: Int) {
        let before = state.sources[source]?.stats.duplicatesDropped ?? 0
        state.totals.stats.duplicatesDropped = (state.totals.stats.duplicatesDropped ?? 0) + count
        state.sources[source, default: Scope()].stats.duplicatesDropped = before + count
    }

    /// A successful response: counts the request, its bytes and latency (its items count once committed).
    func pageFetched(source: String, host: String, bytes: Int, items: Int, latency: Duration) {
        let ms = latency.seconds * 1000
        observer?.pageFetched(source: source, host: host, bytes: bytes, latency: latency)
        state.withLock { state in
            func update(_ scope: inout Scope) {
                scope.stats.requests += 1
                scope.stats.bytes += bytes
                Self.record(ms, in: &scope.latencies, count: scope.stats.requests)
            }
            update(&state.totals)
            update(&state.sources[source, default: Scope()])
            update(&state.hosts[host, default: Scope()])
            state.progress.bytes += bytes
            state.progress.requests += 1
            state.progress.pagesFetched += 1
            state.progress.itemsFetched += items
        }
    }

    /// A page written durably: counts it and its items (pages fetched but dropped after a failure don't count).
    func pageCommitted(source: String, host: String, items: Int) {
        observer?.pageCommitted(source: source, host: host, items: items)
        state.withLock { state in
            func update(_ stats: inout JobStats) {
                stats.pages += 1
                stats.items += items
            }
            update(&state.totals.stats)
            update(&state.sources[source, default: Scope()].stats)
            update(&state.hosts[host, default: Scope()].stats)
            state.progress.pagesDone += 1
            state.progress.items += items
        }
    }

    /// Items a re-read for drift answered again, dropped when the unit's segment was compacted to the newest line
    /// of each key: they count as duplicates dropped, and those this run counted as written (`writtenInThisRun`)
    /// no longer do.
    func supersededDropped(source: String, host: String, dropped: Int, writtenInThisRun items: Int) {
        guard dropped > 0 else { return }
        state.withLock { state in
            Self.countDropped(&state, source: source, dropped)
            state.totals.stats.items -= items
            state.sources[source, default: Scope()].stats.items -= items
            state.hosts[host, default: Scope()].stats.items -= items
            state.progress.items -= items
            // The progress line's items are the items read: each key once, as the output holds them.
            state.progress.itemsFetched = max(0, state.progress.itemsFetched - items)
        }
    }

    /// A bisected window's committed pages were discarded (its halves read them again): its items and pages no
    /// longer count as written, and the run has one unit more (two halves for one window).
    func windowDiscarded(source: String, host: String, pages: Int, items: Int) {
        state.withLock { state in
            func update(_ stats: inout JobStats) {
                stats.pages -= pages
                stats.items -= items
            }
            update(&state.totals.stats)
            update(&state.sources[source, default: Scope()].stats)
            update(&state.hosts[host, default: Scope()].stats)
            state.progress.pagesDone -= pages
            state.progress.items -= items
            state.progress.unitsTotal += 1
            // Nor as read in the progress line (its halves read them again, and plan them).
            state.progress.pagesFetched = max(0, state.progress.pagesFetched - pages)
            state.progress.itemsFetched = max(0, state.progress.itemsFetched - items)
        }
    }

    /// A request answered with a status that ends the walk (`stop_on_status`): counted, not as an error.
    func requestEnded(source: String, host: String) {
        state.withLock { state in
            state.totals.stats.requests += 1
            state.sources[source, default: Scope()].stats.requests += 1
            state.hosts[host, default: Scope()].stats.requests += 1
            state.progress.requests += 1
        }
    }

    func attemptFailed(source: String, host: String, retried: Bool) {
        observer?.attemptFailed(source: source, host: host, retried: retried)
        state.withLock { state in
            func update(_ stats: inout JobStats) {
                stats.requests += 1
                stats.failedAttempts += 1
                if retried { stats.retries += 1 }
            }
            update(&state.totals.stats)
            update(&state.sources[source, default: Scope()].stats)
            update(&state.hosts[host, default: Scope()].stats)
            state.progress.requests += 1
            state.progress.errors += 1
            if retried { state.progress.retries += 1 }
        }
    }

    /// A pause imposed now. The seconds counted are wall time: 41 requests that each see a 1-second pause at about
    /// the same moment pause the host for about 1 second, not 41.
    func paused(source: String, _ pause: RequestScheduler.Pause, at start: ContinuousClock.Instant = .now) {
        let end = start + pause.imposed
        observer?.paused(source: source, host: pause.host)
        state.withLock { state in
            func update(_ scope: inout Scope) {
                scope.stats.rateLimitWaits += 1
                let from = scope.pausedUntil.map { max($0, start) } ?? start
                if end > from { scope.stats.rateLimitWaitSeconds += (end - from).seconds }
                scope.pausedUntil = max(scope.pausedUntil ?? end, end)
                if pause.capped { scope.stats.cappedWaits += 1 }
            }
            update(&state.totals)
            update(&state.sources[source, default: Scope()])
            update(&state.hosts[pause.host, default: Scope()])
            state.progress.waits += 1
        }
    }

    /// A unit's page count became known: `pages` of them are left for this run.
    func planned(pages: Int) {
        state.withLock {
            $0.progress.pagesPlanned += pages
            $0.progress.unitsPlanned += 1
        }
    }

    func openEnded(_ delta: Int) { state.withLock { $0.progress.unitsOpenEnded += delta } }

    func unitFinished(failed: Bool) {
        state.withLock {
            if failed { $0.progress.unitsFailed += 1 } else { $0.progress.unitsDone += 1 }
        }
    }

    func failed(_ record: PageFailureRecord) { state.withLock { $0.failures.append(record) } }

    var progress: JobProgress {
        var progress = state.withLock { $0.progress }
        progress.elapsed = ContinuousClock.now - started
        return progress
    }

    func report(startedAt: Date, complete: Bool, resumed: Bool, units: JobReport.UnitCounts,
                outputs: [JobReport.OutputRecord], flags: [CompletenessFlag], stateDirectory: String?) -> JobReport {
        let elapsed = (ContinuousClock.now - started).seconds
        return state.withLock { state in
            func finished(_ scope: Scope) -> JobStats {
                var stats = scope.stats
                stats.latencyMs = Self.percentiles(scope.latencies)
                return stats
            }
            return JobReport(
                startedAt: startedAt, seconds: elapsed, complete: complete, resumed: resumed, units: units,
                totals: finished(state.totals), sources: state.sources.mapValues(finished),
                hosts: state.hosts.mapValues(finished), failures: state.failures, flags: flags,
                outputs: outputs, stateDirectory: stateDirectory)
        }
    }

    private static func record(_ value: Double, in samples: inout [Double], count: Int) {
        if samples.count < latencyCap {
            samples.append(value)
        } else {
            let slot = Int.random(in: 0..<max(count, 1))
            if slot < latencyCap { samples[slot] = value }
        }
    }

    static func percentiles(_ samples: [Double]) -> JobStats.Percentiles {
        guard !samples.isEmpty else { return JobStats.Percentiles() }
        let sorted = samples.sorted()
        func at(_ fraction: Double) -> Double {
            let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
            return (sorted[min(max(rank, 0), sorted.count - 1)] * 100).rounded() / 100
        }
        return JobStats.Percentiles(p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1))
    }
}
