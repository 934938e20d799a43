import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// A unit's pages handed to the writer but not yet durable: the walk goes on fetching while they are written (so
/// they share `fsync`s), with at most `limit` pages and `byteLimit` bytes outstanding; each is counted once durable.
/// Used by one unit's task.
///
/// The writer commits everything that arrived while it wrote the previous batch, so the number of pages per
/// `fsync` is what the unit may have outstanding: with 8 a single fast source spent most of its time waiting for
/// the disk (about 4 pages per commit, ~900 pages/s here). With 256 a fast walk of 10 KB pages stopped at 256 pages
/// per 20 ms batch (`JobStore.minimumBatchInterval`), 12,800 pages/s, which walk (c) reached; 2,048 pages or 16 MB
/// keep the memory bounded (the byte limit binds first for pages over 8 KB) and let one commit carry what the
/// writer's pause between batches brought. While nobody waits, the writer lets a batch fill for
/// `JobStore.pageBatchInterval`; a unit that must wait for a page (at a limit, or at its end) calls `expedite`.
final class CommitPipeline {
    let driver: UnitDriver
    let limit = 2048
    let byteLimit = 16 << 20
    /// Submitted pages not yet counted, oldest first from `head` (a queue: removing the first of up to `limit`
    /// entries would move all the others, per page).
    private var pending: [(commit: PendingCommit, items: Int, host: String, bytes: Int)] = []
    private var head = 0
    private var pendingBytes = 0
    /// With a primary key: the digests of the items written, to count them, drop repeats and tell drift
    /// (``DriftCheck``).
    var drift: DriftCheck?

    init(driver: UnitDriver) { self.driver = driver }

    func submit(_ page: PageLines, state: Checkpoint.UnitState, children: [ChildBatch] = []) async throws {
        let ordinal = driver.unit.ordinal
        let lines = driver.runner.childPlan?.discoveryOnly.contains(ordinal) == true ? [] : page.lines
        let commit = driver.store.submitPage(ordinal: ordinal, lines: lines, state: state, children: children)
        pending.append((commit, page.writtenItems, page.host, page.lines.count))
        pendingBytes += page.lines.count
        // Pages already durable are counted now, without waiting: the progress shows them at once.
        while head < pending.count, let result = pending[head].commit.result { try count(result) }
        while pending.count - head > limit || (pendingBytes > byteLimit && pending.count - head > 1) {
            try await drainOne()
        }
    }

    func drain() async throws {
        while head < pending.count { try await drainOne() }
    }

    private func drainOne() async throws {
        let commit = pending[head].commit
        if let result = commit.result {
            try count(result)
            return
        }
        driver.store.expedite()
        try await commit.wait()
        try count(.success(()))
    }

    /// Takes the oldest page off the queue; counts it when it was written.
    private func count(_ result: Result<Void, any Error>) throws {
        let first = pending[head]
        head += 1
        if head == pending.count {
            pending.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 256, head * 2 >= pending.count {
            pending.removeFirst(head)
            head = 0
        }
        pendingBytes -= first.bytes
        try result.get()
        driver.runner.metrics.pageCommitted(source: driver.unit.source, host: first.host, items: first.items)
    }
}

/// The page walk of one unit: first page, then a serial chain or a planned set of pages.
struct UnitDriver: Sendable {
    let runner: JobRunner
    let unit: WorkUnit
    let store: JobStore

    var linesReader: PageLinesReader {
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
        var reader = PageLinesReader(
            client: runner.clients.client(for: unit), items: unit.items, capture: captures, maxPageBytes: runner.options.maxPageBytes,
            metaPrefix: meta)
        reader.side = unit.side
        reader.exchange.stub = runner.options.firstPages
        reader.window = unit.window
        reader.parentFields = unit.parentFields
        reader.itemMember = unit.itemMember
        (reader.exchange.cache, reader.skipNotModified) = (runner.cache, runner.settings.skipNotModified)
        return reader.authorized(by: runner.authorizers.authorizer(for: unit))
    }

    /// Read from every page: GitHub's search answers say `"incomplete_results": true` when they timed out.
    static let incompleteResults = JSONKeyPath("incomplete_results")

    var captures: [JSONKeyPath] {
        var paths = unit.pagination.capturePaths
        for path in unit.side + [Self.incompleteResults] where !paths.contains(path) { paths.append(path) }
        return paths
    }

    /// Walks the unit's remaining pages; every page is durable when it returns (or throws). `keys`: with a primary
    /// key, the digests of the items the unit wrote (restored on resume), updated as it writes more.
    func walk(_ state: inout Checkpoint.UnitState, keys: inout DriftCheck?) async throws {
        let commits = CommitPipeline(driver: self)
        commits.drift = keys
        defer {
            keys = commits.drift
            if let drift = commits.drift { runner.metrics.duplicatesDropped(source: unit.source, drift.duplicatesDropped) }
        }
        do {
            try await walkPages(&state, commits: commits)
        } catch {
            try await commits.drain()
            throw error
        }
        try await commits.drain()
    }

    /// What a resume does to a stored URL or cursor: the job's secrets (its literal ones, its environment's) put back.
    private var restore: (String) -> String {
        let base = OriginGuard.movingUserInfoToHeader(unit.request).url
        let unredact = runner.unredact
        return { Redactor.restoringLiterals(unredact($0), from: base) }
    }

    /// Drives the unit's ``PagePlan``: from its first page, or resumed from the checkpoint (a planned walk from its
    /// stored first page, a serial one at its stored next page). Serial pages are fetched in this task; planned
    /// ones in tasks of their own, up to `pagesInFlightPerUnit`, committed in order.
    private func walkPages(_ state: inout Checkpoint.UnitState, commits: CommitPipeline) async throws {
        let strategy = unit.pagination
        let settings = runner.settings
        let limits = PagePlan.Limits(
            concurrency: runner.pagesInFlightPerUnit, maxPages: unit.maxPages, maxItems: unit.maxItems,
            stopStatuses: settings.stopStatuses)
        let origins = OriginGuard(trusted: settings.trustedOrigins, sensitiveHeaders: settings.sensitiveHeaders)
        // Userinfo in the URL becomes the Authorization header of every page of its origin (and of no other).
        var base = OriginGuard.movingUserInfoToHeader(unit.request)
        // A redirect to another origin strips these too, on every page (the engine follows redirects), unless the
        // origin is trusted.
        base.sensitiveHeaders.formUnion(settings.sensitiveHeaders)
        base.trustedOrigins = origins.trusted
        let restore = self.restore
        var plan: PagePlan?
        if let first = state.first {
            let response = try stored { try first.pageResponse(base: base, unredact: restore) }
            let planned = PagePlan(
                strategy: strategy, resumingPlanned: response, pagesDone: state.pages, items: state.items,
                limits: limits, origins: origins)
            flagCut(planned.cut, firstItems: response.itemCount, state: &state)
            runner.metrics.planned(pages: (planned.pageTotal ?? 1) - state.pages)
            plan = planned
        } else if state.pages > 0 {
            // A serial walk without a next page had reached its end: only its drift check is left (the run was
            // killed during the re-read, or before the check).
            if let stored = state.next {
                var next = try self.stored { try stored.pageRequest(base: base, unredact: restore) }
                // A walk in the body keeps its position, not its body: the position goes back into the body.
                next.request = strategy.request(next.request, at: next.position)
                plan = PagePlan(
                    strategy: strategy, resumingSerial: next, pagesDone: state.pages, items: state.items,
                    expectedItems: state.expectedItems, limits: limits, origins: origins, base: base)
            }
        } else {
            plan = PagePlan(strategy: strategy, request: base, limits: limits, origins: origins)
        }
        // A run killed during the re-read left pages of it in the segment: the re-read is done again.
        let rereading = state.rereadPages != nil
        if var plan { try await drive(&plan, state: &state, commits: commits, reread: false) }
        // A resumed walk checks too: its keys written before came back from its segment (`JobRunner.runUnit`).
        guard let drift = commits.drift, drift.filters, !drift.overCap else {
            if commits.drift?.filters == true { flagDriftUnchecked(state: &state) }
            return
        }
        let short = state.expectedItems.map { drift.distinctInPass < $0 && state.flag(.capped) == nil } ?? false
        guard drift.drifted || short || rereading else { return }
        let firstPass = (pages: drift.drifted ? drift.pagesText() : nil, keys: drift.repeatedKeys)
        guard strategy.canReread else {
            flagDrift(
                "a cursor or next-URL walk cannot be read again: "
                    + driftText(firstPass, short: short, state: state, distinct: drift.distinctInPass),
                state: &state)
            return
        }
        // Drift: the whole range once more from its first page, writing every item it reads (the newest answer;
        // the unit's end compacts the segment to the last line of each key, `SegmentCompaction`).
        commits.drift?.startPass()
        var again = PagePlan(strategy: strategy, request: base, limits: limits, origins: origins)
        try await drive(&again, state: &state, commits: commits, reread: true)
        guard let after = commits.drift, !after.overCap else { return flagDriftUnchecked(state: &state) }
        let stillShort = again.expectedItems.map { after.distinctInPass < $0 } ?? false
        // Once compacted, the unit holds each key once.
        state.items = after.itemsAfterCompaction
        if !after.drifted, !stillShort {
            // Settled: the count to check is the re-read's.
            state.expectedItems = again.expectedItems
        } else {
            flagDrift(
                "the range did not settle on a re-read: "
                    + driftText((after.drifted ? after.pagesText() : nil, after.repeatedKeys), short: stillShort,
                        state: state, announced: again.expectedItems, distinct: after.distinctInPass),
                state: &state)
        }
    }

    /// Fetches and commits `plan`'s pages until it is done; a re-read (`reread`) leaves the unit's position alone.
    private func drive(
        _ plan: inout PagePlan, state: inout Checkpoint.UnitState, commits: CommitPipeline, reread: Bool
    ) async throws {
        let reader = linesReader
        var openEnded = false
        let loop = runner.loop(for: unit)  // the unit task's own (`JobRunner.loop(for:)`): `Task {}` would not inherit it
        var inFlight: [(page: PageRequest, task: Task<PageLines, any Error>)] = []
        defer {
            for page in inFlight { page.task.cancel() }
            if openEnded { runner.metrics.openEnded(-1) }
        }
        walk: while true {
            switch plan.next() {
            case .request(let page, let index):
                if plan.isPlanned {
                    inFlight.append((page, Task(executorPreference: loop) {
                        try await self.fetch(page, index: index, reader: reader)
                    }))
                    continue
                }
                if index > 0, !openEnded {
                    openEnded = true
                    runner.metrics.openEnded(1)
                }
                do {
                    let fetched = try await fetch(page, index: index, reader: reader)
                    if reread {
                        try await rereadPage(fetched, page, index: index, plan: &plan, state: &state, commits: commits)
                    } else {
                        try await completed(fetched, page, index: index, plan: &plan, state: &state, commits: commits)
                    }
                } catch let error as PaginationError {
                    plan.failed(error)
                }
            case .wait:
                let (page, task) = inFlight.removeFirst()
                do {
                    let fetched = try await withTaskCancellationHandler {
                        try await task.value
                    } onCancel: {
                        task.cancel()
                    }
                    if reread {
                        try await rereadPage(
                            fetched, page, index: plan.pagesCompleted, plan: &plan, state: &state, commits: commits)
                    } else {
                        try await completed(
                            fetched, page, index: state.pages, plan: &plan, state: &state, commits: commits)
                    }
                } catch let error as PaginationError {
                    plan.failed(error)
                }
            case .done:
                if !reread, case .serial(let reason) = plan.cut { flagSerialCut(reason, state: &state) }
                return
            case .fail(let error):
                throw error
            }
        }
    }

    /// A page of the re-read after drift: every item is written (a key written before too: the newest answer,
    /// which compaction keeps), under the unit's current state (its segment holds one page more: `rereadPages`).
    private func rereadPage(
        _ fetched: PageLines, _ page: PageRequest, index: Int, plan: inout PagePlan,
        state: inout Checkpoint.UnitState, commits: CommitPipeline
    ) async throws {
        let response = PageResponse(
            request: page.request, position: page.position, itemCount: fetched.itemCount,
            captured: fetched.captured, head: fetched.head)
        plan.completed(response)
        if !plan.failureKeepsCompletedPage, let failure = plan.failure { throw failure }
        var fetched = fetched
        if let (lines, kept) = commits.drift?.filter(fetched.lines, index: index, newest: true) {
            (fetched.lines, fetched.keptAfterDrift) = (lines, kept)
        }
        runner.metrics.reread(source: unit.source)
        state.rereadPages = (state.rereadPages ?? 0) + 1
        try await commits.submit(fetched, state: state)
    }

    private func driftText(
        _ seen: (pages: String?, keys: [String]), short: Bool, state: Checkpoint.UnitState, announced: Int? = nil,
        distinct: Int
    ) -> String {
        var parts: [String] = []
        if let pages = seen.pages {
            parts.append("keys read twice on \(pages) (\(seen.keys.joined(separator: ", ")))")
        }
        if short, let expected = announced ?? state.expectedItems {
            parts.append("\(distinct) distinct keys of \(expected) announced")
        }
        return parts.joined(separator: "; ")
    }

    private func flagDrift(_ message: String, state: inout Checkpoint.UnitState) {
        state.setFlag(CompletenessFlag(source: unit.source, unit: unit.id, kind: .drift, message: message))
    }

    private func flagDriftUnchecked(state: inout Checkpoint.UnitState) {
        state.setFlag(CompletenessFlag(
            source: unit.source, unit: unit.id, kind: .driftUnchecked,
            message: "more than \(DriftCheck.keyCap) keys: duplicates past them were not looked for"))
    }

    /// Counts a page the plan was waiting for and hands it to the writer with the state it leads to. A page whose
    /// pagination data cannot go on (its next page already fetched, a cursor that is an object, `has_more` without
    /// a cursor) is whole: it is written, and the state records where the walk stopped (`stuck`), so that running
    /// the job again fails there again instead of taking the unit for done.
    private func completed(
        _ fetched: PageLines, _ page: PageRequest, index: Int, plan: inout PagePlan,
        state: inout Checkpoint.UnitState, commits: CommitPipeline
    ) async throws {
        var response = PageResponse(
            request: page.request, position: page.position, itemCount: fetched.itemCount,
            captured: fetched.captured, head: fetched.head)
        response.pastMark = unit.incremental?.order == .desc && fetched.incremental?.reachedOlder == true
        let isFirst = state.pages == 0
        plan.completed(response)
        // A refused next page or unusable pagination data fails the walk after this page is kept; any other failure
        // concerns this page.
        if let failure = plan.failure, !plan.failureKeepsCompletedPage { throw failure }
        if let failure = plan.failure, !plan.failureConcernsNextPage { state.stuck = record(failure) }
        noteIncompleteResults(fetched, index: index, state: &state)
        noteIncremental(fetched, state: &state)
        state.pages = plan.pagesCompleted
        state.items = plan.itemsCompleted
        if isFirst {
            state.expectedItems = plan.expectedItems
            state.expectedFrom = plan.expectedItemsSource
            if plan.isPlanned {
                state.first = StoredPage(response, redact: runner.redact, restore: restore)
                state.pageTotal = plan.pageTotal
                runner.metrics.planned(pages: plan.pageTotal ?? 1)
                flagCut(plan.cut, firstItems: fetched.itemCount, state: &state)
            }
        }
        if !plan.isPlanned {
            state.next = plan.nextSerial.map { StoredPageRequest($0, redact: runner.redact, restore: restore) }
        }
        let children = runner.childPlan?.batches(
            for: unit, lines: fetched.lines, firstIndex: state.items - fetched.itemCount) ?? []
        var fetched = fetched
        if let (lines, kept) = commits.drift?.filter(fetched.lines, index: index) {
            (fetched.lines, fetched.keptAfterDrift) = (lines, kept)
        }
        try await commits.submit(fetched, state: state, children: children)
    }

    /// Flags a planned walk cut by `max_pages` or `max_items`.
    private func flagCut(_ cut: PagePlan.Cut?, firstItems: Int, state: inout Checkpoint.UnitState) {
        guard case .planned(let reason, let allowed, let total) = cut else { return }
        let announced = state.expectedItems
        let planned = min(announced ?? Int.max, firstItems * allowed)
        let of = announced.map { " of \($0) items" } ?? " items"
        state.setFlag(CompletenessFlag(
            source: unit.source, unit: unit.id, kind: .capped,
            message: "capped at \(planned)\(of) (\(reason): \(allowed) of \(total) pages)"))
    }

    /// Flags a serial walk stopped by `max_pages` or `max_items` before its next page.
    private func flagSerialCut(_ reason: String, state: inout Checkpoint.UnitState) {
        let message =
            if let expected = state.expectedItems {
                "capped at \(state.items) of \(expected) items (\(reason): \(state.pages) pages)"
            } else {
                "capped at \(state.items) items (\(reason): \(state.pages) pages; the server had more)"
            }
        state.setFlag(CompletenessFlag(source: unit.source, unit: unit.id, kind: .capped, message: message))
    }

    /// Flags the unit when `page` says `"incomplete_results": true`, listing every such page.
    private func noteIncompleteResults(_ page: PageLines, index: Int, state: inout Checkpoint.UnitState) {
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

    private func stored<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw JobError.state(
                "the checkpoint of unit '\(unit.id)' is unreadable (\(StateFileProblem.describe(error)))",
                hint: "pass --restart to start the job over")
        }
    }

    /// One page with retries; host pauses and rate limits are applied by the scheduler. Throws the last
    /// attempt's failure, with the number of attempts made.
    func fetch(_ pageRequest: PageRequest, index: Int, reader: PageLinesReader) async throws -> PageLines {
        let host = Origin.hostKey(of: pageRequest.request.url)
        let policy = runner.policy
        var attempts = Attempts(policy: policy)
        while true {
            try await runner.scheduler.acquire(host)
            let result: Result<PageLines, PaginationError>
            do throws(PaginationError) {
                result = .success(try await reader.read(pageRequest, index: index))
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
            if let head { runner.metrics.responded(source: unit.source, host: host, status: head.status) }
            var wait = head.flatMap { RateLimitSignal.wait(status: $0.status, headers: $0.headers) }
            // A GraphQL answer says it in its body (an answer without data fails to read, its fields captured).
            let graphQL = unit.pagination.graphQLConnection != nil
            let captured: [JSONKeyPath: JSONValue]
            switch result {
            case .success(let page): captured = graphQL ? page.captured : [:]
            case .failure(let failure): captured = graphQL ? failure.captured : [:]
            }
            if wait == nil, graphQL { wait = RateLimitSignal.wait(graphQL: captured) }
            // Refused for its cost (Shopify's THROTTLED): asked again once the host's pause (from the answer's cost)
            // and the backoff have passed. Out of attempts, the answer's errors fail the page.
            let throttled = graphQL && GraphQLAnswer.isThrottled(captured)
            if let wait {
                runner.metrics.paused(source: unit.source, await runner.scheduler.pause(host, for: wait))
            }
            await runner.scheduler.release(host, status: head?.status)
            switch result {
            case .success(var page):
                if throttled, case .retry(let delay) = attempts.failed(retryable: true) {
                    runner.metrics.attemptFailed(source: unit.source, host: host, retried: true)
                    try await Task.sleep(for: delay)
                    continue
                }
                page.host = host
                if page.notModified { runner.metrics.notModified(source: unit.source, host: host) }
                runner.metrics.pageFetched(
                    source: unit.source, host: host, bytes: page.bodyBytes, items: page.itemCount,
                    latency: page.latency)
                return page
            case .failure(var failure):
                try Task.checkCancellation()
                if let errors = GraphQLAnswer.errors(in: captured) {
                    // An answer with errors and no data: its errors say why, not the items path it lacks.
                    failure.underlying = TrawlError(
                        code: .invalidBody, message: errors, method: pageRequest.request.method.rawValue,
                        url: failure.url)
                }
                let made = attempts.made
                let next = attempts.failed(retryable: throttled || policy.isRetryable(failure))
                if next == .fail, index > 0, let status = failure.status, runner.settings.stopStatuses.contains(status) {
                    // The end the user named (`--stop-on-status 404` past DRF's last page): no error in progress
                    // or summary. (A planned page with that status still fails its walk, and is listed as failed.)
                    runner.metrics.requestEnded(source: unit.source, host: host)
                    failure.attempts = made
                    throw failure
                }
                runner.metrics.attemptFailed(source: unit.source, host: host, retried: next != .fail)
                guard case .retry(let delay) = next else {
                    failure.attempts = made
                    throw failure
                }
                try await Task.sleep(for: delay)
            }
        }
    }

    /// The report's record of a page that failed for good (the pages of a loop were not fetched: 0 attempts).
    func record(_ failure: PaginationError) -> PageFailureRecord {
        PageFailureRecord(
            source: unit.source, unit: unit.id, page: runner.redact(failure.position.description),
            pageIndex: failure.index, url: runner.redact(failure.url),
            attempts: failure.kind == .pagination ? 0 : failure.attempts, status: failure.status,
            error: hidingLiteralCredentials(runner.redact(String(describing: failure.underlying))))
    }

    /// `text` (a failure, which may quote the server's body) with the unit's literal credentials shown as
    /// `REDACTED`: the values of its sensitive headers (and the token after `Bearer`), of its credential query
    /// parameters and its userinfo. A server that echoes the token in an error body does not put it on stderr or
    /// in the report. (Secrets from `${NAME}` are `${NAME}` already.)
    func hidingLiteralCredentials(_ text: String) -> String {
        let request = unit.request
        let extra = runner.settings.sensitiveHeaders.union(request.sensitiveHeaders.map { $0.lowercased() })
        var secrets: [String] = []
        for (name, value) in request.headers where OriginGuard.isSensitive(name, extra: extra) {
            secrets.append(value)
            if let space = value.lastIndex(of: " ") { secrets.append(String(value[value.index(after: space)...])) }
        }
        let names = Redaction.queryNames(for: request)
        for item in URLComponents(string: request.url)?.queryItems ?? [] where names.contains(item.name.lowercased()) {
            if let value = item.value { secrets.append(value) }
        }
        if let password = URLComponents(string: request.url)?.password { secrets.append(password) }
        var hidden = text
        for secret in Set(secrets).sorted(by: { $0.utf8.count > $1.utf8.count })
        where secret.utf8.count >= 4 && !secret.contains("${") {
            hidden = hidden.replacingOccurrences(of: secret, with: Redaction.placeholder)
        }
        return hidden
    }
}
