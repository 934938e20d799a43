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
    /// When set, picks the stub for each request instead of this one (see ``perRequest(_:)``).
    public var responder: (@Sendable (Request) -> Stub)?

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

    /// The body as UTF-8 text (invalid sequences replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// A JSON body with `Content-Type: application/json`.
    public static func json(_ text: String, status: Int = 200, delay: Duration? = nil) -> Stub {
        Stub(status: status, headers: ["Content-Type": "application/json"], body: Array(text.utf8), delay: delay)
    }

    /// A failure instead of a response.
    public static func failure(_ error: any Error & Sendable, delay: Duration? = nil) -> Stub {
        Stub(delay: delay, error: error)
    }

    /// A stub that answers each request with the one `respond` picks for it: each page of a paginated walk
    /// differently, for example, so that a stubbed walk ends as a real one would.
    ///
    /// ```swift
    /// var stub: Stub? {
    ///     .perRequest { request in
    ///         switch request.queryValue("cursor") {
    ///         case nil: .json(#"{"data": [{"id": 1}], "next_cursor": "c2"}"#)
    ///         case "c2": .json(#"{"data": [{"id": 2}], "next_cursor": ""}"#)
    ///         default: .json(#"{"message": "unknown cursor"}"#, status: 400)
    ///         }
    ///     }
    /// }
    /// ```
    public static func perRequest(_ respond: @escaping @Sendable (Request) -> Stub) -> Stub {
        var stub = Stub()
        stub.responder = respond
        return stub
    }

    /// One stub per page number, read from the query parameter `param` (the first page is `pages[0]` and is
    /// also served when the parameter is absent); a page past the end is answered 404 with a JSON error
    /// saying so. For a `.page()` walk without a total, end the list with a page without items.
    ///
    /// ```swift
    /// var stub: Stub? {
    ///     .pages([.json(#"{"items": [1, 2]}"#), .json(#"{"items": [3]}"#), .json(#"{"items": []}"#)])
    /// }
    /// ```
    public static func pages(_ pages: [Stub], param: String = "page", start: Int = 1) -> Stub {
        perRequest { request in
            let number = request.queryValue(param).map { Int($0) } ?? start
            guard let number, number >= start, number - start < pages.count else {
                return .json(
                    #"{"error": "no stub for \#(param)=\#(request.queryValue(param) ?? "")"}"#, status: 404)
            }
            return pages[number - start]
        }
    }

    /// The stub that answers `request`: the responder's pick, else this one (what stubbing serves; handy to
    /// combine stubs in a ``perRequest(_:)`` closure).
    ///
    /// ```swift
    /// Stub.pages([.json("[1]"), .json("[]")]).resolved(for: Request(url: "https://x.test/a?page=2")).bodyText
    /// // "[]"
    /// ```
    public func resolved(for request: Request) -> Stub {
        responder.map { $0(request) } ?? self
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
