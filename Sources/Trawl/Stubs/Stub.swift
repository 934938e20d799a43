/// Sample data a route serves instead of the network: a response (status, headers, body, delay) or an
/// error. Stubbed requests pass through the same adapters, observers, decoding and errors as real ones.
///
/// ```swift
/// struct Me: GetRoute {
///     typealias Output = User
///     var path: RoutePath { "me" }
///     var stub: Stub? { .json(#"{"id": 1, "login": "octocat"}"#) }
/// }
/// var api = API(baseURL: "https://api.example.com")
/// api.stubbing = .always
/// let me = try await api.send(Me())     // no network
/// ```
public struct Stub: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Waited before the response is served.
    public var delay: Duration?
    /// Thrown instead of serving a response (as a transport failure would be).
    public var error: (any Error & Sendable)?

    public init(
        status: Int = 200, headers: HTTPHeaders = [:], body: [UInt8] = [], delay: Duration? = nil,
        error: (any Error & Sendable)? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delay = delay
        self.error = error
    }

    /// A JSON body with `Content-Type: application/json`.
    public static func json(_ text: String, status: Int = 200, delay: Duration? = nil) -> Stub {
        Stub(status: status, headers: ["Content-Type": "application/json"], body: Array(text.utf8), delay: delay)
    }

    /// A failure instead of a response.
    public static func failure(_ error: any Error & Sendable, delay: Duration? = nil) -> Stub {
        Stub(delay: delay, error: error)
    }
}

/// When an API serves stubs instead of the network.
///
/// ```swift
/// api.stubbing = .always            // every route must have a stub
/// api.stubbing = .whenAvailable     // routes with a stub use it, the others go out
/// ```
public enum StubBehavior: Sendable, Hashable {
    /// Always use the network.
    case never
    /// Use a route's stub when it has one.
    case whenAvailable
    /// Use stubs only; a route without one fails.
    case always
}
