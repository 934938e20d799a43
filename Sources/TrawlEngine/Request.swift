import Foundation

/// An HTTP method. Any token is allowed; the common ones have names.
///
/// ```swift
/// let request = Request(url: "https://api.example.com/items", method: .post, body: .string("{}"))
/// ```
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }

    public static let get: HTTPMethod = "GET"
    public static let head: HTTPMethod = "HEAD"
    public static let post: HTTPMethod = "POST"
    public static let put: HTTPMethod = "PUT"
    public static let patch: HTTPMethod = "PATCH"
    public static let delete: HTTPMethod = "DELETE"
    public static let options: HTTPMethod = "OPTIONS"
    public static let trace: HTTPMethod = "TRACE"
    public static let connect: HTTPMethod = "CONNECT"

    /// Whether the method is an RFC 9110 token (`tchar`s only: letters, digits and ``!#$%&'*+-.^_`|~``). Any other
    /// method is refused before anything is sent: a space, CR or LF in it would rewrite the request line.
    ///
    /// ```swift
    /// HTTPMethod(rawValue: "PROPFIND").isToken   // true
    /// HTTPMethod(rawValue: "GET /x").isToken     // false
    /// ```
    public var isToken: Bool { Self.isToken(rawValue) }

    /// Whether `text` is an RFC 9110 token, as a method must be.
    public static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(HeaderValidation.isTokenByte)
    }

    /// The method quoted for a message, control characters escaped: `'GET\r\nX'`.
    static func describe(_ text: String) -> String {
        let escaped = text.unicodeScalars.map { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }
        return "'" + escaped.prefix(64).joined() + (escaped.count > 64 ? "…" : "") + "'"
    }
}

/// Bytes done and expected in each direction, reported while a transfer runs.
public struct TransferProgress: Sendable, Hashable {
    /// Body bytes received so far (after decoding of `Content-Encoding`, as libcurl counts them).
    public var received: Int64
    /// Expected body bytes to receive, when the server said (`Content-Length`).
    public var expectedToReceive: Int64?
    public var sent: Int64
    public var expectedToSend: Int64?

    public init(received: Int64, expectedToReceive: Int64?, sent: Int64, expectedToSend: Int64?) {
        self.received = received
        self.expectedToReceive = expectedToReceive
        self.sent = sent
        self.expectedToSend = expectedToSend
    }
}

/// One HTTP request.
///
/// ```swift
/// var request = Request(url: "https://api.example.com/items?page=2")
/// request.headers.add("Authorization", "Bearer \(token)")
/// request.timeouts.total = .seconds(30)
/// request.onProgress = { progress in print(progress.received) }
/// let response = try await client.send(request)
/// ```
public struct Request: Sendable {
    public var url: String
    public var method: HTTPMethod
    public var headers: HTTPHeaders
    public var body: RequestBody?
    /// Overrides the client's timeouts for this request; `nil` fields fall back to the client's.
    public var timeouts: Timeouts.Override
    /// Largest body `Client.send` will buffer; `nil` uses the client's `maxBodySize`.
    public var maxBodySize: Int?
    /// Header names (any case) removed whenever a redirect changes scheme, host or port, in addition to
    /// `Authorization`, `Cookie`, `Proxy-Authorization` and the client's `sensitiveHeaders`.
    public var sensitiveHeaders: Set<String>
    /// Query parameter names (any case) whose values are credentials: loggers and error descriptions hide them
    /// (Trawl's `APIKeyAdapter(.query(name))` adds its name here).
    public var sensitiveQueryParameters: Set<String>
    /// Overrides the client's redirect policy for this request.
    public var redirects: RedirectPolicy?
    /// Called on the engine's loop thread whenever the byte counts change. Keep it short.
    public var onProgress: (@Sendable (TransferProgress) -> Void)?
    /// Header names whose default is not sent: neither the client's default headers nor libcurl's own (`Accept`,
    /// `User-Agent`, …), as curl's `-H 'Name:'` does.
    public var removedHeaders: Set<String> = []
    /// Header names (lowercased) removed after merging the client's default headers: set on redirect
    /// hops that left the original origin, so defaults cannot reintroduce credentials.
    package var strippedHeaders: Set<String> = []
    /// Origins a redirect may reach with the credentials (a walk's `--trusted-origin`s): a hop to one of them is
    /// not stripped.
    package var trustedOrigins: Set<Origin> = []
    /// The body holds a secret (a job's `${NAME}`): no page or redirect hop on another origin is sent with it.
    package var bodyHoldsSecret = false

    public init(
        url: String,
        method: HTTPMethod = .get,
        headers: HTTPHeaders = [:],
        body: RequestBody? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeouts = Timeouts.Override()
        self.maxBodySize = nil
        self.sensitiveHeaders = []
        self.sensitiveQueryParameters = []
        self.redirects = nil
        self.onProgress = nil
    }
}

/// Where a request body comes from.
///
/// ```swift
/// Request(url: url, method: .post, body: .bytes(Array(json.utf8), contentType: "application/json"))
/// Request(url: url, method: .put, body: .file("/data/export.jsonl"))
/// Request(url: url, method: .post, body: .stream(chunks, length: nil))   // chunked upload
/// ```
public struct RequestBody: Sendable {
    enum Source: Sendable {
        case bytes([UInt8])
        case file(String)
        case stream(any AsyncSequence<[UInt8], any Error> & Sendable, length: Int64?)
    }

    let source: Source
    /// Sent as `Content-Type` unless the request's headers already name one.
    public var contentType: String?

    init(source: Source, contentType: String?) {
        self.source = source
        self.contentType = contentType
    }

    public static func bytes(_ bytes: [UInt8], contentType: String? = nil) -> RequestBody {
        RequestBody(source: .bytes(bytes), contentType: contentType)
    }

    public static func data(_ data: Data, contentType: String? = nil) -> RequestBody {
        RequestBody(source: .bytes([UInt8](data)), contentType: contentType)
    }

    public static func string(_ string: String, contentType: String? = nil) -> RequestBody {
        RequestBody(source: .bytes(Array(string.utf8)), contentType: contentType)
    }

    /// The file is read while it is sent, never loaded whole.
    public static func file(_ path: String, contentType: String? = nil) -> RequestBody {
        RequestBody(source: .file(path), contentType: contentType)
    }

    /// Chunks from any async sequence, sent as they arrive (chunked encoding when `length` is `nil`).
    /// A stream can be sent once: a redirect that must resend the body (307/308) fails with
    /// `TrawlError.Code.redirectNotReplayable`.
    public static func stream<S: AsyncSequence<[UInt8], any Error> & Sendable>(
        _ chunks: S, length: Int64? = nil, contentType: String? = nil
    ) -> RequestBody {
        RequestBody(source: .stream(chunks, length: length), contentType: contentType)
    }

    /// The body's bytes when it is held in memory (not a file or a stream): what body pagination edits.
    package var bytes: [UInt8]? {
        if case .bytes(let bytes) = source { return bytes }
        return nil
    }

    /// Whether the body can be sent again (for a redirect or a retry): `false` for a one-shot stream.
    public var isReplayable: Bool {
        if case .stream = source { return false }
        return true
    }
}
