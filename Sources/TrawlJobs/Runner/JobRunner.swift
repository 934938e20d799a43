import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// Where a job's items are written.
public enum JobOutput: Sendable, Hashable {
    /// Every source's items into one JSONL file, in job order.
    case file(String)
    /// One JSONL file per source, `DIRECTORY/SOURCE.jsonl`.
    case directory(String)
}

/// How a job is run: output, state, shard, and the client to use.
public struct JobRunOptions: Sendable {
    public var output: JobOutput
    /// Directory for the checkpoint and unit segments. With one, a run after a crash or `kill -9` resumes
    /// where the last checkpoint left off; without, a temporary one next to the output is used and removed
    /// when the job completes (kept, and named in the report, when it does not).
    public var stateDirectory: String?
    /// Ignore saved state and start over (the output is rewritten).
    public var restart = false
    /// Wrap each item: `{"source":…,"unit":…,"page":N,"item":…}`, plus `"side":{…}` with the page's side fields
    /// when the source names some.
    public var withMeta = false
    /// Only units for which this returns true run (see `Shard`); `shardLabel` names the selection in the
    /// checkpoint so that shards don't share state by mistake.
    public var unitFilter: (@Sendable (WorkUnit) -> Bool)?
    public var shardLabel = "all"
    /// Environment for `${NAME}` references.
    public var environment: [String: String]
    /// Pages of one unit fetched at once when its page count is known; by default the job's per-host limit.
    public var pagesInFlightPerUnit: Int?
    /// Largest JSONL a single page may produce.
    public var maxPageBytes = 64 << 20
    /// The client; by default one sized by the job's settings.
    public var client: Client?

    public init(
        output: JobOutput, stateDirectory: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.output = output
        self.stateDirectory = stateDirectory
        self.environment = environment
    }
}

/// Runs a bulk job: every unit's pages, concurrently within the job's limits, each item written exactly once.
///
/// ```swift
/// let runner = JobRunner(units: units, fingerprint: job.fingerprint, settings: job.settings,
///                        options: JobRunOptions(output: .file("items.jsonl"), stateDirectory: "state"))
/// let report = try await runner.run()
/// if !report.failures.isEmpty { print("failed pages:", report.failures.map(\.page)) }
/// ```
///
/// A page that fails after its attempts stops its unit and is reported; the other units go on. The output then
/// holds every item read, in job order (the failed unit's pages before the failed one, later units whole; see
/// `JobReport.OutputRecord`), and running the job again with the same state fetches only what is missing and
/// ends with the output of an uninterrupted run. Throws only when the job cannot run at all (state from another
/// job, unwritable files).
public final class JobRunner: Sendable {
    let units: [WorkUnit]
    let fingerprint: String
    let settings: JobSettings
    let options: JobRunOptions
    let redact: @Sendable (String) -> String
    let unredact: @Sendable (String) -> String
    let metrics = JobMetrics()
    let client: Client
    let scheduler: RequestScheduler
    let policy: RetryPolicy

    /// A runner for explicit units (`Job.units(environment:)` makes them); `redact`/`unredact` hide secrets in
    /// everything persisted.
    public init(
        units: [WorkUnit], fingerprint: String, settings: JobSettings, options: JobRunOptions,
        redact: @escaping @Sendable (String) -> String = { $0 },
        unredact: @escaping @Sendable (String) -> String = { $0 }
    ) {
        self.units = units
        self.fingerprint = fingerprint
        self.settings = settings
        self.options = options
        self.redact = redact
        self.unredact = unredact
        if let client = options.client {
            self.client = client
        } else {
            var configuration = Client.Configuration()
            configuration.maxConcurrentTransfers = max(settings.concurrency, 1)
            configuration.maxConnectionsPerHost = max(settings.perHost, 1)
            configuration.timeouts.total = settings.timeout
            configuration.maxBodySize = options.maxPageBytes
            self.client = Client(configuration: configuration)
        }
        scheduler = RequestScheduler(
            concurrency: settings.concurrency, perHost: settings.perHost, rate: settings.ratePerHost,
            maxWait: settings.maxWait)
        policy = RetryPolicy(attempts: settings.attempts, backoff: settings.backoff, maxBackoff: settings.maxBackoff)
    }

    /// Pages of one unit fetched at once when its page count is known.
    var pagesInFlightPerUnit: Int { max(1, options.pagesInFlightPerUnit ?? settings.perHost) }

    /// Counters for a progress display; cheap to read often.
    public var progress: JobProgress { metrics.progress }

    /// Runs the job to the end; see the type's documentation.
    public func run() async throws -> JobReport {
        let startedAt = Date()
        let selected = units.filter { options.unitFilter?($0) ?? true }
        let temporaryState = options.stateDirectory == nil
        let stateDirectory = options.stateDirectory ?? defaultStateDirectory()
        let slots = selected.map {
            JobStore.UnitSlot(ordinal: $0.ordinal, id: $0.id, output: outputPath(for: $0))
        }
        let storeOptions = JobStore.Options(
            stateDirectory: stateDirectory, outputs: Array(Set(slots.map(\.output))), fingerprint: fingerprint,
            shard: options.shardLabel, withMeta: options.withMeta, restart: options.restart || temporaryState,
            redact: redact)
        let (store, opened) = try JobStore.open(options: storeOptions, units: slots)
        let pending = selected.filter { !opened.merged.contains($0.ordinal) }
        metrics.setUnits(total: selected.count, skipped: opened.merged.count)

        var counts = JobReport.UnitCounts(total: selected.count, skipped: opened.merged.count)
        let outcomes = try await runUnits(pending, saved: opened.saved, store: store)
        counts.done = outcomes.filter { !$0 }.count
        counts.failed = outcomes.filter { $0 }.count
        await scheduler.cancelAll()
        let closed = try await store.close()
        if closed.complete, temporaryState { try? FileManager.default.removeItem(atPath: stateDirectory) }
        var report = metrics.report(
            startedAt: startedAt, complete: closed.complete, resumed: opened.resumed, units: counts,
            outputs: closed.outputs, flags: closed.flags,
            stateDirectory: closed.complete && temporaryState ? nil : stateDirectory)
        let ordinals = Dictionary(selected.map { ($0.id, $0.ordinal) }, uniquingKeysWith: { first, _ in first })
        report.failures.sort { (ordinals[$0.unit] ?? 0, $0.pageIndex) < (ordinals[$1.unit] ?? 0, $1.pageIndex) }
        return report
    }

    /// Runs units, at most `concurrency` at once, in job order; returns per unit whether it failed.
    private func runUnits(_ pending: [WorkUnit], saved: [Int: Checkpoint.UnitState], store: JobStore)
        async throws -> [Bool]
    {
        let width = max(1, settings.concurrency)
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            var results: [Bool] = []
            var next = 0
            func start() {
                let unit = pending[next]
                let state = saved[unit.ordinal]
                group.addTask { try await self.runUnit(unit, saved: state, store: store) }
                next += 1
            }
            while next < pending.count, next < width { start() }
            while let failed = try await group.next() {
                results.append(failed)
                if next < pending.count { start() }
            }
            return results
        }
    }

    private func outputPath(for unit: WorkUnit) -> String {
        switch options.output {
        case .file(let path): return path
        case .directory(let directory): return directory + "/" + unit.source + ".jsonl"
        }
    }

    private func defaultStateDirectory() -> String {
        let anchor: String
        switch options.output {
        case .file(let path): anchor = path
        case .directory(let directory): anchor = directory + "/job"
        }
        return anchor + ".trawl-state"
    }

    // MARK: - One unit

    /// A page that failed for good; ends its unit.
    struct PageFailed: Error {
        var record: PageFailureRecord
    }

    /// Walks one unit from its saved state; returns whether it failed.
    private func runUnit(_ unit: WorkUnit, saved: Checkpoint.UnitState?, store: JobStore) async throws -> Bool {
        var state = saved ?? Checkpoint.UnitState(id: unit.id)
        let walker = UnitWalker(runner: self, unit: unit, store: store)
        let pagesBefore = state.pages
        let walked = state.status != .done
        if walked {
            state.status = .running
            state.failure = nil
            do {
                try await walker.walk(&state)
                state.status = .done
                state.next = nil
                if let expected = state.expectedItems, state.items < expected, state.flag(.capped) == nil {
                    state.setFlag(CompletenessFlag(
                        source: unit.source, unit: unit.id, kind: .shortOfTotal,
                        message:
                            "the server announced \(expected) items but its pages held \(state.items) (a search cap?)"))
                }
            } catch let failure as PageFailed {
                state.status = .failed
                state.failure = failure.record.error
                var record = failure.record
                record.keptPages = state.pages
                record.keptItems = state.items
                metrics.failed(record)
            }
        }
        // A planned walk counted its pages when it planned them; any other unit's count is known now.
        if !walked || state.first == nil { metrics.planned(pages: state.pages - pagesBefore) }
        try await store.finishUnit(ordinal: unit.ordinal, state: state)
        metrics.unitFinished(failed: state.status == .failed)
        return state.status == .failed
    }
}

/// A unit's pages handed to the writer but not yet durable: the walk goes on fetching while they are written (so
/// they share `fsync`s), with at most `limit` pages and `byteLimit` bytes outstanding; each is counted once durable.
/// Used by one unit's task.
///
/// The writer commits everything that arrived while it wrote the previous batch, so the number of pages per
/// `fsync` is what the unit may have outstanding: with 8 a single fast source spent most of its time waiting for
/// the disk (about 4 pages per commit, ~900 pages/s here); 256 pages or 16 MB keep the memory small and let one
/// commit carry what the writer's pause between batches (`JobStore.minimumBatchInterval`) brought.
final class CommitPipeline {
    let walker: UnitWalker
    let limit = 256
    let byteLimit = 16 << 20
    private var pending: [(commit: PendingCommit, items: Int, host: String, bytes: Int)] = []
    private var pendingBytes = 0

    init(walker: UnitWalker) { self.walker = walker }

    func submit(_ page: FetchedPage, state: Checkpoint.UnitState) async throws {
        let commit = walker.store.submitPage(ordinal: walker.unit.ordinal, lines: page.lines, state: state)
        pending.append((commit, page.itemCount, page.host, page.lines.count))
        pendingBytes += page.lines.count
        while pending.count > limit || (pendingBytes > byteLimit && pending.count > 1) {
            try await drainOne()
        }
    }

    func drain() async throws {
        while !pending.isEmpty { try await drainOne() }
    }

    private func drainOne() async throws {
        let first = pending.removeFirst()  // at most `limit` entries: shifting them costs nothing next to a write
        try await first.commit.wait()
        pendingBytes -= first.bytes
        walker.runner.metrics.pageCommitted(source: walker.unit.source, host: first.host, items: first.items)
    }
}

/// The page walk of one unit: first page, then a serial chain or a planned set of pages.
struct UnitWalker: Sendable {
    let runner: JobRunner
    let unit: WorkUnit
    let store: JobStore

    var fetcher: PageFetcher {
        let source = JSONValue.string(unit.source).json
        let id = JSONValue.string(unit.id).json
        var meta: (@Sendable (Int) -> [UInt8])?
        if runner.options.withMeta {
            var head: [UInt8] = Array("{\"source\":".utf8)
            head.append(contentsOf: source)
            head.append(contentsOf: Array(",\"unit\":".utf8))
            head.append(contentsOf: id)
            head.append(contentsOf: Array(",\"page\":".utf8))
            let prefix = head
            meta = { index in prefix + Array("\(index),\"item\":".utf8) }
        }
        var fetcher = PageFetcher(
            client: runner.client, items: unit.items, capture: captures, maxPageBytes: runner.options.maxPageBytes,
            metaPrefix: meta)
        fetcher.side = unit.side
        return fetcher
    }

    /// Read from every page: GitHub's search answers say `"incomplete_results": true` when they timed out.
    static let incompleteResults = JSONKeyPath("incomplete_results")

    var captures: [JSONKeyPath] {
        var paths = unit.pagination.capturePaths
        for path in unit.side + [Self.incompleteResults] where !paths.contains(path) { paths.append(path) }
        return paths
    }

    /// Walks the unit's remaining pages; every page is durable when it returns (or throws).
    func walk(_ state: inout Checkpoint.UnitState) async throws {
        let commits = CommitPipeline(walker: self)
        do {
            try await walkPages(&state, commits: commits)
        } catch {
            try await commits.drain()
            throw error
        }
        try await commits.drain()
    }

    private func walkPages(_ state: inout Checkpoint.UnitState, commits: CommitPipeline) async throws {
        let strategy = unit.pagination
        let fetcher = self.fetcher
        if let first = state.first {
            let response = try stored { try first.pageResponse(base: unit.request, unredact: runner.unredact) }
            let rest = capped(strategy.remaining(after: response) ?? [], firstItems: first.itemCount, state: &state)
            runner.metrics.planned(pages: rest.count + 1 - state.pages)
            try await walkPlanned(rest, state: &state, fetcher: fetcher, commits: commits)
            return
        }
        if state.pages > 0 {
            guard let stored = state.next else { return }
            let next = try self.stored { try stored.pageRequest(base: unit.request, unredact: runner.unredact) }
            runner.metrics.openEnded(1)
            defer { runner.metrics.openEnded(-1) }
            var loopGuard = PageLoopGuard()  // a resumed walk knows only the page it resumes at
            loopGuard.visit(next, index: state.pages)
            try await walkSerial(from: next, state: &state, fetcher: fetcher, commits: commits, loopGuard: loopGuard)
            return
        }
        let firstRequest = strategy.first(unit.request)
        let page = try await fetch(firstRequest, index: 0, fetcher: fetcher)
        let response = PageResponse(
            request: firstRequest.request, position: firstRequest.position, itemCount: page.itemCount,
            captured: page.captured, head: page.head)
        state.pages = 1
        state.items = page.itemCount
        state.expectedItems = strategy.total(in: response)
        noteIncompleteResults(page, index: 0, state: &state)
        if runner.pagesInFlightPerUnit > 1, let all = strategy.remaining(after: response) {
            let rest = capped(all, firstItems: page.itemCount, state: &state)
            state.first = StoredPage(response, redact: runner.redact)
            state.pageTotal = rest.count + 1
            state.next = nil
            runner.metrics.planned(pages: rest.count + 1)
            try await commits.submit(page, state: state)
            try await walkPlanned(rest, state: &state, fetcher: fetcher, commits: commits)
        } else {
            var loopGuard = PageLoopGuard()
            loopGuard.visit(firstRequest, index: 0)
            let next = try following(firstRequest, response: response, index: 1, loopGuard: &loopGuard)
            state.next = next.map { StoredPageRequest($0, redact: runner.redact) }
            try await commits.submit(page, state: state)
            guard let next else { return }
            runner.metrics.openEnded(1)
            defer { runner.metrics.openEnded(-1) }
            try await walkSerial(from: next, state: &state, fetcher: fetcher, commits: commits, loopGuard: loopGuard)
        }
    }

    /// Follows the chain from `start`; `loopGuard` holds the pages of this walk so far, `start` included, so a chain
    /// that comes back to any of them fails instead of looping.
    private func walkSerial(
        from start: PageRequest, state: inout Checkpoint.UnitState, fetcher: PageFetcher, commits: CommitPipeline,
        loopGuard: PageLoopGuard
    ) async throws
    {
        var loopGuard = loopGuard
        var current: PageRequest? = start
        while let request = current {
            if capReached(state: &state) { return }
            let index = state.pages
            let page = try await fetch(request, index: index, fetcher: fetcher)
            noteIncompleteResults(page, index: index, state: &state)
            let response = PageResponse(
                request: request.request, position: request.position, itemCount: page.itemCount,
                captured: page.captured, head: page.head)
            let next = try following(request, response: response, index: index + 1, loopGuard: &loopGuard)
            state.pages += 1
            state.items += page.itemCount
            state.next = next.map { StoredPageRequest($0, redact: runner.redact) }
            try await commits.submit(page, state: state)
            current = next
        }
    }

    /// Fetches `requests[state.pages - 1...]` with up to `pagesInFlightPerUnit` in flight, committing in order.
    private func walkPlanned(
        _ requests: [PageRequest], state: inout Checkpoint.UnitState, fetcher: PageFetcher, commits: CommitPipeline
    ) async throws
    {
        let width = runner.pagesInFlightPerUnit
        var started = max(0, state.pages - 1)
        var inFlight: [Task<FetchedPage, any Error>] = []
        defer { for task in inFlight { task.cancel() } }
        while started < requests.count || !inFlight.isEmpty {
            while started < requests.count, inFlight.count < width {
                let request = requests[started]
                let index = started + 1
                inFlight.append(Task { try await self.fetch(request, index: index, fetcher: fetcher) })
                started += 1
            }
            let task = inFlight.removeFirst()
            let page = try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
            noteIncompleteResults(page, index: state.pages, state: &state)
            state.pages += 1
            state.items += page.itemCount
            try await commits.submit(page, state: state)
        }
    }

    /// `rest` (every page after the first) cut to the unit's `maxPages` and to the pages `maxItems` needs at the
    /// first page's size; a cut is flagged in `state`.
    private func capped(_ rest: [PageRequest], firstItems: Int, state: inout Checkpoint.UnitState) -> [PageRequest] {
        let total = rest.count + 1
        var allowed = total
        var reason = ""
        if let maxPages = unit.maxPages, maxPages < allowed {
            allowed = maxPages
            reason = "max_pages \(maxPages)"
        }
        if let maxItems = unit.maxItems, firstItems > 0 {
            let pages = (maxItems + firstItems - 1) / firstItems
            if pages < allowed {
                allowed = pages
                reason = "max_items \(maxItems)"
            }
        }
        allowed = max(1, allowed)
        guard allowed < total else { return rest }
        let announced = state.expectedItems
        let planned = min(announced ?? Int.max, firstItems * allowed)
        let of = announced.map { " of \($0) items" } ?? " items"
        state.setFlag(CompletenessFlag(
            source: unit.source, unit: unit.id, kind: .capped,
            message: "capped at \(planned)\(of) (\(reason): \(allowed) of \(total) pages)"))
        return Array(rest.prefix(allowed - 1))
    }

    /// Whether a serial walk must stop before its next page because of `maxPages` or `maxItems` (flagged in
    /// `state` when so).
    private func capReached(state: inout Checkpoint.UnitState) -> Bool {
        var reason: String?
        if let maxPages = unit.maxPages, state.pages >= maxPages { reason = "max_pages \(maxPages)" }
        if let maxItems = unit.maxItems, state.items >= maxItems { reason = "max_items \(maxItems)" }
        guard let reason else { return false }
        let message =
            if let expected = state.expectedItems {
                "capped at \(state.items) of \(expected) items (\(reason): \(state.pages) pages)"
            } else {
                "capped at \(state.items) items (\(reason): \(state.pages) pages; the server had more)"
            }
        state.setFlag(CompletenessFlag(source: unit.source, unit: unit.id, kind: .capped, message: message))
        return true
    }

    /// Flags the unit when `page` says `"incomplete_results": true`, listing every such page.
    private func noteIncompleteResults(_ page: FetchedPage, index: Int, state: inout Checkpoint.UnitState) {
        guard page.captured[Self.incompleteResults]?.boolValue == true else { return }
        var indices = state.flag(.incompleteResults)?.pageIndices ?? []
        guard !indices.contains(index) else { return }
        indices.append(index)
        indices.sort()
        let shown = indices.prefix(10).map(String.init).joined(separator: ", ")
        let more = indices.count > 10 ? " and \(indices.count - 10) more" : ""
        state.setFlag(CompletenessFlag(
            source: unit.source, unit: unit.id, kind: .incompleteResults,
            message:
                "the server said incomplete_results: true on \(indices.count) page(s) (page index \(shown)\(more))",
            pageIndices: indices))
    }

    /// The request after a page, refusing a chain that points back at any page of this walk (a cursor that
    /// repeats, an A -> B -> A cycle): the job would otherwise fetch and write the same pages forever.
    private func following(
        _ request: PageRequest, response: PageResponse, index: Int, loopGuard: inout PageLoopGuard
    ) throws -> PageRequest? {
        guard let next = unit.pagination.next(after: response) else { return nil }
        if let earlier = loopGuard.visit(next, index: index) {
            let message = "the page after \(request.position) is \(next.position), already fetched as page index "
                + "\(earlier): a pagination loop (check the cursor or next key path)"
            throw JobRunner.PageFailed(record: PageFailureRecord(
                source: unit.source, unit: unit.id, page: runner.redact(next.position.description), pageIndex: index,
                url: runner.redact(next.request.url), attempts: 0, status: nil, error: runner.redact(message)))
        }
        return next
    }

    private func stored<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw JobError.state("the checkpoint of unit '\(unit.id)' is unreadable (\(error))",
                hint: "pass --restart to start the job over")
        }
    }

    /// One page with retries; host pauses and rate limits are applied by the scheduler.
    func fetch(_ pageRequest: PageRequest, index: Int, fetcher: PageFetcher) async throws -> FetchedPage {
        let host = Self.host(of: pageRequest.request.url)
        let policy = runner.policy
        var attempt = 0
        while true {
            attempt += 1
            try await runner.scheduler.acquire(host)
            let result: Result<FetchedPage, PageFetcher.Failure>
            do {
                result = .success(try await fetcher.fetch(pageRequest.request, pageIndex: index))
            } catch {
                result = .failure(error)
            }
            // A rate-limit signal pauses the host before this request's slot is given back, so that no request
            // waiting for the host slips out between the two.
            let head: ResponseHead?
            switch result {
            case .success(let page): head = page.head
            case .failure(let failure): head = failure.head
            }
            if let head, let wait = RateLimitSignal.wait(status: head.status, headers: head.headers) {
                runner.metrics.paused(source: unit.source, await runner.scheduler.pause(host, for: wait))
            }
            await runner.scheduler.release(host)
            switch result {
            case .success(var page):
                page.host = host
                runner.metrics.pageFetched(
                    source: unit.source, host: host, bytes: page.bodyBytes, latency: page.latency)
                return page
            case .failure(let failure):
                try Task.checkCancellation()
                let retry = policy.isRetryable(failure.error) && attempt < policy.attempts
                runner.metrics.attemptFailed(source: unit.source, host: host, retried: retry)
                guard retry else {
                    throw JobRunner.PageFailed(record: PageFailureRecord(
                        source: unit.source, unit: unit.id, page: runner.redact(pageRequest.position.description),
                        pageIndex: index,
                        url: runner.redact(pageRequest.request.url), attempts: attempt,
                        status: (failure.error as? TrawlError)?.status ?? failure.head?.status,
                        error: runner.redact(String(describing: failure.error))))
                }
                try await Task.sleep(for: policy.delay(afterAttempt: attempt))
            }
        }
    }

    /// `scheme://host:port`, the unit of per-host limits and pauses.
    static func host(of url: String) -> String {
        guard let components = URLComponents(string: url), let host = components.host else { return url }
        let scheme = components.scheme ?? "http"
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}

extension JobRunner {
    /// A runner for `job`'s units (only `shard`'s, when given), with its secrets redacted from the state.
    ///
    /// ```swift
    /// let job = try Job.load(contentsOf: "jobs.yaml", environment: ProcessInfo.processInfo.environment)
    /// let report = try await JobRunner(job: job, options: JobRunOptions(output: .directory("out"))).run()
    /// ```
    public convenience init(job: Job, options: JobRunOptions, shard: Shard? = nil) throws {
        var options = options
        if let shard {
            options.unitFilter = { shard.contains($0) }
            options.shardLabel = "\(shard.index)/\(shard.count)"
        }
        let redactor = job.redactor(environment: options.environment)
        self.init(
            units: try job.units(environment: options.environment), fingerprint: job.fingerprint,
            settings: job.settings, options: options, redact: { redactor.redact($0) },
            unredact: { redactor.unredact($0) })
    }
}
