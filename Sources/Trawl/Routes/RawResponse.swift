/// A buffered response as the route layer sees it: from the network or from a stub.
///
/// ```swift
/// let raw = try await api.response(for: UserRepos(user: "apple"))
/// print(raw.status, raw.headers["Link"] ?? "-", raw.body.count, raw.isStub)
/// ```
public struct RawResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    /// The URL that produced the response, after redirects.
    public var url: String
    public var body: [UInt8]
    /// The size of the body in bytes: `body.count`, except for the pages of a paginator, whose bodies were
    /// decoded into items as they streamed and are not kept (`body` is empty or an error body's excerpt).
    public var bodySize: Int
    /// Transfer timings; `nil` for stubs.
    public var timings: Timings?
    /// Whether a stub produced it.
    public var isStub: Bool

    public init(
        status: Int, headers: HTTPHeaders, url: String, body: [UInt8], bodySize: Int? = nil, timings: Timings? = nil,
        isStub: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.url = url
        self.body = body
        self.bodySize = bodySize ?? body.count
        self.timings = timings
        self.isStub = isStub
    }

    init(_ response: Response) {
        self.init(
            status: response.status, headers: response.headers, url: response.url, body: response.body,
            timings: response.timings)
    }

    /// The body as UTF-8 text (invalid sequences replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
