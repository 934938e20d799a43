/// The HTTP version a response was carried over.
public enum HTTPVersion: String, Sendable, Hashable {
    case http1_0 = "HTTP/1.0"
    case http1_1 = "HTTP/1.1"
    case http2 = "HTTP/2"
    case http3 = "HTTP/3"
    case unknown = "HTTP/?"
}

/// When each phase of a transfer ended, measured from its start (libcurl's `CURLINFO_*_TIME_T`).
public struct Timings: Sendable, Hashable {
    /// Name resolution done.
    public var dns: Duration
    /// TCP connection established (zero when a kept-alive connection was reused).
    public var connect: Duration
    /// TLS handshake done (zero for plain HTTP).
    public var tls: Duration
    /// First response byte received.
    public var firstByte: Duration
    /// Whole transfer done; `nil` while a streamed body is still arriving.
    public var total: Duration?

    /// All phases zero: for responses that never touched the network (stubs, tests).
    public static let zero = Timings(dns: .zero, connect: .zero, tls: .zero, firstByte: .zero, total: .zero)

    public init(dns: Duration, connect: Duration, tls: Duration, firstByte: Duration, total: Duration?) {
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.firstByte = firstByte
        self.total = total
    }
}

/// Status line, headers and connection facts of a response.
public struct ResponseHead: Sendable {
    public var status: Int
    /// Every header of the final response, in order, repeats kept.
    public var headers: HTTPHeaders
    /// The URL that produced this response (after redirects).
    public var url: String
    public var httpVersion: HTTPVersion
    /// The peer's IP address and port.
    public var remoteIP: String?
    public var remotePort: Int
    /// `ip:port` of the peer (`[ip]:port` for IPv6).
    public var remoteAddress: String? {
        guard let remoteIP else { return nil }
        return remoteIP.utf8.contains(UInt8(ascii: ":")) ? "[\(remoteIP)]:\(remotePort)" : "\(remoteIP):\(remotePort)"
    }
    public var timings: Timings
    /// URLs of the redirects followed to get here, in order (empty when none).
    public var redirects: [String]
    /// The status line as received, without CR LF (`HTTP/1.1 404 Not Found`), when the engine saw one.
    public var statusLine: String?
    /// Bytes of the final head as received: status line, header lines and the empty line, CR LF included.
    public var headerSize: Int = 0

    /// `true` for 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// A head built by hand, for stubs and tests (the engine builds real ones).
    public init(
        status: Int, headers: HTTPHeaders = [:], url: String, httpVersion: HTTPVersion = .http1_1,
        remoteIP: String? = nil, remotePort: Int = 0, timings: Timings = .zero, redirects: [String] = []
    ) {
        self.status = status
        self.headers = headers
        self.url = url
        self.httpVersion = httpVersion
        self.remoteIP = remoteIP
        self.remotePort = remotePort
        self.timings = timings
        self.redirects = redirects
    }
}

/// A response whose body was buffered in memory (within the request's size limit).
///
/// ```swift
/// let response = try await client.send(Request(url: "http://127.0.0.1:8080/items"))
/// print(response.status, response.headers["Content-Type"] ?? "-", response.body.count)
/// print(response.timings.total ?? .zero)
/// ```
public struct Response: Sendable {
    public var head: ResponseHead
    public var body: [UInt8]

    /// ```swift
    /// let stub = Response(head: ResponseHead(status: 200, url: "http://stub/items"), body: Array("[]".utf8))
    /// ```
    public init(head: ResponseHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
    public var url: String { head.url }
    public var httpVersion: HTTPVersion { head.httpVersion }
    public var timings: Timings { head.timings }

    /// The body decoded as UTF-8 (invalid sequences replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A response whose body arrives as an `AsyncSequence` of chunks.
///
/// ```swift
/// let response = try await client.stream(Request(url: bigExportURL))
/// for try await chunk in response.body {
///     try file.write(contentsOf: chunk)       // the transfer pauses while this is slow
/// }
/// ```
public struct StreamingResponse: Sendable {
    public var head: ResponseHead
    public var body: ResponseBody

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
}
