import Synchronization

extension TrawlError {
    /// Advice that names a setting of the library (a timeout, a size limit, the CA bundle), as a code. The library
    /// words it in its own terms (`Timeouts.total`); a program with other names for those settings (the `trawl`
    /// command's flags) words every remedy its own way with ``wordRemedies(_:)``, so that no layer rewrites
    /// another layer's text.
    ///
    /// ```swift
    /// if error.remedy == .totalTimeout { print("raise --max-time") }
    /// TrawlError.wordRemedies { $0 == .totalTimeout ? "raise --max-time" : $0.libraryAdvice }
    /// ```
    public struct Remedy: Hashable, Sendable, CustomStringConvertible, CaseIterable {
        private enum Base: String, Hashable, Sendable, CaseIterable {
            case redirectLimit, totalTimeout, connectTimeout, stallTimeout, bodyLimit, decompressionRatio
            case http2PriorKnowledge, caBundle, defaultHeaders, proxyUnreachable, proxyAddress, proxyCredentials
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public var description: String { base.rawValue }
        public static var allCases: [Remedy] { Base.allCases.map(Remedy.init) }

        /// More redirects than allowed: raise the limit or fix the chain.
        public static let redirectLimit = Remedy(.redirectLimit)
        /// The total timeout passed: raise it or stream the body.
        public static let totalTimeout = Remedy(.totalTimeout)
        /// No connection within the connect timeout.
        public static let connectTimeout = Remedy(.connectTimeout)
        /// Data stopped flowing for the stall timeout.
        public static let stallTimeout = Remedy(.stallTimeout)
        /// The body is over the size limit.
        public static let bodyLimit = Remedy(.bodyLimit)
        /// The body decompresses past the ratio limit.
        public static let decompressionRatio = Remedy(.decompressionRatio)
        /// The answer is not HTTP/1: the server may speak only HTTP/2 over plain http.
        public static let http2PriorKnowledge = Remedy(.http2PriorKnowledge)
        /// The TLS handshake or the certificate check failed.
        public static let caBundle = Remedy(.caBundle)
        /// A default header of the client is invalid.
        public static let defaultHeaders = Remedy(.defaultHeaders)
        /// The proxy the client names refused the connection or could not be reached.
        public static let proxyUnreachable = Remedy(.proxyUnreachable)
        /// The proxy the client names has a host name that does not resolve.
        public static let proxyAddress = Remedy(.proxyAddress)
        /// The proxy the client names wants credentials.
        public static let proxyCredentials = Remedy(.proxyCredentials)

        /// The advice in the library's own terms (the settings of `Client`, `Request`, `Timeouts`, `TLSOptions`).
        public var libraryAdvice: String {
            switch base {
            case .redirectLimit: "raise RedirectPolicy.follow(max:) or fix the redirect chain on the server"
            case .totalTimeout: "raise Timeouts.total, or stream the body"
            case .connectTimeout: "check that the host is reachable, or raise Timeouts.connect"
            case .stallTimeout: "the server stopped sending; retry, or raise Timeouts.stall"
            case .bodyLimit: "raise Request.maxBodySize (or the client's maxBodySize), or stream the body"
            case .decompressionRatio:
                "raise Client.Configuration.maxDecompressionRatio if the body is known to be this repetitive, or "
                    + "request it uncompressed"
            case .http2PriorKnowledge:
                "if it speaks only HTTP/2 over plain http, use HTTPVersionPreference.http2PriorKnowledge"
            case .caBundle: "check the server's certificate and the CA bundle (TLSOptions.caFile)"
            case .defaultHeaders: "fix Client.Configuration.defaultHeaders"
            case .proxyUnreachable: "check that the proxy is up and Client.Configuration.proxy names it"
            case .proxyAddress: "check Client.Configuration.proxy"
            case .proxyCredentials: "the proxy wants credentials: set Client.Configuration.proxyCredentials"
            }
        }
    }

    private static let wording = Mutex<(@Sendable (Remedy) -> String)?>(nil)

    /// Words every remedy of every `TrawlError` (its `description`) for this process: a command-line tool names its
    /// flags instead of the library's settings. `nil` goes back to ``Remedy/libraryAdvice``. Set it once, before
    /// the work starts.
    public static func wordRemedies(_ wording: (@Sendable (Remedy) -> String)?) {
        self.wording.withLock { $0 = wording }
    }

    /// What ``wordRemedies(_:)`` installed.
    static var installedWording: (@Sendable (Remedy) -> String)? { wording.withLock { $0 } }
}
