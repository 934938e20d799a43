import Logging

extension Client {
    /// Settings fixed for the life of a client.
    ///
    /// ```swift
    /// var config = Client.Configuration()
    /// config.maxConcurrentTransfers = 128
    /// config.maxConnectionsPerHost = 16
    /// config.defaultHeaders = ["Accept": "application/json"]
    /// config.sensitiveHeaders = ["x-api-key"]
    /// let client = Client(configuration: config)
    /// ```
    public struct Configuration: Sendable {
        /// Transfers running at once; more wait in the client's queue (their timeouts not running).
        public var maxConcurrentTransfers: Int = 64
        /// Transfers (and so connections) running at once to one scheme+host+port; `nil` = no per-host cap.
        public var maxConnectionsPerHost: Int?
        /// Sent with every request unless the request sets the same name.
        public var defaultHeaders: HTTPHeaders = [:]
        public var userAgent: String = "trawl/0.1"
        public var timeouts: Timeouts = Timeouts()
        /// Largest body `send` buffers (decoded bytes). Streams are not limited unless the request sets one.
        public var maxBodySize: Int = 64 << 20
        /// Bytes a streamed body may hold ahead of a slow consumer before the transfer pauses.
        public var streamBufferSize: Int = 1 << 20
        public var redirects: RedirectPolicy = .default
        /// Header names (any case) stripped on redirects to another origin, beyond the credential headers.
        public var sensitiveHeaders: Set<String> = []
        /// Send `Accept-Encoding` for every encoding this libcurl decodes (gzip, deflate, br, zstd) and
        /// decode transparently. A request that sets `Accept-Encoding` itself gets the raw bytes.
        public var automaticDecompression: Bool = true
        public var httpVersion: HTTPVersionPreference = .http1_1
        public var tls: TLSOptions = TLSOptions()
        /// Loop threads, each driving its own libcurl multi handle with its own connections and DNS cache.
        /// One (the default) drives thousands of transfers; add a second only when the loop thread itself is
        /// the bottleneck, which on loopback means tens of thousands of small requests per second.
        ///
        /// With more than one, `maxConcurrentTransfers` is split between the loops (each runs its share);
        /// with a per-host cap, every transfer to one origin goes through the same loop, so the cap holds
        /// exactly. A task running on one of the client's `executors` sends through that executor's loop
        /// (no thread hop); other callers are spread round-robin.
        public var loopThreads: Int = 1
        /// Where the client logs warnings (insecure TLS) and debug detail.
        public var logger: Logger = Logger(label: "trawl.engine")

        public init() {}
    }

    /// Which HTTP version to negotiate.
    public enum HTTPVersionPreference: Sendable, Hashable {
        /// HTTP/1.1 with keep-alive (the fastest on loopback and for many small requests).
        case http1_1
        /// HTTP/2 over TLS via ALPN, multiplexing requests on one connection (`CURLOPT_PIPEWAIT`);
        /// plain `http://` URLs still use HTTP/1.1 (cleartext HTTP/2 is broken in libcurl 7.88).
        case http2
    }

    /// Certificate verification. On unless a client explicitly opts out.
    public struct TLSOptions: Sendable, Hashable {
        /// Verify the peer's certificate chain and that it names the host.
        public var verifyPeer: Bool = true
        /// A PEM bundle of trusted CAs instead of the system's.
        public var caFile: String?

        public init(verifyPeer: Bool = true, caFile: String? = nil) {
            self.verifyPeer = verifyPeer
            self.caFile = caFile
        }

        /// Skips all certificate checks. Anyone on the path can read and change the traffic; the client
        /// logs a warning when it is created with this.
        public static let insecureSkipVerification = TLSOptions(verifyPeer: false)
    }
}
