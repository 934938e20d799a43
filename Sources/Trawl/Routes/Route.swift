import TrawlJSON

/// One endpoint of an API. Only `path` is required; every other member has a default, and a
/// method-fixing protocol (`GetRoute`, `PostRoute`, ...) sets `method`:
///
/// ```swift
/// struct Repo: Decodable, Sendable { let id: Int; let name: String }
///
/// struct UserRepos: GetRoute {
///     typealias Output = [Repo]
///     let user: String
///     var path: RoutePath { "users/\(user)/repos" }
///     var query: QueryParameters { ["per_page": 100] }
/// }
///
/// let api = API(baseURL: "https://api.github.com", headers: ["Accept": "application/vnd.github+json"])
/// let repos = try await api.send(UserRepos(user: "apple"))
/// ```
///
/// An enum with associated values conforms the same way, switching on `self` in `path` and `method`.
/// A protocol refining `Route` can give a whole API its base URL, error model or decoder.
public protocol Route: Sendable {
    /// What `API.send` returns: decoded from the payload at `keyPath`. Defaults to the dynamic `JSONValue`.
    associatedtype Output: Decodable & Sendable = JSONValue
    /// The body of an error response, decoded when it parses. Defaults to `NoErrorModel`.
    associatedtype ErrorModel: Decodable & Sendable = NoErrorModel

    /// Overrides the API's base URL.
    var baseURL: String? { get }
    var path: RoutePath { get }
    var method: HTTPMethod { get }
    /// Always sent in the URL, in order.
    var query: QueryParameters { get }
    /// Placed by `parameterEncoding`: the query, a JSON object or a form body.
    var parameters: QueryParameters { get }
    var parameterEncoding: ParameterEncoding { get }
    /// How list parameters are written (default `.repeated`).
    var arrayEncoding: ArrayEncoding { get }
    /// Added after the API's shared headers, replacing those of the same name.
    var headers: HTTPHeaders { get }
    var body: RouteBody { get }
    /// The total time allowed for one attempt; `nil` uses the client's.
    var timeout: Duration? { get }
    /// Where the payload sits in the response body (`nil`: the whole body).
    var keyPath: JSONKeyPath? { get }
    /// Whether authentication adapters add credentials (default `.allowed`).
    var authentication: AuthRequirement { get }
    /// Decodes the payload instead of the API's decoder.
    var decoder: (any PayloadDecoding)? { get }
    /// Sample data served instead of the network when stubbing is on.
    var stub: Stub? { get }
    /// Overrides the API's stubbing for this route.
    var stubbing: StubBehavior? { get }

    /// Turns an accepted response body into `Output`. By default: `decoder` at `keyPath`; for
    /// `EmptyResponse`, nothing is parsed at all.
    func decodeOutput(_ body: [UInt8], using decoder: any PayloadDecoding) throws -> Output
    /// Whether `status` counts as success (default: 2xx).
    func isAcceptable(status: Int) -> Bool
    /// The last chance to change the request, after the adapters, before it is sent.
    func adjust(_ request: inout Request) throws
}

extension Route {
    public var baseURL: String? { nil }
    public var method: HTTPMethod { .get }
    public var query: QueryParameters { [:] }
    public var parameters: QueryParameters { [:] }
    public var parameterEncoding: ParameterEncoding { .automatic }
    public var arrayEncoding: ArrayEncoding { .repeated }
    public var headers: HTTPHeaders { [:] }
    public var body: RouteBody { .none }
    public var timeout: Duration? { nil }
    public var keyPath: JSONKeyPath? { nil }
    public var authentication: AuthRequirement { .allowed }
    public var decoder: (any PayloadDecoding)? { nil }
    public var stub: Stub? { nil }
    public var stubbing: StubBehavior? { nil }
    public func isAcceptable(status: Int) -> Bool { (200..<300).contains(status) }
    public func decodeOutput(_ body: [UInt8], using decoder: any PayloadDecoding) throws -> Output {
        try decoder.decode(Output.self, from: body, at: keyPath)
    }
    public func adjust(_ request: inout Request) throws {}
}

extension Route where Output == EmptyResponse {
    public func decodeOutput(_ body: [UInt8], using decoder: any PayloadDecoding) throws -> Output {
        EmptyResponse()
    }
}

/// Whether a route is sent with credentials.
///
/// ```swift
/// struct Login: PostRoute { var path: RoutePath { "login" }; var authentication: AuthRequirement { .none } }
/// ```
public enum AuthRequirement: Sendable, Hashable {
    /// Never: authentication adapters leave the request alone.
    case none
    /// When credentials are at hand.
    case allowed
    /// Always: the request fails before sending when no adapter could add credentials.
    case required
}

/// The error model of routes that do not name one: decodes from anything.
///
/// ```swift
/// struct Ping: GetRoute { var path: RoutePath { "ping" } }   // ErrorModel == NoErrorModel
/// ```
public struct NoErrorModel: Decodable, Sendable, Hashable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
}

/// A response body the caller does not need: decoding always succeeds, whatever the body.
///
/// ```swift
/// struct DeleteRepo: DeleteRoute { typealias Output = EmptyResponse; var path: RoutePath { "repos/x" } }
/// ```
public struct EmptyResponse: Decodable, Sendable, Hashable {
    public init() {}
    public init(from decoder: any Decoder) throws {}
}
