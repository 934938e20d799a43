import Foundation

/// An API: base URL, shared headers, the client, and the adapter chain, retrier, observers, decoder and
/// stubbing every route sent through it uses.
///
/// ```swift
/// var api = API(baseURL: "https://api.github.com", headers: ["Accept": "application/vnd.github+json"])
/// api.adapters = [BearerTokenAdapter { await tokens.current }]
/// api.retrier = RefreshOnUnauthorized { try await tokens.refresh() }
/// api.observers = [LoggingObserver(logger: Logger(label: "github"))]
/// let repos = try await api.send(UserRepos(user: "apple"))
/// ```
public struct API: Sendable {
    public var baseURL: String
    /// Sent with every route; a route's own headers replace those of the same name.
    public var headers: HTTPHeaders
    public var client: Client
    /// Run in order on every request; the first error stops it.
    public var adapters: [any RequestAdapter]
    public var retrier: (any RequestRetrier)?
    /// How often a request (a `send`, or one page of a paginated call) is tried when it fails in a way that may
    /// pass (a connection failure, a timeout, 408, 429, 5xx), and how long to wait between tries; every try
    /// prepares the request again (adapters, `adjust`, the authentication check). Default: no retry.
    ///
    /// ```swift
    /// api.retryPolicy = RetryPolicy(attempts: 3, backoff: .milliseconds(200))
    /// ```
    public var retryPolicy = RetryPolicy.never
    public var observers: [any RequestObserver]
    /// Decodes payloads unless a route names its own decoder.
    public var decoder: any PayloadDecoding
    /// Makes the encoder for JSON bodies and JSON parameters unless a route's body names one.
    public var makeJSONEncoder: @Sendable () -> JSONEncoder
    public var stubbing: StubBehavior
    /// Defaults of `paginator`, `pages(of:)` and `items(of:)`; `serial` forces serial page fetching.
    public var pagination = PaginationSettings()
    /// Conditional requests for `send` and every page (see ``ResponseCache``); `nil`: none.
    public var cache: (any ResponseCache)?

    public init(
        baseURL: String, headers: HTTPHeaders = [:], client: Client = Client(),
        adapters: [any RequestAdapter] = [], retrier: (any RequestRetrier)? = nil,
        observers: [any RequestObserver] = [], decoder: any PayloadDecoding = StreamingPayloadDecoder(),
        makeJSONEncoder: @escaping @Sendable () -> JSONEncoder = { JSONEncoder() }, stubbing: StubBehavior = .never
    ) {
        self.baseURL = baseURL
        self.headers = headers
        self.client = client
        self.adapters = adapters
        self.retrier = retrier
        self.observers = observers
        self.decoder = decoder
        self.makeJSONEncoder = makeJSONEncoder
        self.stubbing = stubbing
    }

    /// The request a route stands for, before adapters run: URL, headers, body and timeout.
    ///
    /// - Throws: encoding errors of a JSON body, file errors of a multipart body.
    public func request(for route: some Route) throws -> Request {
        let placeBody: ParameterEncoding
        switch route.parameterEncoding {
        case .automatic:
            let queryMethods: Set<HTTPMethod> = [.get, .head, .delete]
            placeBody = queryMethods.contains(route.method) || !route.body.isNone ? .query : .json
        case let other:
            placeBody = route.body.isNone ? other : .query
        }
        var query = route.query
        if placeBody == .query { query = query.merging(route.parameters) }
        let url = URLBuilder.url(
            base: route.baseURL ?? baseURL, path: route.path, query: query, arrays: route.arrayEncoding)
        var request = Request(url: url, method: route.method, headers: headers)
        for field in route.headers {
            request.headers.remove(field.name)
        }
        for (name, value) in route.headers {
            request.headers.add(name, value)
        }
        if let timeout = route.timeout { request.timeouts.total = timeout }
        request.body = try body(for: route, parameters: placeBody == .query ? nil : (placeBody, route.parameters))
        return request
    }

    private func body(
        for route: some Route, parameters: (ParameterEncoding, QueryParameters)?
    ) throws -> RequestBody? {
        switch route.body.storage {
        case .none:
            guard let (encoding, values) = parameters else { return nil }
            if encoding == .form {
                return .string(
                    URLBuilder.formBody(values, arrays: route.arrayEncoding),
                    contentType: "application/x-www-form-urlencoded")
            }
            return .bytes(values.orderedJSON, contentType: "application/json")
        case .json(let value, let encoder):
            let data = try (encoder ?? makeJSONEncoder)().encode(value)
            return .data(data, contentType: "application/json")
        case .form(let values):
            return .string(
                URLBuilder.formBody(values, arrays: route.arrayEncoding),
                contentType: "application/x-www-form-urlencoded")
        case .multipart(let form):
            return try form.requestBody()
        case .raw(let body):
            return body
        }
    }
}
