import Foundation
import Trawl
import TrawlEngine

/// Which failures are worth another attempt, and how long to wait before it.
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

    public func isRetryable(_ error: any Error) -> Bool {
        guard let error = error as? TrawlError else { return false }
        switch error.code {
        case .unexpectedStatus:
            guard let status = error.status else { return false }
            return status == 408 || status == 429 || status >= 500
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

    /// Full jitter: uniformly random in `0...min(maxBackoff, backoff * 2^(attempt-1))`.
    public func delay(afterAttempt attempt: Int) -> Duration {
        let base = backoff.seconds * pow(2, Double(max(0, attempt - 1)))
        let ceiling = min(maxBackoff.seconds, base)
        return .seconds(Double.random(in: 0...max(0, ceiling)))
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// What a response says about the host's rate limit: how long every request to it should wait.
///
/// Reads `Retry-After` (delta seconds or an HTTP date) on 429 and 503, and on any response whose remaining
/// budget is 0: `X-RateLimit-Remaining` with `X-RateLimit-Reset` (Unix time or delta seconds),
/// `RateLimit-Remaining` with `RateLimit-Reset` (delta seconds), or the combined
/// `RateLimit: limit=…, remaining=0, reset=…`.
///
/// ```swift
/// RateLimitSignal.wait(status: 429, headers: ["Retry-After": "2"], now: Date())   // 2 s
/// ```
public enum RateLimitSignal {
    public static func wait(status: Int, headers: HTTPHeaders, now: Date = Date()) -> Duration? {
        if status == 429 || status == 503, let value = headers["Retry-After"] {
            if let wait = retryAfter(value, now: now) { return wait }
        }
        if let remaining = headers["X-RateLimit-Remaining"].flatMap({ Int($0.trimmed) }), remaining <= 0,
            let reset = headers["X-RateLimit-Reset"].flatMap({ Double($0.trimmed) })
        {
            return resetWait(reset, now: now)
        }
        if let remaining = headers["RateLimit-Remaining"].flatMap({ Int($0.trimmed) }), remaining <= 0,
            let reset = headers["RateLimit-Reset"].flatMap({ Double($0.trimmed) })
        {
            return .seconds(max(0, reset))
        }
        if let combined = headers["RateLimit"] {
            var fields: [String: Double] = [:]
            for part in combined.split(whereSeparator: { $0 == "," || $0 == ";" }) {
                let pair = part.split(separator: "=", maxSplits: 1)
                if pair.count == 2, let number = Double(pair[1].trimmed) { fields[pair[0].trimmed.lowercased()] = number }
            }
            if let remaining = fields["remaining"], remaining <= 0, let reset = fields["reset"] {
                return .seconds(max(0, reset))
            }
        }
        return nil
    }

    /// `Retry-After`: delta seconds or an IMF-fixdate.
    static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = value.trimmed
        if let seconds = Double(text) { return .seconds(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }

    /// A reset value above a billion is a Unix time; smaller ones are delta seconds.
    static func resetWait(_ reset: Double, now: Date) -> Duration {
        if reset > 1_000_000_000 { return .seconds(max(0, reset - now.timeIntervalSince1970)) }
        return .seconds(max(0, reset))
    }
}

extension StringProtocol {
    var trimmed: String { trimmingCharacters(in: .whitespaces) }
}
