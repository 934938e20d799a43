/// The attempts at one request under a ``RetryPolicy``: a value that counts them, allows one credentials refresh,
/// and says after each failure what comes next. The three senders (``API``'s `send`, a page of a walk, a job's
/// page) each hold one per request and do what it returns; none keeps its own counter.
///
/// ```swift
/// var attempts = Attempts(policy: policy)
/// while true {
///     do {
///         return try await send(request, attempt: attempts.current)
///     } catch {
///         switch attempts.failed(retryable: policy.isRetryable(error)) {
///         case .retry(let delay): try await Task.sleep(for: delay)
///         case .refresh: break                  // only from `refreshing()`
///         case .fail: throw error               // after `attempts.made` attempts
///         }
///     }
/// }
/// ```
package struct Attempts: Sendable {
    /// What to do after a failed attempt.
    package enum Next: Sendable, Equatable {
        /// Send again after this delay (the policy's backoff, full jitter).
        case retry(after: Duration)
        /// Refresh the credentials and send again at once.
        case refresh
        /// Give up: the failure stands.
        case fail
    }

    package let policy: RetryPolicy
    /// Attempts made so far, the one in flight included (1 before the first failure).
    package private(set) var made = 1
    /// Whether the one credentials refresh was used.
    package private(set) var refreshed = false

    package init(policy: RetryPolicy) {
        self.policy = policy
    }

    /// The current attempt counted from 0, as adapters see it (`AdapterContext.attempt`).
    package var current: Int { made - 1 }

    /// Whether a rejected attempt may still be answered by refreshing the credentials (once per request).
    package var mayRefresh: Bool { !refreshed }

    /// After a failed attempt: another one after a backoff while the failure may pass (`retryable`), the request
    /// can be sent again (`replayable`) and attempts are left; otherwise `.fail`.
    package mutating func failed(retryable: Bool, replayable: Bool = true) -> Next {
        guard retryable, replayable, made < policy.attempts else { return .fail }
        made += 1
        return .retry(after: policy.delay(afterAttempt: made - 1))
    }

    /// After a rejection the credentials may fix, when the refresher asked for a refresh: `.refresh` once per
    /// request (at once, not counted against the policy's attempts), `.fail` for a second one or a request that
    /// cannot be sent again.
    package mutating func refreshing(replayable: Bool = true) -> Next {
        guard !refreshed, replayable else { return .fail }
        refreshed = true
        made += 1
        return .refresh
    }
}
