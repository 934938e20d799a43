import TrawlEngine
import TrawlJobs

/// The shared bench schedule of one process as a value (`SharedBenchSchedule` runs it): its statistics, the
/// host pauses it knows, and the local share it keeps while the store does not answer. Each event (a request
/// asks for its slot, the store answers or does not, a wait ends, a pause is seen, a heartbeat is answered)
/// changes the state and returns what to do: send at a due time, wait, ask the store, or stop.
///
/// ```swift
/// var state = BenchScheduleState(rate: 10, processes: 2)
/// state.next(host: "h", now: t, deadline: nil, stopped: false, storeUsable: false)   // .send(t): the local share
/// state.next(host: "h", now: t, deadline: nil, stopped: false, storeUsable: false)   // .wait(until: t + 0.15 s, …)
/// ```
struct BenchScheduleState {
    typealias Instant = ContinuousClock.Instant

    /// What the schedule does next for a request.
    enum Action: Equatable {
        /// Send at this due time (its latency counts from it).
        case send(Instant)
        /// Wait until then (or the deadline), then ask again; `paused`: a host pause, counted.
        case wait(until: Instant, paused: Bool)
        /// Run the store's reserve script with this `lag` argument (0 while on the local share: no backlog), then
        /// give its decision to `answered`.
        case askStore(lag: Double)
        /// The deadline passed or the run was stopped.
        case stop
    }

    /// The store's answer to a reserve, checked (it is a peer: bounded here).
    enum Decision: Equatable {
        /// A slot `offset` seconds from now (at most the horizon); `dropped` overdue slots were skipped.
        case slot(Double, dropped: Int)
        /// Wait this long; `paused`: a host pause.
        case wait(Double, paused: Bool)
    }

    let rate: Double
    /// How many processes share the rate at least, for the local share.
    let processes: Int
    private(set) var statistics = SharedBenchSchedule.Statistics()
    private(set) var pauses: [String: Instant] = [:]
    /// The end of the pauses counted so far: an overlapping pause counts once.
    private(set) var countedUntil: Instant?
    /// The next slot of the local share while the store does not answer, and since when.
    private(set) var local: Instant?
    private(set) var localSince: Instant?
    /// How long another process may stay on its local share after this one is back with the store: each process
    /// asks a lost store again only after its own back-off (`SharedRateBudget.retryInterval`).
    let rejoinGrace: Double
    /// Once the local share ended, until `until`: the store's slots are taken no faster than the local share's
    /// pace (the next at `next`). The store counts only the processes back with it; one back first would take the
    /// whole rate while the others still send their shares (1.5x R for up to a second was seen with two).
    private(set) var rejoin: (until: Instant, next: Instant)?

    init(rate: Double, processes: Int, rejoinGrace: Double = 1) {
        self.rate = rate
        self.processes = max(1, processes)
        self.rejoinGrace = max(0, rejoinGrace)
    }

    /// A request asks for its due time. `storeUsable`: the store is to be asked (not in its back-off after a
    /// failure).
    mutating func next(host: String, now: Instant, deadline: Instant?, stopped: Bool, storeUsable: Bool) -> Action {
        if stopped { return .stop }
        if let deadline, now >= deadline { return .stop }
        if let ends = pauses[host], ends > now { return .wait(until: ends, paused: true) }
        if storeUsable { return .askStore(lag: local == nil ? SharedBenchSchedule.lag : 0) }
        return localShare(now: now)
    }

    /// The store's decision (`nil`: it did not answer, or not in its terms), for the request that asked at `asked`.
    mutating func answered(_ decision: Decision?, asked: Instant, now: Instant) -> Action {
        guard let decision else { return localShare(now: asked) }
        endLocalShare(now: now)
        switch decision {
        case .slot(let offset, let dropped):
            statistics.dropped += dropped
            return .send(rejoinPace(now + .boundedSeconds(offset), now: now))
        case .wait(let seconds, let paused):
            return .wait(until: now + .boundedSeconds(seconds), paused: paused)
        }
    }

    /// R/N from now on while the store does not answer: no backlog, and never a slot further ahead than the
    /// horizon, so that nothing taken locally is still to go out once the store is back.
    private mutating func localShare(now: Instant) -> Action {
        if local == nil {
            local = now
            localSince = now
        }
        let slot = local ?? now
        let horizon = Duration.boundedSeconds(SharedBenchSchedule.horizon)
        if slot > now + horizon { return .wait(until: slot - horizon, paused: false) }
        local = slot + localInterval
        return .send(slot)
    }

    /// N/R: the local share's interval between sends.
    private var localInterval: Duration { .boundedSeconds(Double(max(processes, statistics.processes)) / rate) }

    /// `due`, the store's slot, or later while rejoining: no faster than the local share's pace.
    private mutating func rejoinPace(_ due: Instant, now: Instant) -> Instant {
        guard let current = rejoin else { return due }
        guard now < current.until else {
            rejoin = nil
            return due
        }
        let paced = max(due, current.next)
        rejoin = (current.until, paced + localInterval)
        return paced
    }

    /// The store answers again (or the process leaves): the local share's time is counted, and it ends.
    mutating func endLocalShare(now: Instant) {
        guard let since = localSince else { return }
        statistics.localShareSeconds += (now - since).seconds
        rejoin = (now + .boundedSeconds(rejoinGrace), max(local ?? now, now))
        local = nil
        localSince = nil
    }

    /// A wait begins; a pause is counted unless it overlaps one counted already.
    mutating func waitStarted(at start: Instant, until end: Instant, paused: Bool) {
        guard paused else { return }
        if (countedUntil ?? start) <= start { statistics.pauses += 1 }
        countedUntil = max(countedUntil ?? end, end)
    }

    /// A pause's wait ended after `seconds`.
    mutating func pauseWaited(_ seconds: Double) { statistics.pausedSeconds += seconds }

    /// A `Retry-After` seen by this process pauses `host` until `ends` (a later end wins).
    mutating func pause(_ host: String, until ends: Instant) { pauses[host] = max(pauses[host] ?? ends, ends) }

    func isPaused(_ host: String, at instant: Instant) -> Bool { (pauses[host] ?? instant) > instant }

    /// The store counted `count` live processes at a heartbeat.
    mutating func beat(live count: Int) {
        statistics.processes = count
        statistics.mostProcesses = max(statistics.mostProcesses, count)
    }

    /// What this process saw so far, a local share still in force counted until `now`.
    func statistics(now: Instant) -> SharedBenchSchedule.Statistics {
        var statistics = statistics
        if let since = localSince { statistics.localShareSeconds += (now - since).seconds }
        return statistics
    }

    /// The reserve script's answer `[kind, seconds, dropped]`, bounded: a slot at most the horizon ahead, a wait or
    /// pause at most the longest pause.
    static func decision(_ answer: RESPValue?) -> Decision? {
        guard case .array(let fields?)? = answer, fields.count == 3, let kind = fields[0].text,
            let seconds = fields[1].text.flatMap(Double.init), seconds.isFinite, let dropped = fields[2].text
        else { return nil }
        let longest = SharedBenchSchedule.longestPause
        switch kind {
        case "slot": return .slot(min(seconds, SharedBenchSchedule.horizon), dropped: max(0, Int(dropped) ?? 0))
        case "wait": return .wait(min(max(seconds, 0.001), longest), paused: false)
        case "pause": return .wait(min(max(seconds, 0.001), longest), paused: true)
        default: return nil
        }
    }
}
