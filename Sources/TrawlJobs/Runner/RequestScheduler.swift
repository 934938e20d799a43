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
    private var hosts: [String: HostState] = [:]
    private var inFlight = 0
    private var waiters: [Waiter] = []
    private var cancelled = false
    private let clock = ContinuousClock()

    init(concurrency: Int, perHost: Int, rate: Double?, maxWait: Duration) {
        self.concurrency = max(1, concurrency)
        self.perHost = max(1, perHost)
        self.rate = rate.flatMap { $0 > 0 ? $0 : nil }
        self.maxWait = maxWait
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
            if inFlight < concurrency, (hosts[host]?.inFlight ?? 0) < perHost {
                take(host)
                return
            }
            try await withCheckedThrowingContinuation { waiters.append(Waiter(host: host, continuation: $0)) }
        }
    }

    /// Marks a request to `host` as finished and lets waiting ones in.
    func release(_ host: String) {
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
        guard let rate else { return nil }
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
        if rate != nil { state.tokens -= 1 }
        hosts[host] = state
    }

    /// Resumes waiters (in arrival order) whose host now has room; they re-check pauses and tokens themselves.
    private func wakeWaiters() {
        var available = concurrency - inFlight
        guard available > 0, !waiters.isEmpty else { return }
        var remaining: [Waiter] = []
        var admitted: [String: Int] = [:]
        for waiter in waiters {
            let hostLoad = (hosts[waiter.host]?.inFlight ?? 0) + admitted[waiter.host, default: 0]
            if available > 0, hostLoad < perHost {
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
