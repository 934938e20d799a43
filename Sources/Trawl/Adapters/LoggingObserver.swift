import Logging

/// Logs each request through swift-log: method, URL, status, duration and sizes, with credentials
/// redacted in URLs and headers (the defaults of `Redaction` plus each request's sensitive headers).
///
/// ```swift
/// var logger = Logger(label: "github")
/// logger.logLevel = .debug
/// api.observers = [LoggingObserver(logger: logger, headersLevel: .debug)]
/// // info: GET https://api.github.com/user?access_token=REDACTED -> 200 in 84ms, 2311 bytes
/// ```
public struct LoggingObserver: RequestObserver {
    public var logger: Logger
    /// The level of the one line per request.
    public var level: Logger.Level
    /// The level at which request and response headers are logged too (redacted); `nil` never.
    public var headersLevel: Logger.Level?
    public var redactedHeaders: Set<String>
    public var redactedQueryParameters: Set<String>

    public init(
        logger: Logger, level: Logger.Level = .info, headersLevel: Logger.Level? = .debug,
        redactedHeaders: Set<String> = Redaction.defaultHeaderNames,
        redactedQueryParameters: Set<String> = Redaction.defaultQueryNames
    ) {
        self.logger = logger
        self.level = level
        self.headersLevel = headersLevel
        self.redactedHeaders = Set(redactedHeaders.map { $0.lowercased() })
        self.redactedQueryParameters = Set(redactedQueryParameters.map { $0.lowercased() })
    }

    public func willSend(_ request: Request) {
        guard let headersLevel else { return }
        logger.log(
            level: headersLevel, "\(request.method) \(url(request.url)) sending",
            metadata: ["headers": .string(headers(request.headers, request).description)])
    }

    public func didReceive(_ response: RawResponse, for request: Request, duration: Duration) {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let source = response.isStub ? " (stub)" : ""
        let outcome = "\(response.status) in \(milliseconds)ms, \(response.bodySize) bytes\(source)"
        logger.log(level: level, "\(request.method) \(url(request.url)) -> \(outcome)")
        if let headersLevel {
            logger.log(
                level: headersLevel, "\(request.method) \(url(response.url)) response headers",
                metadata: ["headers": .string(headers(response.headers, request).description)])
        }
    }

    public func didFail(_ error: any Error, for request: Request) {
        logger.log(level: level, "\(request.method) \(url(request.url)) failed: \(redact(String(describing: error)))")
    }

    private func url(_ text: String) -> String {
        Redaction.url(text, names: redactedQueryParameters)
    }

    private func headers(_ fields: HTTPHeaders, _ request: Request) -> HTTPHeaders {
        Redaction.headers(fields, names: redactedHeaders.union(request.sensitiveHeaders.map { $0.lowercased() }))
    }

    /// Error texts may quote the URL; redact every URL-looking word.
    private func redact(_ text: String) -> String {
        text.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.contains("://") ? url(String(word)) : String(word)
        }.joined(separator: " ")
    }
}
