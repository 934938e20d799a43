import Foundation
import Trawl
import TrawlEngine
import TrawlJobs

/// `--rate R --rate-store`: the load of several bench processes (on several machines) drawn from one schedule of
/// R requests/s kept by the store (`SharedBenchSchedule`).
///
/// Open model on URLs: a worker that is free takes the shared schedule's next slot and sends its request at that
/// slot; the slot is the request's due time, and its latency counts from it (a slot handed out late, because every
/// process was busy, still counts from when it was due). Paginated flows: each page request waits for a slot; its
/// latency counts from when it is sent (a flow's next page is not due before the last one came back).
extension BenchRunner {
    func sharedOpenModel(
        requests: [Request], shared: SharedBenchSchedule, clock: ContinuousClock,
        measureFrom: ContinuousClock.Instant
    ) async -> WorkerResult {
        let order = Ticket()
        let ready = ReadyRequests(requests, client: client)
        let measuredCount = Ticket()
        let deadline: ContinuousClock.Instant? = if case .duration(let span) = limit { measureFrom + span } else { nil }
        let maxRequests: Int = if case .requests(let count) = limit { count } else { Int.max }
        let recorder = self.recorder
        let client = self.client
        return await withTaskGroup(of: WorkerResult.self) { group in
            markMeasurementStart(in: &group, clock: clock, at: measureFrom)
            for worker in 0..<concurrency {
                group.addTask(executorPreference: executor(forWorker: worker)) {
                    var result = WorkerResult(expected: expectedStatus)
                    while !recorder.isStopped {
                        let index = order.next.add(1, ordering: .relaxed).oldValue
                        let request = ready.request(index)
                        guard
                            let due = await shared.next(
                                for: request.url, until: deadline, stopped: { recorder.isStopped })
                        else { break }
                        if clock.now < due { try? await clock.sleep(until: due, tolerance: nil) }
                        if recorder.isStopped { break }
                        let began = clock.now
                        // A pause this process learnt of after the slot was taken: the slot is not used.
                        if shared.isPaused(request.url, at: began) { continue }
                        let lateness = due < began ? due.duration(to: began) : .zero
                        let late = lateness > BenchReport.lateTolerance
                        // Past the end of -d, only a request that is (about) on time still goes out.
                        if let deadline, due >= deadline || (began >= deadline && late) { break }
                        let measured = due >= measureFrom
                        if measured, measuredCount.next.add(1, ordering: .relaxed).oldValue >= maxRequests { break }
                        if measured { recorder.began(worker: worker) }
                        let outcome = await Self.outcome { try await ready.send(index, through: client) }
                        let now = clock.now
                        if case .success(let response) = outcome {
                            await shared.answered(request.url, status: response.status, headers: response.headers)
                        }
                        guard measured else {
                            result.warmupRequests += 1
                            continue
                        }
                        guard
                            result.record(
                                outcome, worker: worker, from: due, to: now, late: late, sent: began,
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

    /// Paginated flows: waits for the shared schedule's next slot for `page`; false when the run is over.
    func takeSlot(_ shared: SharedBenchSchedule, for page: PageRequest, until deadline: ContinuousClock.Instant?)
        async -> Bool
    {
        let recorder = self.recorder
        while true {
            guard
                let due = await shared.next(for: page.request.url, until: deadline, stopped: { recorder.isStopped })
            else { return false }
            let clock = ContinuousClock()
            if clock.now < due { try? await clock.sleep(until: due, tolerance: nil) }
            if !shared.isPaused(page.request.url, at: clock.now) { return !recorder.isStopped }
        }
    }
}

extension SharedBenchSchedule {
    /// After a page: its answer may pause the host for every process.
    func answered(_ page: PageRequest, _ head: ResponseHead) async {
        await answered(page.request.url, status: head.status, headers: head.headers)
    }
}

/// What `--rate-store` did in one run, for the summary and the JSON.
package struct BenchSharedSummary {
    var store: String
    var key: String
    var rate: Double
    var processes: Int
    var pauses: Int
    var pausedSeconds: Double
    var localShareSeconds: Double

    /// The run's part of `shared`'s statistics (since `before`); slots dropped because every process fell behind
    /// are added to `unsent` (scheduled requests that never started).
    init(_ shared: SharedBenchSchedule, before: SharedBenchSchedule.Statistics?, unsent: inout Int) {
        let now = shared.statistics
        let before = before ?? SharedBenchSchedule.Statistics()
        store = shared.address.description
        key = shared.key
        rate = shared.rate
        processes = now.mostProcesses
        pauses = now.pauses - before.pauses
        pausedSeconds = now.pausedSeconds - before.pausedSeconds
        localShareSeconds = now.localShareSeconds - before.localShareSeconds
        unsent += now.dropped - before.dropped
    }

    var line: String {
        "  rate store    " + String(format: "%g", rate) + " req/s shared by up to \(processes) process(es) "
            + "(\(store), key \(key)); paused "
            + String(format: "%.1f s (%d pause(s)), local share %.1f s", pausedSeconds, pauses, localShareSeconds)
    }

    var json: [String: Any] {
        [
            "store": store, "key": key, "rate": rate, "processes": processes, "pauses": pauses,
            "paused_s": pausedSeconds, "local_share_s": localShareSeconds,
        ]
    }
}
