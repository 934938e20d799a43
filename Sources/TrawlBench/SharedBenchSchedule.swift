import Foundation
import Synchronization
import TrawlEngine
import TrawlJobs

/// `trawl bench --rate R --rate-store redis://…`: one open-model schedule of `R` requests/s shared by every bench
/// process naming the same store and key, so that N machines together send R/s, not N×R.
///
/// The store holds the schedule's next slot; a process takes the next slot for each request (a Lua script moves
/// it one `1/R` on, so the slots of all processes together are `1/R` apart) and sends the request at that slot:
/// the slot is the request's due time, and its latency counts from it. A process whose workers are all busy takes
/// no slot; the others take them, and when every process is behind, the slots handed out are overdue (latency
/// still counts from them), up to `lag` behind: older slots are dropped and counted (``Statistics/dropped``).
/// No slot is taken more than `horizon` ahead, so a pause set meanwhile holds every process within that.
///
/// A `Retry-After` (or a rate-limit header at 0) seen by one process pauses the host for all: the schedule moves
/// to the pause's end. While the store does not answer, a process warns once and keeps to a local schedule of
/// `R/N` (N: the processes it last saw live through the store's heartbeats, at least `processes`), trying the
/// store again every second and rejoining it when it answers. Keys are `trawl:bench:KEY:…` and expire.
///
/// What the schedule decides is a `BenchScheduleState` value under a lock; this class runs its actions (the
/// store's scripts, the waits) outside the lock.
///
/// ```swift
/// let schedule = SharedBenchSchedule(address: store, key: "api", rate: 100, processes: 1, warn: { print($0) })
/// await schedule.join()
/// while let due = await schedule.next(for: url, until: deadline, stopped: { false }) {
///     try await ContinuousClock().sleep(until: due)
///     // send; latency from `due`; then `await schedule.answered(url, status: …, headers: …)`
/// }
/// await schedule.leave()
/// ```
package final class SharedBenchSchedule: Sendable {
    /// What this process saw of the shared budget, for the report.
    package struct Statistics: Sendable, Equatable {
        /// Bench processes live at the store at the last heartbeat (this one included; 0: never answered).
        package var processes = 0
        /// The most processes seen live at once.
        package var mostProcesses = 0
        /// Host pauses this process waited through (its own and the other processes').
        package var pauses = 0
        /// Seconds this process's schedule was held by pauses.
        package var pausedSeconds = 0.0
        /// Seconds spent on the local share while the store did not answer.
        package var localShareSeconds = 0.0
        /// Slots of the schedule that fell more than `lag` behind and were dropped by this process.
        package var dropped = 0

        package init() {}
    }

    package let address: RateStoreAddress
    package let key: String
    package let rate: Double
    /// How many processes share the rate at least (`--processes`), for the local share.
    package let processes: Int
    /// The furthest ahead a slot is taken.
    static let horizon = 0.05
    /// The oldest an overdue slot may be when it is handed out.
    static let lag = 2.0
    /// A process that has not beaten for this long is no longer counted live.
    static let liveSeconds = 3.0
    /// The longest pause a `Retry-After` imposes.
    static let longestPause = 120.0

    private let budget: SharedRateBudget
    private let member = UUID().uuidString
    private let gate = Gate()
    private let state: Mutex<BenchScheduleState>
    private let heartbeat = Mutex<Task<Void, Never>?>(nil)
    private let clock = ContinuousClock()

    package init(
        address: RateStoreAddress, key: String, rate: Double, processes: Int,
        warn: @escaping @Sendable (String) -> Void
    ) {
        self.address = address
        self.key = key
        self.rate = rate
        self.processes = max(1, processes)
        let budget = SharedRateBudget(address: address, job: "bench:" + key, rate: nil, warn: warn)
        self.budget = budget
        state = Mutex(BenchScheduleState(
            rate: rate, processes: processes, rejoinGrace: budget.retryInterval.seconds))
    }

    private var scheduleKey: String { budget.namespace + "schedule" }
    private var membersKey: String { budget.namespace + "members" }
    private func pauseKey(_ host: String) -> String { budget.namespace + host + ":pause" }

    /// What this process saw so far (a local share still in force counts until now).
    package var statistics: Statistics {
        let now = clock.now
        return state.withLock { $0.statistics(now: now) }
    }

    /// Announces this process at the store (starting the schedule afresh when no other process is live) and
    /// keeps announcing it every second.
    package func join() async {
        await beat(joining: true)
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let self, !Task.isCancelled else { return }
                await self.beat(joining: false)
            }
        }
        heartbeat.withLock { $0 = task }
    }

    /// Stops the heartbeat and leaves the store's list of live processes.
    package func leave() async {
        heartbeat.withLock { $0?.cancel() }
        let now = clock.now
        state.withLock { $0.endLocalShare(now: now) }
        _ = await budget.run(script: .leave, keys: [membersKey, scheduleKey], [member])
    }

    private func beat(joining: Bool) async {
        let answer = await budget.run(
            script: .beat, keys: [membersKey, scheduleKey], [member, String(Self.liveSeconds), joining ? "1" : "0"])
        if case .integer(let count)? = answer {
            state.withLock { $0.beat(live: count) }
        }
    }

    /// The due time of this process's next request to `url`: a slot of the shared schedule, or of the local share
    /// while the store does not answer. `nil` once `deadline` has passed or `stopped` says so. Callers are served
    /// one at a time, in order.
    package func next(
        for url: String, until deadline: ContinuousClock.Instant?, stopped: @escaping @Sendable () -> Bool
    ) async -> ContinuousClock.Instant? {
        let host = Origin.hostKey(of: url)
        return await gate.serialized { await self.reserve(host, until: deadline, stopped: stopped) }
    }

    /// Whether this process knows `url`'s host to be paused at `instant` (a slot taken before the pause is then
    /// not used).
    package func isPaused(_ url: String, at instant: ContinuousClock.Instant) -> Bool {
        let host = Origin.hostKey(of: url)
        return state.withLock { $0.isPaused(host, at: instant) }
    }

    /// After a response from `url`: a `Retry-After` on 429/503 (or a rate-limit header at 0) pauses its host for
    /// every process sharing the store (at most 120 s).
    package func answered(_ url: String, status: Int, headers: HTTPHeaders) async {
        guard let wait = RateLimitSignal.wait(status: status, headers: headers), wait > .zero else { return }
        let seconds = min(wait.seconds, Self.longestPause)
        let host = Origin.hostKey(of: url)
        let ends = clock.now + .boundedSeconds(seconds)
        state.withLock { $0.pause(host, until: ends) }
        _ = await budget.run(script: .benchPause, keys: [pauseKey(host), scheduleKey], [String(seconds)])
    }

    private func reserve(
        _ host: String, until deadline: ContinuousClock.Instant?, stopped: @Sendable () -> Bool
    ) async -> ContinuousClock.Instant? {
        while true {
            let now = clock.now
            let isStopped = stopped()
            let storeUsable = budget.shouldAsk
            var action = state.withLock {
                $0.next(host: host, now: now, deadline: deadline, stopped: isStopped, storeUsable: storeUsable)
            }
            if case .askStore(let lag) = action {
                let answer = await budget.run(
                    script: .reserve, keys: [scheduleKey, pauseKey(host)],
                    [String(1 / rate), String(Self.horizon), String(Self.lag), lag == 0 ? "0" : String(lag)])
                let decision = BenchScheduleState.decision(answer)
                let answeredAt = clock.now
                action = state.withLock { $0.answered(decision, asked: now, now: answeredAt) }
            }
            switch action {
            case .stop, .askStore: return nil  // `answered` never asks the store again
            case .send(let due): return due
            case .wait(let until, let paused): await wait(until: until, paused: paused, deadline, stopped)
            }
        }
    }

    /// Sleeps until `instant` (or the deadline), in steps short enough to notice `stopped`; a pause is counted.
    private func wait(
        until instant: ContinuousClock.Instant, paused: Bool, _ deadline: ContinuousClock.Instant?,
        _ stopped: @Sendable () -> Bool
    ) async {
        let start = clock.now
        state.withLock { $0.waitStarted(at: start, until: instant, paused: paused) }
        let end = deadline.map { min($0, instant) } ?? instant
        while clock.now < end, !stopped() {
            try? await clock.sleep(until: min(end, clock.now + .milliseconds(100)), tolerance: nil)
        }
        if paused {
            let slept = (clock.now - start).seconds
            state.withLock { $0.pauseWaited(slept) }
        }
    }

    /// Runs callers one at a time, in the order they came.
    private actor Gate {
        private var tail: Task<Void, Never>?

        func serialized<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
            let previous = tail
            let task = Task {
                await previous?.value
                return await body()
            }
            tail = Task { _ = await task.value }
            return await task.value
        }
    }
}

extension SharedRateBudget.Script {
    static let reserve = Self(text: BenchScheduleScripts.reserve)
    static let benchPause = Self(text: BenchScheduleScripts.pause)
    static let beat = Self(text: BenchScheduleScripts.beat)
    static let leave = Self(text: BenchScheduleScripts.leave)
}
