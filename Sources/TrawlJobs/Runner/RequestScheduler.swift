import Foundation
import Trawl

/// Admits a job's requests: at most `concurrency` in flight in all, `perHost` per host, `rate` per second per
/// host (token bucket holding one second's worth), and nothing to a host while it is paused by a
/// `Retry-After` or a rate-limit reset — the whole host's queue waits, not only the request that saw it.
///
/// ```swift
/// let scheduler = RequestScheduler(concurrency: 16, perHost: 8, rate: 10, maxWait: .seconds(120))
/// try await scheduler.acquire("https://api.github.com")
/// defer { Task { await scheduler.release("https://api.github.com") } }
/// ```
actor RequestScheduler {
    struct HostState {
        var inFlight = 0
        var pausedUntil: ContinuousClock.Instant?
        var tokens: Double
        var refilled: ContinuousClock.Instant
    }

    struct Waiter {
        let host: String
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// A pause imposed on a host, for the report.
    struct Pause: Sendable {
        var host: String
        var requested: Duration
        var imposed: Duration
        var capped: Bool { imposed < requested }
    }

    let concurrency: Int
    let perHost: Int
    let rate: Double?
    let maxWait: Duration
    /// The budget shared with the job's other processes (`--rate-store`); `rate` is then this process's fallback.
    let shared: SharedRateBudget?
    private var sharedLosses = 0
    /// Per-host limits below `perHost` that follow 429s (`--adaptive`); `nil`: `perHost` for every host.
    private var adaptive: AdaptiveConcurrency?
    private var hosts: [String: HostState] = [:]
    private var inFlight = 0
    private var waiters: [Waiter] = []
    private var cancelled = false
    private let clock = ContinuousClock()

    init(
        concurrency: Int, perHost: Int, rate: Double?, maxWait: Duration, shared: SharedRateBudget? = nil,
        adaptive: Bool = false
    ) {
        self.concurrency = max(1, concurrency)
        self.perHost = max(1, perHost)
        self.rate = rate.flatMap { $0 > 0 ? $0 : nil }
        self.maxWait = maxWait
        self.shared = shared
        self.adaptive = adaptive ? AdaptiveConcurrency(ceiling: perHost) : nil
    }

    /// Waits until a request to `host` may start, and counts it as in flight.
    func acquire(_ host: String) async throws {
        while true {
            if cancelled { throw CancellationError() }
            try Task.checkCancellation()
            if let wait = timeToWait(host) {
                try await clock.sleep(for: wait)
                continue
            }
            if inFlight < concurrency, (hosts[host]?.inFlight ?? 0) < hostLimit(host) {
                take(host)
                if let shared, shared.shouldAsk, let wait = try await sharedWait(host, shared) {
                    release(host)
                    try await clock.sleep(for: wait)
                    continue
                }
                return
            }
            try await withCheckedThrowingContinuation { waiters.append(Waiter(host: host, continuation: $0)) }
        }
    }

    /// Marks a request to `host` as finished and lets waiting ones in.
    func release(_ host: String, status: Int? = nil) {
        if let status { adaptive?.answered(host, limited: status == 429 || status == 503) }
        inFlight -= 1
        hosts[host]?.inFlight -= 1
        wakeWaiters()
    }

    /// Pauses every request to `host` for `duration` (capped at `maxWait`); returns what was imposed.
    func pause(_ host: String, for duration: Duration) -> Pause {
        let imposed = min(duration, maxWait)
        let until = clock.now + imposed
        var state = hosts[host] ?? newHost()
        if state.pausedUntil.map({ $0 < until }) ?? true { state.pausedUntil = until }
        hosts[host] = state
        adaptive?.paused(host)
        if let shared { Task { await shared.pause(host, for: imposed) } }
        return Pause(host: host, requested: duration, imposed: imposed)
    }

    /// Fails every waiting and future `acquire`.
    func cancelAll() {
        cancelled = true
        let waiting = waiters
        waiters.removeAll()
        for waiter in waiting { waiter.continuation.resume(throwing: CancellationError()) }
    }

    private func newHost() -> HostState {
        HostState(tokens: rate ?? 0, refilled: clock.now)
    }

    /// How long `host` must wait for its pause to end or a token to be available, or `nil` to go now.
    private func timeToWait(_ host: String) -> Duration? {
        var state = hosts[host] ?? newHost()
        defer { hosts[host] = state }
        let now = clock.now
        if let until = state.pausedUntil {
            if until > now { return until - now }
            state.pausedUntil = nil
        }
        guard let rate, !sharesBudget(&state) else { return nil }
        let elapsed = (now - state.refilled).seconds
        state.tokens = min(max(1, rate), state.tokens + elapsed * rate)
        state.refilled = now
        if state.tokens >= 1 { return nil }
        return .boundedSeconds((1 - state.tokens) / rate)
    }

    private func take(_ host: String) {
        inFlight += 1
        var state = hosts[host] ?? newHost()
        state.inFlight += 1
        if rate != nil, shared?.shouldAsk != true { state.tokens -= 1 }
        hosts[host] = state
    }

    /// Requests to `host` allowed in flight now.
    private func hostLimit(_ host: String) -> Int { adaptive?.limit(host) ?? perHost }

    /// The lowest, highest and final concurrency `--adaptive` allowed each host (empty without it).
    var concurrencyReport: [String: JobReport.ConcurrencyRange] { adaptive?.report ?? [:] }

    /// Whether the shared store holds this host's bucket now; when it was lost since the last look, the local
    /// bucket starts empty (it filled up unused meanwhile, and spending that would speed the process up).
    private func sharesBudget(_ state: inout HostState) -> Bool {
        guard let shared else { return false }
        if shared.shouldAsk { return true }
        let losses = shared.losses
        if losses != sharedLosses {
            sharedLosses = losses
            for key in hosts.keys {
                hosts[key]?.tokens = 0
                hosts[key]?.refilled = clock.now
            }
            state.tokens = 0
            state.refilled = clock.now
        }
        return false
    }

    /// How long to wait before asking the store for `host` again, or `nil` to go (a token was taken, or the store
    /// is out of reach and the local share applies from the next request on). A paused host pauses here too, so
    /// the whole queue waits instead of asking the store.
    private func sharedWait(_ host: String, _ shared: SharedRateBudget) async throws -> Duration? {
        switch await shared.take(host) {
        case .go: return nil
        case .unavailable:
            // The token was not taken: this request waits for the local share like the ones after it.
            var state = hosts[host] ?? newHost()
            _ = sharesBudget(&state)
            hosts[host] = state
            return timeToWaitForFallback(host)
        case .wait(let asked, let paused):
            // The store is a peer: what it asks is capped like a Retry-After (`maxWait`) before it is slept on.
            let wait = min(asked, maxWait)
            if paused {
                var state = hosts[host] ?? newHost()
                let until = clock.now + wait
                if state.pausedUntil.map({ $0 < until }) ?? true { state.pausedUntil = until }
                hosts[host] = state
            }
            return wait
        }
    }

    /// The local share's wait for a request that already holds its slot, taking its token when there is one.
    private func timeToWaitForFallback(_ host: String) -> Duration? {
        guard rate != nil else { return nil }
        if let wait = timeToWait(host) { return wait }
        hosts[host]?.tokens -= 1
        return nil
    }

    /// Resumes waiters (in arrival order) whose host now has room; they re-check pauses and tokens themselves.
    private func wakeWaiters() {
        var available = concurrency - inFlight
        guard available > 0, !waiters.isEmpty else { return }
        var remaining: [Waiter] = []
        var admitted: [String: Int] = [:]
        for waiter in waiters {
            let hostLoad = (hosts[waiter.host]?.inFlight ?? 0) + admitted[waiter.host, default: 0]
            if available > 0, hostLoad < hostLimit(waiter.host) {
                available -= 1
                admitted[waiter.host, default: 0] += 1
                waiter.continuation.resume()
            } else {
                remaining.append(waiter)
            }
        }
        waiters = remaining
    }
}
