/// Decides whether a failed attempt is tried again, and may refresh credentials first. The API asks it
/// once per request (one retry at most); adapters run again before the retry, so a refreshed token is used.
///
/// ```swift
/// api.retrier = RefreshOnUnauthorized { try await tokens.refresh() }
/// ```
public protocol RequestRetrier: Sendable {
    func shouldRetry(_ request: Request, response: RawResponse) async throws -> Bool
}

/// On 401, runs `refresh` and retries once.
///
/// ```swift
/// api.adapters = [BearerTokenAdapter { await tokens.current }]
/// api.retrier = RefreshOnUnauthorized { try await tokens.refresh() }
/// ```
public struct RefreshOnUnauthorized: RequestRetrier {
    public let refresh: @Sendable () async throws -> Void

    public init(refresh: @escaping @Sendable () async throws -> Void) {
        self.refresh = refresh
    }

    public func shouldRetry(_ request: Request, response: RawResponse) async throws -> Bool {
        guard response.status == 401 else { return false }
        try await refresh()
        return true
    }
}
