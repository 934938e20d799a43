extension Duration {
    /// The duration in seconds, as a `Double`.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The longest wait a server's number may impose: about 31 years. Past it `Duration.seconds(_:)` is still
    /// defined, but the milliseconds and nanoseconds computed from it would not fit an `Int64`.
    public static let longestBoundedSeconds: Double = 1_000_000_000

    /// `seconds` as a duration, bounded to `0...longestBoundedSeconds` (NaN is 0): a `Retry-After: 1e400` (which
    /// parses as infinity) or an `X-RateLimit-Reset: 1e300` becomes a long wait that the caller caps and reports,
    /// never the trap that `Duration.seconds(Double.infinity)` is.
    ///
    /// ```swift
    /// Duration.boundedSeconds(2.5)            // 2.5 s
    /// Duration.boundedSeconds(.infinity)      // 1_000_000_000 s
    /// Duration.boundedSeconds(-3)             // 0 s
    /// ```
    public static func boundedSeconds(_ seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }   // also NaN
        return .seconds(Swift.min(seconds, longestBoundedSeconds))
    }
}
