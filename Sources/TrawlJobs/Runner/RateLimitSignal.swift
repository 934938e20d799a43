import Foundation
import Trawl
import TrawlEngine
import TrawlJSON

/// What a response says about the host's rate limit: how long every request to it should wait.
///
/// Reads `Retry-After` (delta seconds or an HTTP date) on 429 and 503, and on any response whose remaining
/// budget is 0: `X-RateLimit-Remaining` with `X-RateLimit-Reset` (Unix time or delta seconds),
/// `RateLimit-Remaining` with `RateLimit-Reset` (delta seconds), or the combined
/// `RateLimit: limit=…, remaining=0, reset=…`. GraphQL answers say it in their body (``wait(graphQL:now:)``).
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
            return .boundedSeconds(reset)
        }
        if let combined = headers["RateLimit"] {
            var fields: [String: Double] = [:]
            for part in combined.split(whereSeparator: { $0 == "," || $0 == ";" }) {
                let pair = part.split(separator: "=", maxSplits: 1)
                if pair.count == 2, let number = Double(pair[1].trimmed) { fields[pair[0].trimmed.lowercased()] = number }
            }
            if let remaining = fields["remaining"], remaining <= 0, let reset = fields["reset"] {
                return .boundedSeconds(reset)
            }
        }
        return nil
    }

    /// A GraphQL answer's rate limit, as GitHub sends it: `data.rateLimit.remaining` 0 (or less) pauses the host
    /// until `data.rateLimit.resetAt` (an ISO 8601 time).
    ///
    /// ```swift
    /// RateLimitSignal.wait(graphQL: ["data.rateLimit.remaining": .number("0"),
    ///                                "data.rateLimit.resetAt": .string("2030-01-01T00:00:00Z")])
    /// ```
    public static func wait(graphQL captured: [JSONKeyPath: JSONValue], now: Date = Date()) -> Duration? {
        if let remaining = captured[GraphQLAnswer.rateLimitRemaining]?.int64Value, remaining <= 0,
            let reset = captured[GraphQLAnswer.rateLimitResetAt]?.stringValue,
            let date = ISO8601DateFormatter().date(from: reset.trimmed)
        {
            return .boundedSeconds(date.timeIntervalSince(now))
        }
        return wait(queryCost: captured)
    }

    /// A GraphQL answer's query cost, as Shopify sends it (`extensions.cost`): when the bucket holds less than the
    /// query cost (`throttleStatus.currentlyAvailable` < `requestedQueryCost`, the next page costing what this one
    /// did), the host pauses until it has refilled at `restoreRate` points a second. A rate of 0 or less (or a
    /// cost of 1e300) is a wait of `Duration.longestBoundedSeconds`, which the scheduler caps at `max_wait_s`.
    ///
    /// ```swift
    /// RateLimitSignal.wait(queryCost: ["extensions.cost.requestedQueryCost": .number("52"),
    ///                                  "extensions.cost.throttleStatus.currentlyAvailable": .number("12"),
    ///                                  "extensions.cost.throttleStatus.restoreRate": .number("50.0")])   // 0.8 s
    /// ```
    public static func wait(queryCost captured: [JSONKeyPath: JSONValue]) -> Duration? {
        guard let cost = captured[GraphQLAnswer.costRequested]?.doubleValue,
            let available = captured[GraphQLAnswer.costAvailable]?.doubleValue, available < cost
        else { return nil }
        let rate = captured[GraphQLAnswer.costRestoreRate]?.doubleValue ?? 0
        return .boundedSeconds(rate > 0 ? (cost - available) / rate : .infinity)
    }

    /// `Retry-After`: delta seconds or an IMF-fixdate.
    static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = value.trimmed
        if let seconds = Double(text) { return .boundedSeconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return .boundedSeconds(date.timeIntervalSince(now))
    }

    /// A reset value above a billion is a Unix time; smaller ones are delta seconds.
    static func resetWait(_ reset: Double, now: Date) -> Duration {
        if reset > 1_000_000_000 { return .boundedSeconds(reset - now.timeIntervalSince1970) }
        return .boundedSeconds(reset)
    }
}

extension StringProtocol {
    var trimmed: String { trimmingCharacters(in: .whitespaces) }
}
