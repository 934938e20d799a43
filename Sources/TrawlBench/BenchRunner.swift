import Foundation
import Synchronization
import Trawl
import TrawlEngine
import TrawlJSON
import TrawlJobs

/// Runs the load and gathers what `trawl bench` prints.
///
/// Three shapes of load:
/// - closed model on URLs (the fast path): `concurrency` workers on the engine's loop threads, each sending
///   its next request as soon as the last one finished;
/// - open model on URLs (`rate`): request `i` is due at `t0 + i / rate` whatever happened before; at most
///   `concurrency` are in flight, a request that finds every slot busy waits, and its latency still counts
///   from its intended send time (no coordinated omission);
/// - paginated flows (`Target.pages`): `concurrency` workers each walk the pages again and again, counting
///   the items of every page as its body streams in.
package struct BenchRunner: Sendable {
    package enum Limit: Sendable {
        case requests(Int)
        case duration(Duration)
    }

    package enum Target: Sendable {
        case urls([Request])
        /// Walks of the pages of these requests (round-robin per flow), items at `items`.
        case pages([Request], items: JSONKeyPath, style: PaginationStyle)

        package var isPages: Bool { if case .pages = self { true } else { false } }
    }

    package let client: Client
    package let urls: [String]
    package let target: Target
    package let concurrency: Int
    package let limit: Limit
    /// Requests sent during the warm-up are not measured; the limit starts counting after it.
    package var warmup: Duration = .zero
    /// Requests/s of the open model; `nil` for the closed model.
    package var rate: Double?
    /// `--rate START:END --ramp SECONDS`: the open model's rate goes from `rate` to the ramp's end rate.
    package var ramp: Ramp?
    /// Per-interval rows, phase timings and live counters; its origin is the end of the warm-up.
    package let recorder: BenchRecorder
    /// `--rate-store`: the schedule `rate` is shared through with other processes (see BenchRunner+Shared).
    package var shared: SharedBenchSchedule?
    /// `--timeout`: the per-request limit the client was given, in seconds (for the report).
    package var timeout: Double?
    /// `--expect-status`: the statuses of a successful request; any other is a failed request.
    package var expectedStatus = BenchStatusSet.success

    /// With `-d`: how long requests still in flight at the end may take before they are cancelled (cut off).
    package static let cutOffGrace: Duration = .milliseconds(500)

    package init(
        client: Client, urls: [String], target: Target, concurrency: Int, limit: Limit, recorder: BenchRecorder
    ) {
        self.client = client
        self.urls = urls
        self.target = target
        self.concurrency = concurrency
        self.limit = limit
        self.recorder = recorder
    }

    package final class Ticket: Sendable {
        package let next = Atomic<Int>(0)
    }

    package struct WorkerResult: Sendable {
        /// The statuses that count as success (not merged: the same for every worker).
        var expected = BenchStatusSet.success
        package var latencies = BenchHistogram.benchLatencies()
        /// Open model: service times, from each request's actual send (uncorrected).
        package var serviceLatencies = BenchHistogram.benchLatencies()
        package var bytes = 0
        package var errors: [String: Int] = [:]
        package var statuses: [Int: Int] = [:]
        package var items = 0
        package var flows = 0
        package var lateStarts = 0
        package var maxLateness: Duration = .zero
        package var warmupRequests = 0
        /// In flight at the end of `-d` plus the grace: cancelled, neither a response nor an error.
        package var cutOff = 0
        /// Set by the task that marks the end of the warm-up.
        package var cpuAtMeasurementStart: Double?

        mutating func merge(_ part: WorkerResult) {
            latencies.add(part.latencies)
            serviceLatencies.add(part.serviceLatencies)
            bytes += part.bytes
            errors.merge(part.errors, uniquingKeysWith: +)
            statuses.merge(part.statuses, uniquingKeysWith: +)
            items += part.items
            flows += part.flows
            lateStarts += part.lateStarts
            maxLateness = max(maxLateness, part.maxLateness)
            warmupRequests += part.warmupRequests
            cutOff += part.cutOff
            if let cpu = part.cpuAtMeasurementStart { cpuAtMeasurementStart = cpu }
        }

        /// A paginated flow's page whose status is not expected: a failed request, by its status class.
        mutating func failedPage(worker: Int, _ head: ResponseHead, bytes: Int, _ recorder: BenchRecorder) {
            self.bytes += bytes
            statuses[head.status, default: 0] += 1
            errors[BenchStatusSet.errorKind(head.status), default: 0] += 1
            recorder.recordPageError(worker: worker, status: head.status, bytes: bytes)
        }

        mutating func count(_ error: any Error) {
            errors[BenchRunner.errorKind(error), default: 0] += 1
        }

        /// One measured request's outcome, as every URL worker records it (closed model, open model, shared
        /// schedule): its latency from `start` (when it began, or when it was due), bytes and status, or its error.
        /// False when the run was stopped while it was in flight: after Ctrl-C the cancelled requests are not
        /// errors of the server, and the worker ends.
        mutating func record(
            _ outcome: Result<Response, any Error>, worker: Int, from start: ContinuousClock.Instant,
            to now: ContinuousClock.Instant, late: Bool = false, sent: ContinuousClock.Instant? = nil,
            recorder: BenchRecorder
        ) -> Bool {
            switch outcome {
            case .success(let response) where !expected.contains(response.status):
                bytes += response.body.count
                statuses[response.status, default: 0] += 1
                errors[BenchStatusSet.errorKind(response.status), default: 0] += 1
                recorder.endedWithError(
                    worker: worker, at: now, late: late, status: response.status, bytes: response.body.count)
            case .success(let response):
                let latency = start.duration(to: now)
                latencies.recordLatency(latency)
                if let sent { serviceLatencies.recordLatency(sent.duration(to: now)) }
                bytes += response.body.count
                statuses[response.status, default: 0] += 1
                recorder.ended(
                    worker: worker, at: now, latency: latency, bytes: response.body.count, status: response.status,
                    timings: response.timings, late: late)
            case .failure(let error):
                if recorder.isCutOff {
                    recorder.abandoned(worker: worker)
                    cutOff += 1
                    return false
                }
                if recorder.isStopped {
                    recorder.abandoned(worker: worker)
                    return false
                }
                recorder.endedWithError(worker: worker, at: now, late: late)
                count(error)
            }
            return true
        }
    }

    /// The response `send` returns, or its error.
    static func outcome(_ send: () async throws -> Response) async -> Result<Response, any Error> {
        do {
            return .success(try await send())
        } catch {
            return .failure(error)
        }
    }

    static func errorKind(_ error: any Error) -> String {
        switch error {
        case let error as TrawlError: error.code.description
        case let error as PaginationError:
            error.kind == .pagination ? "pagination_loop" : error.trawlError.map { $0.code.description } ?? "other"
        case is JSONError: TrawlError.Code.invalidBody.description
        default: "other"
        }
    }

    package func run() async -> BenchReport {
        let clock = ContinuousClock()
        let measureFrom = recorder.origin
        let start = measureFrom - warmup
        let cpuBefore = BenchReport.cpuTime()
        let sharedBefore = shared?.statistics
        let (results, unsent) = await withDeadline(clock: clock, at: measureFrom) {
            await load(clock: clock, start: start, measureFrom: measureFrom)
        }
        let end = clock.now
        let recorded = recorder.finish(at: end)
        let cpu = BenchReport.cpuTime() - (results.cpuAtMeasurementStart ?? cpuBefore)
        var report = BenchReport(
            urls: urls, concurrency: concurrency, mode: rate == nil || target.isPages ? .closed : .open,
            elapsed: end < measureFrom ? .zero : measureFrom.duration(to: end), latencies: results.latencies,
            bytes: results.bytes, errors: results.errors, statuses: results.statuses, cpuSeconds: cpu)
        if case .pages = target {
            report.items = results.items
            report.flows = results.flows
        }
        report.rate = rate
        report.ramp = ramp
        report.loops = client.executors.count
        report.lateStarts = results.lateStarts
        report.maxLateness = results.maxLateness
        report.unsent = unsent
        report.cutOff = results.cutOff
        report.timeoutSeconds = timeout
        report.expectedStatus = expectedStatus
        report.startedAt = Date().timeIntervalSince1970 - BenchReport.seconds(measureFrom.duration(to: clock.now))
        if report.mode == .open { report.serviceLatencies = results.serviceLatencies }
        report.warmupSeconds = BenchReport.seconds(warmup)
        report.warmupRequests = results.warmupRequests
        report.intervals = recorded.rows
        report.intervalSeconds = Double(recorder.intervalNanoseconds) / 1e9
        report.phases = recorded.phases
        report.interrupted = recorder.isStopped
        if let shared { report.shared = BenchSharedSummary(shared, before: sharedBefore, unsent: &report.unsent) }
        return report
    }

    /// Runs the load of the target and model chosen; also returns the open model's scheduled requests that never
    /// started.
    private func load(clock: ContinuousClock, start: ContinuousClock.Instant, measureFrom: ContinuousClock.Instant)
        async -> (WorkerResult, Int)
    {
        var results: WorkerResult
        var unsent = 0
        switch target {
        case .urls(let requests):
            if let shared {
                results = await sharedOpenModel(
                    requests: requests, shared: shared, clock: clock, measureFrom: measureFrom)
            } else if let rate {
                let schedule = Schedule(start: start, rate: rate, warmup: warmup, limit: limit, ramp: ramp)
                // Open-model workers also run on the loop threads; they sleep until each request is due.
                results = await openModel(requests: requests, schedule: schedule, clock: clock)
                if case .duration = limit {
                    let started = results.latencies.totalCount
                        + UInt64(results.errors.values.reduce(0, +) + results.cutOff)
                    unsent = max(0, schedule.endTicket - schedule.warmupTickets - Int(started))
                }
            } else {
                // The workers run on the engine's loop threads (`executor(forWorker:)`): a finished transfer
                // resumes its worker there, with no thread hand-off (its own work per request is a few counters).
                results = await closedModel(requests: requests, clock: clock, measureFrom: measureFrom)
            }
        case .pages(let requests, let items, let style):
            results = await flows(requests: requests, items: items, style: style, clock: clock, measureFrom: measureFrom)
        }
        return (results, unsent)
    }

    /// With `-d`, `-d` is a hard deadline: at its end plus ``cutOffGrace`` the requests still in flight are
    /// cancelled (the recorder counts them as cut off), so a stalled server cannot stretch the run.
    private func withDeadline(
        clock: ContinuousClock, at measureFrom: ContinuousClock.Instant,
        _ body: @escaping @Sendable () async -> (WorkerResult, Int)
    ) async -> (WorkerResult, Int) {
        guard case .duration(let span) = limit else { return await body() }
        let cutAt = measureFrom + span + Self.cutOffGrace
        let recorder = self.recorder
        return await withTaskGroup(of: (WorkerResult, Int)?.self) { group in
            group.addTask { await body() }
            group.addTask {
                do {
                    try await clock.sleep(until: cutAt, tolerance: .milliseconds(10))
                } catch {
                    return nil
                }
                recorder.cutOff()
                return nil
            }
            var outcome = (WorkerResult(), 0)
            while let next = await group.next() {
                // The load ended (the timer is no longer needed), or the timer fired (the load is cancelled, and
                // its workers return what they recorded).
                group.cancelAll()
                if let next { outcome = next }
            }
            return outcome
        }
    }

    /// Adds a task that records the process CPU time when the warm-up ends (none without a warm-up).
    func markMeasurementStart(
        in group: inout TaskGroup<WorkerResult>, clock: ContinuousClock, at instant: ContinuousClock.Instant
    ) {
        guard warmup > .zero else { return }
        group.addTask {
            try? await clock.sleep(until: instant, tolerance: nil)
            var result = WorkerResult()
            result.cpuAtMeasurementStart = BenchReport.cpuTime()
            return result
        }
    }

    /// Workers are spread over the client's loop threads (`--loops`); each sends through its own loop.
    func executor(forWorker worker: Int) -> EngineExecutor {
        client.executors[worker % client.executors.count]
    }

    // MARK: Closed model on URLs

    private func closedModel(requests: [Request], clock: ContinuousClock, measureFrom: ContinuousClock.Instant)
        async -> WorkerResult
    {
        let ticket = Ticket()
        let ready = ReadyRequests(requests, client: client)
        let deadline: ContinuousClock.Instant? = if case .duration(let span) = limit { measureFrom + span } else { nil }
        let maxRequests: Int = if case .requests(let count) = limit { count } else { Int.max }
        let warming = warmup > .zero
        return await withTaskGroup(of: WorkerResult.self) { group in
            markMeasurementStart(in: &group, clock: clock, at: measureFrom)
            for worker in 0..<concurrency {
                group.addTask(executorPreference: executor(forWorker: worker)) {
                    var result = WorkerResult(expected: expectedStatus)
                    var warmingUp = warming
                    var warmupIndex = worker
                    while true {
                        let index: Int
                        if warmingUp, clock.now < measureFrom {
                            index = warmupIndex
                            warmupIndex += concurrency
                        } else {
                            warmingUp = false
                            index = ticket.next.add(1, ordering: .relaxed).oldValue
                            if index >= maxRequests { break }
                            if let deadline, clock.now >= deadline { break }
                        }
                        if recorder.isStopped { break }
                        let began = clock.now
                        if !warmingUp { recorder.began(worker: worker) }
                        let outcome = await Self.outcome { try await ready.send(index, through: client) }
                        if warmingUp {
                            result.warmupRequests += 1
                            continue
                        }
                        guard result.record(outcome, worker: worker, from: began, to: clock.now, recorder: recorder)
                        else { break }
                    }
                    return result
                }
            }
            var merged = WorkerResult()
            for await part in group { merged.merge(part) }
            return merged
        }
    }

    // MARK: Open model on URLs

    private func openModel(requests: [Request], schedule: Schedule, clock: ContinuousClock) async -> WorkerResult {
        let ticket = Ticket()
        let ready = ReadyRequests(requests, client: client)
        return await withTaskGroup(of: WorkerResult.self) { group in
            markMeasurementStart(in: &group, clock: clock, at: schedule.due(schedule.warmupTickets))
            for worker in 0..<concurrency {
                group.addTask(executorPreference: executor(forWorker: worker)) {
                    var result = WorkerResult(expected: expectedStatus)
                    while true {
                        // Tickets go out in order, so a worker that frees up takes the most overdue request.
                        let index = ticket.next.add(1, ordering: .relaxed).oldValue
                        if index >= schedule.endTicket { break }
                        let due = schedule.due(index)
                        if clock.now < due {
                            try? await clock.sleep(until: due, tolerance: nil)
                        }
                        if recorder.isStopped { break }
                        let began = clock.now
                        // Past the end of -d, only a request that is (about) on time still goes out: the
                        // backlog of late ones is reported as never started.
                        if let deadline = schedule.deadline, began >= deadline,
                            due.duration(to: began) > BenchReport.lateTolerance
                        {
                            break
                        }
                        let measured = index >= schedule.warmupTickets
                        let lateness = due.duration(to: began)
                        let late = lateness > BenchReport.lateTolerance
                        if measured { recorder.began(worker: worker) }
                        let outcome = await Self.outcome { try await ready.send(index, through: client) }
                        guard measured else {
                            result.warmupRequests += 1
                            continue
                        }
                        guard result.record(
                            outcome, worker: worker, from: due, to: clock.now, late: late, sent: began,
                            recorder: recorder)
                        else { break }
                        if late { result.lateStarts += 1 }
                        result.maxLateness = max(result.maxLateness, lateness)
                    }
                    return result
                }
            }
            var merged = WorkerResult()
            for await part in group { merged.merge(part) }
            return merged
        }
    }

    // MARK: Paginated flows

    private func flows(
        requests: [Request], items: JSONKeyPath, style: PaginationStyle, clock: ContinuousClock,
        measureFrom: ContinuousClock.Instant
    ) async -> WorkerResult {
        let ticket = Ticket()
        let deadline: ContinuousClock.Instant? = if case .duration(let span) = limit { measureFrom + span } else { nil }
        let maxRequests: Int = if case .requests(let count) = limit { count } else { Int.max }
        let exchange = PageExchange(client: client, itemsPath: items, capture: style.capturePaths, form: .countOnly)
        return await withTaskGroup(of: WorkerResult.self) { group in
            markMeasurementStart(in: &group, clock: clock, at: measureFrom)
            for worker in 0..<concurrency {
                group.addTask(executorPreference: executor(forWorker: worker)) {
                    var result = WorkerResult(expected: expectedStatus)
                    var flowNumber = worker
                    flows: while !recorder.isStopped {
                        // Each flow is one walk: the plan's loop guard ends a flow whose pages cycle.
                        var plan = PagePlan(strategy: style, request: requests[flowNumber % requests.count])
                        flowNumber += concurrency
                        var flowMeasured = true
                        var measured = true
                        var action = plan.next()
                        walk: while !recorder.isStopped {
                            switch action {
                            case .request(let current, let index):
                                if let shared, await !takeSlot(shared, for: current, until: deadline) { break flows }
                                measured = clock.now >= measureFrom
                                if measured {
                                    let number = ticket.next.add(1, ordering: .relaxed).oldValue
                                    if number >= maxRequests { break flows }
                                    if let deadline, clock.now >= deadline { break flows }
                                } else {
                                    flowMeasured = false
                                }
                                let began = clock.now
                                do throws(PaginationError) {
                                    let page = try await exchange.open(current, index: index)
                                    let response = try await page.readToEnd { _ in }
                                    if !measured {
                                        result.warmupRequests += 1
                                    } else if !expectedStatus.contains(response.head.status) {
                                        result.failedPage(worker: worker, response.head, bytes: page.byteCount, recorder)
                                    } else {
                                        result.latencies.recordLatency(began.duration(to: clock.now))
                                        recorder.recordPage(worker: worker, response.head, bytes: page.byteCount, began: began)
                                        result.bytes += page.byteCount
                                        result.statuses[response.head.status, default: 0] += 1
                                        result.items += response.itemCount
                                    }
                                    if let shared { await shared.answered(current, response.head) }
                                    plan.completed(response)
                                    action = plan.next()
                                    if case .done = action, measured, flowMeasured { result.flows += 1 }
                                } catch {
                                    if recorder.isCutOff {
                                        if measured { result.cutOff += 1 }
                                        break flows
                                    }
                                    if let shared, let head = error.head { await shared.answered(current, head) }
                                    if !measured {
                                        result.warmupRequests += 1
                                    } else if error.kind == .status, let head = error.head,
                                        !expectedStatus.contains(head.status)
                                    {
                                        result.failedPage(worker: worker, head, bytes: 0, recorder)
                                    } else if error.kind == .status, let head = error.head {
                                        // A rejected page is counted by its status, not as an error; it ends the
                                        // flow.
                                        result.latencies.recordLatency(began.duration(to: clock.now))
                                        recorder.recordPage(worker: worker, head, bytes: 0, began: began)
                                        result.statuses[head.status, default: 0] += 1
                                    } else {
                                        result.count(error)
                                        recorder.recordPageError(worker: worker)
                                    }
                                    break walk
                                }
                            case .fail(let error):
                                // The next page is one this flow already fetched: a pagination loop.
                                if measured { result.count(error) }
                                break walk
                            case .wait, .done:
                                break walk
                            }
                        }
                    }
                    return result
                }
            }
            var merged = WorkerResult()
            for await part in group { merged.merge(part) }
            return merged
        }
    }
}
