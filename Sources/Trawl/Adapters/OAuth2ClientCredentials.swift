import Foundation
import Synchronization
import TrawlEngine

/// OAuth 2.0 client credentials (RFC 6749 §4.4): asks `tokenURL` for an access token with the client's id and
/// secret, and adds it as `Authorization: Bearer …` to every request the route allows. Use one instance for all the
/// requests that share the credentials: it is also the API's retrier.
///
/// ```swift
/// let oauth = try OAuth2ClientCredentialsAdapter(
///     tokenURL: "https://auth.example.com/oauth/token", clientID: id, clientSecret: secret,
///     scope: "read:items", clientAuthentication: .basic, client: client)
/// api.adapters = [oauth]
/// api.retrier = oauth
/// ```
///
/// - Single flight: one token request serves every request waiting for a token; a request that arrives while
///   it is under way waits for it.
/// - The token is asked for again `refreshMargin` (at most half its lifetime) before its `expires_in` runs
///   out, and once when a request carrying it is answered 401 (the retrier; only the first 401 for a token
///   starts a request, later ones wait for its answer).
/// - The client id and secret go to `tokenURL` only, which must be `https` (an `http` URL only on a loopback
///   host: `localhost`, `127.0.0.0/8`, `::1`); the token request follows no redirect.
/// - A refusal (HTTP 4xx, such as 400 or 401 `invalid_client`) fails every later request with the same error
///   without asking again; a transport failure or a 5xx does not stick. Neither names the secret or the token.
public final class OAuth2ClientCredentialsAdapter: RequestAdapter, RequestRetrier, Sendable {
    /// How the client authenticates to the token endpoint (RFC 6749 §2.3.1).
    public enum ClientAuthentication: String, Sendable, Hashable {
        /// `Authorization: Basic` with the form-encoded id and secret (what servers must support).
        case basic
        /// `client_id` and `client_secret` in the form body.
        case post
    }

    public let tokenURL: String
    public let clientID: String
    public let scope: String?

    /// The principal its tokens authenticate (token URL, client and scope), the same for every token it gets: a
    /// response cache keys pages by it (`ResponseCacheKey(principal:)`), not by a token that changes each run.
    public var principal: String { "oauth2 \(tokenURL) \(clientID) \(scope ?? "")" }
    public let clientAuthentication: ClientAuthentication
    /// How long before its expiry a token is replaced (at most half its lifetime).
    public let refreshMargin: Duration
    let secret: String
    let client: Client
    private let state = Mutex(State())

    private struct State {
        var current: Token?
        var pending: Task<Token, any Error>?
        var refused: TrawlError?
        /// Tokens handed out, newest last (a few: they are redacted from text).
        var issued: [String] = []
    }

    struct Token: Sendable {
        var value: String
        var renewAt: ContinuousClock.Instant?
    }

    /// Throws `TrawlError` (`invalidURL`) when `tokenURL` is not `https` (or `http` on a loopback host).
    public init(
        tokenURL: String, clientID: String, clientSecret: String, scope: String? = nil,
        clientAuthentication: ClientAuthentication = .basic, refreshMargin: Duration = .seconds(30), client: Client
    ) throws {
        if let problem = Self.tokenURLProblem(tokenURL) {
            throw TrawlError(
                code: .invalidURL, message: problem,
                hint: "the token endpoint receives the client secret: use https (http only on localhost)",
                method: "POST", url: Redaction.url(tokenURL, names: Redaction.defaultQueryNames))
        }
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.secret = clientSecret
        self.scope = scope
        self.clientAuthentication = clientAuthentication
        self.refreshMargin = refreshMargin
        self.client = client
    }

    /// Why `url` may not be a token URL, or `nil`: it must be `https`, or `http` on a loopback host.
    public static func tokenURLProblem(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { return "the token URL '\(Redaction.url(url, names: Redaction.defaultQueryNames))' is not a URL" }
        if scheme == "https" { return nil }
        if scheme == "http", Loopback.isLoopback(host) { return nil }
        return "the token URL must be https (http only on a loopback host), not \(scheme)://\(host)"
    }

    // MARK: Adapter and retrier

    public func adapt(_ request: inout Request, context: inout AdapterContext) async throws {
        guard context.authentication != .none else { return }
        request.headers["Authorization"] = "Bearer \(try await token())"
        context.credentialsApplied = true
    }

    /// On 401 to a request that carried a token, drops that token (unless a newer one replaced it already) and
    /// says retry: the adapters run again and wait for the one new token.
    public func shouldRetry(_ request: Request, response: RawResponse) async throws -> Bool {
        guard response.status == 401, let sent = request.headers["Authorization"], sent.hasPrefix("Bearer ") else {
            return false
        }
        invalidate(String(sent.dropFirst("Bearer ".count)))
        return true
    }

    /// Forgets `token` when it is the current one, so that the next request asks for a new one.
    public func invalidate(_ token: String) {
        state.withLock { state in
            if state.current?.value == token { state.current = nil }
        }
    }

    /// `text` with every token this adapter handed out, and its secret, replaced by `REDACTED`.
    public func redact(_ text: String) -> String {
        var text = text
        let secrets = state.withLock { $0.issued } + [secret]
        for secret in secrets where secret.utf8.count >= 4 && text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: Redaction.placeholder)
        }
        return text
    }

    /// A valid access token: the current one, or the one being fetched, or a new one.
    public func token() async throws -> String {
        enum Next { case ready(String), wait(Task<Token, any Error>), refused(TrawlError) }
        let next: Next = state.withLock { state in
            if let refused = state.refused { return .refused(refused) }
            if let current = state.current, current.renewAt.map({ ContinuousClock.now < $0 }) ?? true {
                return .ready(current.value)
            }
            if let pending = state.pending { return .wait(pending) }
            let task = Task { try await self.fetchAndStore() }
            state.pending = task
            return .wait(task)
        }
        switch next {
        case .ready(let token): return token
        case .refused(let error): throw error
        case .wait(let task): return try await task.value.value
        }
    }

    private func fetchAndStore() async throws -> Token {
        do {
            let token = try await requestToken()
            state.withLock { state in
                state.current = token
                state.pending = nil
                state.issued.append(token.value)
                if state.issued.count > 8 { state.issued.removeFirst() }
            }
            return token
        } catch {
            state.withLock { state in
                state.pending = nil
                if let refusal = error as? TrawlError, let status = refusal.status, (400..<500).contains(status) {
                    state.refused = refusal
                }
            }
            throw error
        }
    }
}
