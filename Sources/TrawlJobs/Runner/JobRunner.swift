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
    /// How many shards the job's units are split between (a store-less shard applies its share of the rate).
    public var shardCount = 1
    /// Environment for `${NAME}` references.
    public var environment: [String: String]
    /// Pages of one unit fetched at once when its page count is known; by default the job's per-host limit.
    public var pagesInFlightPerUnit: Int?
    /// Largest JSONL a single page may produce.
    public var maxPageBytes = 64 << 20
    /// The client; by default one sized by the job's settings.
    public var client: Client?
    /// Pages already fetched (a detected first page), answered instead of the network, each once.
    public var firstPages: (@Sendable (Request) async throws -> RawResponse?)?
    /// Sources with `parent:` (`Job.dependents(environment:)`): their units come from their parents' items.
    public var dependents: [DependentSource] = []
    /// Sees the job's counters as they change (`trawl fetch --metrics-listen`); none by default.
    public var metricsObserver: (any JobMetricsObserver)?
    /// Told, once the state is read, what this run is: a new run after a finished one, or the resumption of an
    /// interrupted one (`resuming run R: N pages kept, M to go`). `trawl fetch` prints it on stderr.
    public var announce: (@Sendable (String) -> Void)?

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
    let metrics: JobMetrics
    let clients: JobClients
    let scheduler: RequestScheduler
    let policy: RetryPolicy
    let authorizers: JobAuthorizers
    let childPlan: ChildPlan?
    /// The job's response cache (`settings.cache`): private to the job, so credentialed pages are stored too.
    let cache: DiskResponseCache?

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
        self.unredact = unredact
        metrics = JobMetrics(observer: options.metricsObserver)
        clients = JobClients(units: units, settings: settings, options: options)
        let authorizers = JobAuthorizers(units: units, client: clients.shared)
        self.authorizers = authorizers
        self.redact = { authorizers.redact(redact($0)) }
        childPlan = Self.makeChildPlan(units: units, options: options)
        scheduler = RequestScheduler(settings: settings, options: options, job: fingerprint)
        policy = RetryPolicy(attempts: settings.attempts, backoff: settings.backoff, maxBackoff: settings.maxBackoff)
        cache = settings.cache.flatMap { try? DiskResponseCache(directory: $0, isPrivate: true) }
    }

    /// Pages of one unit fetched at once when its page count is known.
    var pagesInFlightPerUnit: Int { max(1, options.pagesInFlightPerUnit ?? settings.perHost) }

    /// Counters for a progress display; cheap to read often.
    public var progress: JobProgress { metrics.progress }

    /// Where the run keeps its state: the given directory, else the temporary one beside the output (kept when
    /// the run does not complete, so that `--state` with it resumes).
    public var stateDirectory: String { options.stateDirectory ?? defaultStateDirectory() }

    /// Runs the job to the end; see the type's documentation.
    public func run() async throws -> JobReport {
        let startedAt = Date()
        var selected = units.filter { options.unitFilter?($0) ?? true || childPlan?.isParent($0) == true }
        try checkCache()
        let temporaryState = options.stateDirectory == nil
        let stateDirectory = options.stateDirectory ?? defaultStateDirectory()
        // The state a run with --state finds: a finished run's starts a new run (whose full-refresh outputs are
        // staged until complete, so the last snapshot stays whole meanwhile); an interrupted one's is resumed.
        let existing = temporaryState || options.restart ? nil : Self.checkpoint(in: stateDirectory)
        // A changed job (or another shard's state, or --with-meta changed) is refused by the store as before.
        let afterFinished =
            existing.map {
                $0.complete && $0.fingerprint == fingerprint && $0.shard == options.shardLabel
                    && $0.withMeta == options.withMeta
            } == true
        let staging = afterFinished
            || existing.map { !$0.complete && $0.outputs.keys.contains { $0.hasSuffix(Self.stagedSuffix) } } == true
        let incremental = try prepareIncremental(&selected)
        let unitSlots = selected.map {
            JobStore.UnitSlot(
                ordinal: $0.ordinal, id: $0.id, output: outputPath(for: $0, run: incremental?.runID, staging: staging))
        }
        let slots = childPlan?.slots(unitSlots, selected: selected) ?? unitSlots
        var storeOptions = JobStore.Options(
            stateDirectory: stateDirectory, outputs: Array(Set(slots.map(\.output))), fingerprint: fingerprint,
            shard: options.shardLabel, withMeta: options.withMeta, restart: options.restart || temporaryState,
            redact: redact)
        if let incremental {
            (storeOptions.restart, storeOptions.runID) = (incremental.restart, incremental.runID)
            storeOptions.started = incremental.started
        }
        if afterFinished { storeOptions.restart = true }
        let runID = storeOptions.runID ?? (afterFinished ? nil : existing?.run) ?? Self.newRunID()
        storeOptions.runID = runID
        if let childPlan { storeOptions.expandChildren = { childPlan.expand($0, $1) } }
        storeOptions.temporary = temporaryState
        let (store, opened) = try JobStore.open(options: storeOptions, units: slots)
        if options.restart, !temporaryState { Self.removeStaged(besides: slots.map(\.output)) }
        // A bisected window (its halves run instead) is done, with no items: neither run nor counted.
        let bisected = incremental?.bisected ?? []
        let pending = selected.filter { !opened.merged.contains($0.ordinal) && !bisected.contains($0.ordinal) }
        let skipped = opened.merged.filter { !UnitID(ordinal: $0).isPlaceholder && !bisected.contains($0) }.count
        let unitCount = selected.count - selected.filter { bisected.contains($0.ordinal) }.count
        metrics.setUnits(total: unitCount, skipped: skipped)
        if afterFinished {
            let previous = existing?.run.map { "run \($0)" } ?? "the last run"
            options.announce?(
                "run \(runID): \(previous) finished, so this is a new run"
                    + (staging && slots.contains { $0.output.hasSuffix(Self.stagedSuffix) }
                        ? "; each output is written beside it (FILE\(Self.stagedSuffix)) and replaces it when complete"
                        : ""))
        } else if opened.resumed, !temporaryState {
            options.announce?(
                Self.resumeLine(
                    run: runID, kept: opened.saved.values.reduce(0) { $0 + $1.pages }, unitsDone: skipped,
                    pending: pending.map { opened.saved[$0.ordinal] }))
        }

        var counts = JobReport.UnitCounts(total: unitCount, skipped: skipped)
        // The units are started from a loop as well (see `loop(for:)`): on the global pool, a pool thread blocked
        // by anything else in the process would hold back children's start while their parents' walks go on.
        let outcomes = try await withTaskExecutorPreference(clients.shared.executor) {
            if let childPlan {
                return try await runWithChildren(
                    pending, saved: opened.saved, merged: opened.merged, store: store, plan: childPlan,
                    run: { unit, state in try await self.runUnit(unit, saved: state, store: store) })
            }
            return try await runUnits(pending, saved: opened.saved, store: store)
        }
        // A bisected window counts as its two halves (the window's outcome is not a unit's end).
        if childPlan != nil {
            counts.total = skipped + outcomes.filter { !$0.isSplit }.count
        } else {
            counts.total += outcomes.filter(\.isSplit).count
        }
        counts.done = outcomes.filter(\.isDone).count
        counts.failed = outcomes.filter(\.failed).count
        await scheduler.cancelAll()
        var closed = try await store.close()
        if closed.complete, temporaryState { try? FileManager.default.removeItem(atPath: stateDirectory) }
        if closed.complete, staging { try publishStaged(&closed.outputs) }
        var report = metrics.report(
            startedAt: startedAt, complete: closed.complete, resumed: opened.resumed, units: counts,
            outputs: closed.outputs, flags: closed.flags,
            stateDirectory: closed.complete && temporaryState ? nil : stateDirectory)
        if settings.adaptive { report.concurrency = await scheduler.concurrencyReport }
        if opened.resumed, !afterFinished, !temporaryState {
            report.kept = JobReport.Kept(
                pages: opened.saved.values.reduce(0) { $0 + $1.pages },
                items: opened.saved.values.reduce(0) { $0 + $1.items }, units: skipped)
        }
        let ordinals = Dictionary(selected.map { ($0.id, $0.ordinal) }, uniquingKeysWith: { first, _ in first })
        report.marks = try incremental.map { try commitIncremental($0, complete: closed.complete) }
        report.failures.sort { (ordinals[$0.unit] ?? 0, $0.pageIndex) < (ordinals[$1.unit] ?? 0, $1.pageIndex) }
        return report
    }

    /// Runs units, at most `concurrency` at once, in job order; returns how each ended.
    private func runUnits(_ pending: [WorkUnit], saved: [Int: Checkpoint.UnitState], store: JobStore)
        async throws -> [UnitOutcome]
    {
        let width = max(1, settings.concurrency)
        return try await withThrowingTaskGroup(of: UnitOutcome.self) { group in
            var results: [UnitOutcome] = []
            var pending = pending
            var next = 0
            var running = 0
            func start() {
                let unit = pending[next]
                let state = saved[unit.ordinal]
                group.addTask(executorPreference: loop(for: unit)) {
                    try await self.runUnit(unit, saved: state, store: store)
                }
                next += 1
                running += 1
            }
            while next < pending.count, running < width { start() }
            while let outcome = try await group.next() {
                running -= 1
                results.append(outcome)
                // A bisected window's halves run next (before units not started).
                if case .split(let halves) = outcome { pending.insert(contentsOf: halves, at: next) }
                while next < pending.count, running < width { start() }
            }
            return results
        }
    }

    /// The engine loop a unit's task and its pages' tasks run on. A page's response resumes its task right where
    /// libcurl delivered it, with no hand-off to the global pool (a thread switch and a futex wake per page
    /// otherwise, a large share of a fetch's CPU). What such a
    /// task does between two awaits is what the loop's own transfers wait for, and it is all short: reading a page
    /// through the JSON extractor (a few µs per KB, as long as libcurl's work for that page), the plan's
    /// bookkeeping, and handing lines to the writer, whose own thread does every write and `fsync`. (The one disk
    /// read is a conditional cache's stored page on a `304`, one small file.)
    func loop(for unit: WorkUnit) -> EngineExecutor {
        let loops = clients.client(for: unit).executors
        // A window's ordinal has its window number in high bits: spread the windows by that number and half.
        if case .window(let planned, let index, let path) = UnitID(ordinal: unit.ordinal) {
            return loops[(planned + index + path.heapIndex) % loops.count]
        }
        return loops[unit.ordinal % loops.count]
    }

    private func outputPath(for unit: WorkUnit, run: String?, staging: Bool) -> String {
        let path: String
        switch options.output {
        case .file(let file): path = file
        case .directory(let directory) where run != nil && unit.incremental != nil:
            // Each incremental run has a file of its own: nothing to stage.
            return directory + "/" + unit.source + "/" + (run ?? "") + ".jsonl"
        case .directory(let directory): path = directory + "/" + unit.source + ".jsonl"
        }
        return staging && Self.isStageable(path) ? path + Self.stagedSuffix : path
    }

    /// A new run over a finished one writes each regular output here first, beside it.
    static let stagedSuffix = ".trawl-next"

    /// Whether `path` is a regular file or nothing yet (a pipe or device is written in place).
    static func isStageable(_ path: String) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return true }
        return attributes[.type] as? FileAttributeType == .typeRegular
    }

    /// `--restart` writes in place: a new snapshot staged by the run it discards (`FILE.trawl-next` of a refresh
    /// interrupted after an earlier run finished) would never be completed or removed by any later run.
    static func removeStaged(besides outputs: [String]) {
        for output in Set(outputs) where !output.hasSuffix(stagedSuffix) {
            let staged = output + stagedSuffix
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: staged),
                attributes[.type] as? FileAttributeType == .typeRegular
            else { continue }
            try? FileManager.default.removeItem(atPath: staged)
        }
    }

    /// Renames each complete staged output over the one it replaces (rename(2): a reader sees the old snapshot or
    /// the new one, never a part).
    private func publishStaged(_ outputs: inout [JobReport.OutputRecord]) throws {
        for index in outputs.indices where outputs[index].path.hasSuffix(Self.stagedSuffix) {
            let staged = outputs[index].path
            let final = String(staged.dropLast(Self.stagedSuffix.count))
            // The new snapshot keeps the mode the old one had (a user's 0600 output stays 0600).
            var old = stat()
            if stat(final, &old) == 0 { _ = chmod(staged, old.st_mode & 0o7777) }
            guard rename(staged, final) == 0 else {
                throw JobError.state(
                    "the new output \(staged) is complete but could not replace \(final) "
                        + "(\(String(cString: strerror(errno))))",
                    hint: "move it there yourself; the state says the run finished")
            }
            try DurableFiles.syncDirectory(containing: final)
            outputs[index].path = final
        }
    }

    /// The checkpoint in `directory`, when one is there and readable and intact.
    static func checkpoint(in directory: String) -> Checkpoint? {
        guard let bytes = try? DurableFiles.read(directory + "/checkpoint.json"),
            let (checkpoint, intact) = try? Checkpoint.read(bytes), intact
        else { return nil }
        return checkpoint
    }

    private func defaultStateDirectory() -> String {
        let anchor: String
        switch options.output {
        case .file(let path): anchor = JobStore.stateAnchor(output: path)
        case .directory(let directory): anchor = directory + "/job"
        }
        return anchor + ".trawl-state"
    }

    // MARK: - One unit

    /// Walks one unit from its saved state; returns how it ended.
    func runUnit(_ unit: WorkUnit, saved: Checkpoint.UnitState?, store: JobStore) async throws -> UnitOutcome {
        var state = saved ?? Checkpoint.UnitState(id: unit.id)
        let driver = UnitDriver(runner: self, unit: unit, store: store)
        let pagesBefore = state.pages
        let itemsBefore = state.items
        let walked = state.status != .done
        // The unit's keys are read (restored and walked) unless it fails at once on a stuck page.
        let keysRead = walked && state.stuck == nil
        // With a primary key, one set of key digests counts the distinct items and tells drift. An incremental
        // source only counts: its window matches items by key across runs (a changed item is written again).
        var keys = unit.primaryKey.map {
            DriftCheck(path: DriftCheck.linePath($0, withMeta: options.withMeta), filters: unit.incremental == nil)
        }
        if keysRead, pagesBefore > 0 {
            // Pages kept from an earlier run: their keys come back from the unit's segment, which holds what the
            // checkpoint counts.
            try keys?.restore(segment: store.segmentPath(ordinal: unit.ordinal))
        }
        if walked, var stuck = state.stuck {
            // The kept page's pagination data cannot go on: the same failure, without asking the server again.
            state.status = .failed
            state.failure = stuck.error
            stuck.keptPages = state.pages
            stuck.keptItems = state.items
            metrics.failed(stuck)
        } else if walked {
            state.status = .running
            state.failure = nil
            do {
                try await driver.walk(&state, keys: &keys)
                if let split = unit.window?.split, state.flag(.capped) != nil, state.pages >= split.maxPages {
                    let halves = try bisect(unit, split, pages: state.pages)
                    metrics.windowDiscarded(
                        source: unit.source, host: Origin.hostKey(of: unit.request.url),
                        pages: state.pages - pagesBefore, items: state.items - itemsBefore)
                    try await store.splitUnit(ordinal: unit.ordinal, halves: halves.map {
                        JobStore.UnitSlot(ordinal: $0.ordinal, id: $0.id, output: "")
                    })
                    return .split(halves)
                }
                state.status = .done
                state.next = nil
                if let expected = state.expectedItems, state.flag(.capped) == nil, state.flag(.drift) == nil,
                    let message = Self.shortOfTotal(
                        expected: expected, from: state.expectedFrom, written: state.items, pages: state.pages,
                        distinct: unit.primaryKey.map { ($0, keys?.distinct) })
                {
                    state.setFlag(CompletenessFlag(
                        source: unit.source, unit: unit.id, kind: .shortOfTotal, message: message))
                }
            } catch let failure as PaginationError {
                var record = driver.record(failure)
                state.status = .failed
                state.failure = record.error
                record.keptPages = state.pages
                record.keptItems = state.items
                metrics.failed(record)
            }
        }
        // After a re-read for drift the segment holds keys twice: the store compacts it to the newest line of each
        // key (`SegmentCompaction`) before the unit can be merged.
        var newest: JSONKeyPath?
        if keysRead, (state.rereadPages ?? 0) > 0, let keys, keys.filters, !keys.overCap {
            newest = keys.path
            state.items = keys.itemsAfterCompaction
            metrics.supersededDropped(
                source: unit.source, host: Origin.hostKey(of: unit.request.url),
                dropped: keys.keptTotal - keys.itemsAfterCompaction, writtenInThisRun: keys.droppedInThisRun)
        }
        // A planned walk counted its pages when it planned them; any other unit's count is known now.
        if !walked || state.first == nil { metrics.planned(pages: state.pages - pagesBefore) }
        try await store.finishUnit(ordinal: unit.ordinal, state: state, newestBy: newest)
        metrics.unitFinished(failed: state.status == .failed)
        return state.status == .failed ? .failed(reason: state.failure ?? "") : .done
    }
}

/// How a unit's walk ended (a walk that throws, cancelled or stopped by a store error, ends the job instead).
enum UnitOutcome: Sendable {
    /// Every page is written, in this run or an earlier one.
    case done
    /// A page failed for good; `reason` is its failure as the state records it (redacted). The pages before it
    /// are kept.
    case failed(reason: String)
    /// A parallel window held more pages than `split.max_pages`: these two halves replace it.
    case split([WorkUnit])

    var isDone: Bool {
        if case .done = self { return true }
        return false
    }

    var isSplit: Bool {
        if case .split = self { return true }
        return false
    }

    var failed: Bool {
        if case .failed = self { return true }
        return false
    }
}

extension JobRunner {
    /// `resuming run R: N pages kept, M to go`: M pages when every unit to go is a planned walk whose page count
    /// its first page gave, else `M units to go (pages unknown)`. `pending`: the saved state of each unit to go.
    static func resumeLine(run: String, kept: Int, unitsDone: Int, pending: [Checkpoint.UnitState?]) -> String {
        var line = "resuming run \(run): \(kept) page\(kept == 1 ? "" : "s") kept"
        if unitsDone > 0 { line += " and \(unitsDone) unit\(unitsDone == 1 ? "" : "s") done" }
        let pagesToGo = pending.reduce(Optional(0)) { sum, state in
            guard let sum, let state else { return nil }
            if state.status == .done { return sum }
            guard let total = state.pageTotal else { return nil }
            return sum + max(0, total - state.pages)
        }
        if let pagesToGo { return line + ", \(pagesToGo) to go" }
        return line + ", \(pending.count) unit\(pending.count == 1 ? "" : "s") to go (pages unknown)"
    }

    /// Why a walk that ended is short of the total its server announced, or `nil` when it is not: the distinct
    /// items are compared when the unit has a primary key and they were all counted (`distinct`: the key and the
    /// count, `nil` when unknown), else the items written, and the message says which.
    static func shortOfTotal(
        expected: Int, from: String?, written: Int, pages: Int, distinct: (key: JSONKeyPath, count: Int?)?
    ) -> String? {
        let counted = distinct?.count ?? written
        guard counted < expected else { return nil }
        let announced = "the server announced \(expected) items" + (from.map { " (\($0))" } ?? "")
        let pageCount = "\(pages) page\(pages == 1 ? "" : "s")"
        switch distinct {
        case .some((let key, .some(let count))):
            return "\(announced); \(written) items were written (\(pageCount)), \(count) distinct by the primary key "
                + "\(key)"
        case .some((let key, .none)):
            return "\(announced); \(written) items were written (\(pageCount)); distinct items by the primary key "
                + "\(key) are not known (more than \(DriftCheck.keyCap) keys), so written items were compared"
        case .none:
            return "\(announced); \(written) items were written (\(pageCount)); with no primary key, written items "
                + "were compared, not distinct ones"
        }
    }

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
            options.shardCount = shard.count
        }
        let redactor = job.redactor(environment: options.environment)
        self.init(
            units: try job.units(environment: options.environment), fingerprint: job.fingerprint,
            settings: job.settings, options: try options.withDependents(of: job),
            // Secrets from the environment become ${NAME} (and come back on resume); secrets written literally in
            // a URL (userinfo, api_key=…, token=…) become REDACTED, restored on resume from the job's own URL.
            redact: { Redaction.text(redactor.redact($0), names: Redaction.defaultQueryNames) },
            unredact: { redactor.unredact($0) })
    }
}
