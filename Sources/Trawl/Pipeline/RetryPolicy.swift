import Foundation
import TrawlEngine

/// Which failures are worth another attempt, how many attempts there are and how long to wait before each: the
/// one retry policy of the API (`API.retryPolicy`, for `send` and every page) and of the job runner.
///
/// Retried: connection failures, timeouts, stalls, truncated or reset bodies, and the statuses 408, 429 and
/// 5xx. Not retried: other 4xx, malformed JSON in a complete body, bodies over the size limit, bad requests.
///
/// ```swift
/// let policy = RetryPolicy(attempts: 5, backoff: .milliseconds(250), maxBackoff: .seconds(30))
/// policy.isRetryable(error)     // true for a 503
/// policy.delay(afterAttempt: 3) // random in 0...1 s (full jitter)
/// ```
public struct RetryPolicy: Sendable, Hashable {
    public var attempts: Int
    public var backoff: Duration
    public var maxBackoff: Duration

    public init(attempts: Int = 5, backoff: Duration = .milliseconds(250), maxBackoff: Duration = .seconds(30)) {
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.maxBackoff = maxBackoff
    }

    /// A policy that never tries again.
    public static let never = RetryPolicy(attempts: 1)

    public func isRetryable(_ error: any Error) -> Bool {
        if let page = error as? PaginationError {
            guard let underlying = page.trawlError else { return page.status.map(Self.isRetryable(status:)) ?? false }
            return isRetryable(underlying)
        }
        guard let error = error as? TrawlError else { return false }
        switch error.code {
        case .unexpectedStatus:
            guard let status = error.status else { return false }
            return Self.isRetryable(status: status)
        case .connectFailed, .dnsFailed, .timeout, .stalled, .truncated, .receiveFailed, .sendFailed, .transport:
            return true
        case .invalidBody:
            // A body cut short by the connection surfaces from the JSON layer; the transport error underneath
            // says so.
            if let underlying = error.underlying { return isRetryable(underlying) }
            return false
        default:
            return false
        }
    }

    /// 408, 429 and 5xx: statuses that say "later", not "never".
    public static func isRetryable(status: Int) -> Bool {
        status == 408 || status == 429 || status >= 500
    }

    /// Full jitter: uniformly random in `0...min(maxBackoff, backoff * 2^(attempt-1))`.
    public func delay(afterAttempt attempt: Int) -> Duration {
        let base = backoff.retrySeconds * pow(2, Double(max(0, attempt - 1)))
        let ceiling = min(maxBackoff.retrySeconds, base)
        return .seconds(Double.random(in: 0...max(0, ceiling)))
    }
}


extension Duration {
    /// The duration in seconds, as a `Double`.
    fileprivate var retrySeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
