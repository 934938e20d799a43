/// Every failure the engine reports: what happened, to which request, and what to do about it.
///
/// Compare `code` to the static members to branch on the kind; print the error for a person.
///
/// ```swift
/// do {
///     _ = try await client.send(request)
/// } catch let error as TrawlError where error.code == .timeout {
///     print("retrying: \(error)")
/// }
/// ```
public struct TrawlError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. New kinds may be added; switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidURL, unsupportedScheme, invalidHeader, invalidRequest
            case dnsFailed, connectFailed, tlsFailed, timeout, stalled
            case tooLarge, truncated, receiveFailed, sendFailed, decodingFailed
            case tooManyRedirects, redirectLoop, redirectNotReplayable
            case cancelled, bodySourceFailed, transport
            case unexpectedStatus, invalidBody
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        public var description: String { base.rawValue }

        /// The URL could not be parsed.
        public static let invalidURL = Code(.invalidURL)
        /// A scheme other than http or https, in the request or in a redirect.
        public static let unsupportedScheme = Code(.unsupportedScheme)
        /// A header name or value with CR, LF, NUL or another control character; nothing was sent.
        public static let invalidHeader = Code(.invalidHeader)
        /// The request cannot be sent as built (for example a body on a HEAD request).
        public static let invalidRequest = Code(.invalidRequest)
        public static let dnsFailed = Code(.dnsFailed)
        public static let connectFailed = Code(.connectFailed)
        /// Handshake or certificate verification failed.
        public static let tlsFailed = Code(.tlsFailed)
        /// The connect or total timeout passed.
        public static let timeout = Code(.timeout)
        /// Data stopped flowing for longer than the stall timeout.
        public static let stalled = Code(.stalled)
        /// The body exceeded the size limit (counted after decompression).
        public static let tooLarge = Code(.tooLarge)
        /// The body ended before the length the server announced.
        public static let truncated = Code(.truncated)
        /// The connection failed while receiving (reset, malformed chunked encoding).
        public static let receiveFailed = Code(.receiveFailed)
        public static let sendFailed = Code(.sendFailed)
        /// The `Content-Encoding` could not be decoded.
        public static let decodingFailed = Code(.decodingFailed)
        public static let tooManyRedirects = Code(.tooManyRedirects)
        public static let redirectLoop = Code(.redirectLoop)
        /// A 307/308 redirect asked to resend a one-shot stream body.
        public static let redirectNotReplayable = Code(.redirectNotReplayable)
        /// The calling task was cancelled, or the body stream was dropped.
        public static let cancelled = Code(.cancelled)
        /// The request body's file or stream failed.
        public static let bodySourceFailed = Code(.bodySourceFailed)
        /// The status was not the one the caller expected (a 5xx instead of the JSON collection).
        public static let unexpectedStatus = Code(.unexpectedStatus)
        /// The body arrived but is not what the caller expected (malformed JSON, an HTML error page);
        /// `underlying` holds the parser's error with its byte offset.
        public static let invalidBody = Code(.invalidBody)
        /// Any other libcurl failure; see `curlCode` and `curlMessage`.
        public static let transport = Code(.transport)
    }

    public var code: Code
    /// What happened, in a sentence.
    public var message: String
    /// What a person can do about it, when there is a useful suggestion.
    public var hint: String?
    /// The advice as a code, when it names a setting of the library (then `hint` is its ``Remedy/libraryAdvice``
    /// and `description` words it as ``wordRemedies(_:)`` says).
    public var remedy: Remedy?
    public var method: String
    public var url: String
    /// Status and headers, when a response head had arrived.
    public var status: Int?
    public var headers: HTTPHeaders?
    /// The first bytes of the body received (at most 512).
    public var bodyExcerpt: [UInt8]
    /// libcurl's `CURLcode` (or `CURLMcode`) and the text of its error buffer, when libcurl reported it.
    public var curlCode: Int?
    public var curlMessage: String?
    /// The error that caused this one (a body stream's error, for example).
    public var underlying: (any Error & Sendable)?

    public init(
        code: Code,
        message: String,
        hint: String? = nil,
        remedy: Remedy? = nil,
        method: String,
        url: String,
        status: Int? = nil,
        headers: HTTPHeaders? = nil,
        bodyExcerpt: [UInt8] = [],
        curlCode: Int? = nil,
        curlMessage: String? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.hint = hint ?? remedy?.libraryAdvice
        self.remedy = remedy
        self.method = method
        self.url = url
        self.status = status
        self.headers = headers
        self.bodyExcerpt = bodyExcerpt
        self.curlCode = curlCode
        self.curlMessage = curlMessage
        self.underlying = underlying
    }

    public var description: String { described(remedies: Self.installedWording) }

    /// The description with the remedy worded by `remedies` (`nil`: ``Remedy/libraryAdvice``).
    public func described(remedies: (@Sendable (Remedy) -> String)?) -> String {
        var text = "\(method) \(url): \(message)"
        if let status, !message.contains("HTTP \(status)") { text += " (after HTTP \(status))" }
        if let curlCode {
            let detail = curlMessage.map { $0.isEmpty ? "" : ": \($0)" } ?? ""
            text += " [curl \(curlCode)\(detail)]"
        }
        // An underlying error the message already quotes (a JSON error: "… is not the expected JSON: …") is not
        // repeated.
        if let underlying, case let said = "\(underlying)", !message.contains(said) { text += " [\(said)]" }
        if let hint = remedy.flatMap({ remedies?($0) }) ?? hint ?? remedy?.libraryAdvice { text += ". \(hint)" }
        return text
    }
}
