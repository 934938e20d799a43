/// Every failure of `API.send`: what went wrong, the request, the response when there was one, and the
/// route's decoded error model when the error body parsed.
///
/// ```swift
/// struct GitHubError: Decodable, Sendable { let message: String }
/// do {
///     _ = try await api.send(route)          // route.ErrorModel == GitHubError
/// } catch let error as APIError<GitHubError> where error.kind == .status {
///     print(error.status ?? 0, error.errorModel?.message ?? error.bodyExcerpt)
/// }
/// ```
public struct APIError<ErrorModel: Decodable & Sendable>: Error, Sendable, CustomStringConvertible {
    /// The stage that failed.
    public enum Kind: Sendable, Hashable {
        /// The route could not be turned into a request (bad body, unreadable file).
        case invalidRoute
        /// An adapter threw; see `underlying`.
        case adapter
        /// The route requires authentication and no adapter added credentials.
        case authenticationRequired
        /// No response: connection, timeout, or a stub's error; see `underlying`.
        case transport
        /// The status was not acceptable to the route.
        case status
        /// The body did not decode as the route's output; see `underlying`.
        case decoding
    }

    public var kind: Kind
    /// The request as built and adapted (credentials included; do not log it as is).
    public var request: Request
    public var response: RawResponse?
    public var status: Int? { response?.status }
    /// The error body decoded, when it parsed as `ErrorModel`.
    public var errorModel: ErrorModel?
    /// The first 512 bytes of the body as text.
    public var bodyExcerpt: String
    public var underlying: (any Error & Sendable)?

    public init(
        kind: Kind, request: Request, response: RawResponse? = nil, errorModel: ErrorModel? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.request = request
        self.response = response
        self.errorModel = errorModel
        self.bodyExcerpt = response.map { String(decoding: $0.body.prefix(512), as: UTF8.self) } ?? ""
        self.underlying = underlying
    }

    /// What failed, where and why, with credentials hidden: the values of sensitive query parameters (the
    /// defaults of `Redaction` and the request's `sensitiveQueryParameters`) in every URL of the text, the
    /// underlying error's included.
    public var description: String {
        var text = "\(request.method) \(request.url): \(kind)"
        if let status { text += " (HTTP \(status))" }
        if let underlying { text += ": \(underlying)" }
        if kind == .status, !bodyExcerpt.isEmpty { text += ": \(bodyExcerpt)" }
        return Redaction.text(text, names: Redaction.queryNames(for: request))
    }
}
