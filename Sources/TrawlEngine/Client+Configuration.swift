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
        /// Send `Accept-Encoding: gzip, deflate` and decode such bodies transparently (with zlib, in bounded
        /// steps; a stream that ends before its trailer is `.truncated`). A request that sets `Accept-Encoding`
        /// itself gets the raw bytes.
        public var automaticDecompression: Bool = true
        /// A decoded body larger than this many times its compressed size (past its first MB) fails with
        /// `.tooLarge`: a decompression bomb. Deflate's own ceiling is about 1032; `nil` = no limit.
        public var maxDecompressionRatio: Int? = 500
        public var httpVersion: HTTPVersionPreference = .http1_1
        public var tls: TLSOptions = TLSOptions()
        /// The proxy for every request (`http://HOST:PORT`, `socks5h://HOST:PORT`), as curl's `-x`; `nil` = the
        /// proxy variables of the environment (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`), `""` = none.
        public var proxy: String?
        /// Hosts reached without the proxy (curl's `--noproxy`: comma-separated names, `*` for all).
        public var noProxy: String?
        /// `USER:PASSWORD` for the proxy (curl's `--proxy-user`); sent only to the proxy.
        public var proxyCredentials: String?
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
        /// HTTP/2 from the first byte, also over plain `http://` (h2c, no upgrade): only for servers known to
        /// speak it. libcurl 7.88 fails a second request on a reused cleartext HTTP/2 connection, so each such
        /// transfer gets a connection of its own.
        case http2PriorKnowledge
    }

    /// Certificate verification and client certificates. Verification is on unless a client explicitly opts out.
    ///
    /// ```swift
    /// var config = Client.Configuration()
    /// config.tls = TLSOptions(caFile: "/etc/internal/ca.pem")         // trust a private CA
    /// config.tls.clientCertificate = "client.pem"                     // mutual TLS
    /// config.tls.clientKey = "client.key"
    /// ```
    public struct TLSOptions: Sendable, Hashable {
        /// Verify the peer's certificate chain and that it names the host.
        public var verifyPeer: Bool = true
        /// A PEM bundle of trusted CAs instead of the system's.
        public var caFile: String?
        /// A directory of PEM CA certificates (hashed names, as `openssl rehash` makes them), searched as well.
        public var caPath: String?
        /// A PEM client certificate for servers that ask for one (mutual TLS); may hold the key as well.
        public var clientCertificate: String?
        /// The PEM private key of `clientCertificate` when it is in a file of its own.
        public var clientKey: String?

        public init(
            verifyPeer: Bool = true, caFile: String? = nil, caPath: String? = nil,
            clientCertificate: String? = nil, clientKey: String? = nil
        ) {
            self.verifyPeer = verifyPeer
            self.caFile = caFile
            self.caPath = caPath
            self.clientCertificate = clientCertificate
            self.clientKey = clientKey
        }

        /// Skips all certificate checks. Anyone on the path can read and change the traffic; the client
        /// logs a warning when it is created with this.
        public static let insecureSkipVerification = TLSOptions(verifyPeer: false)
    }
}
