import Logging

/// Logs each request through swift-log: method, URL, status, duration and sizes, with credentials
/// redacted in URLs, headers and error texts: the names given here (by default those of `Redaction`) plus each
/// request's `sensitiveQueryParameters` and `sensitiveHeaders` (an ``API`` adds its client's
/// `Client.Configuration.sensitiveHeaders` to every request).
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
            level: headersLevel, "\(request.method) \(url(request.url, request)) sending",
            metadata: ["headers": .string(headers(request.headers, request).description)])
    }

    public func didReceive(_ response: RawResponse, for request: Request, duration: Duration) {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let source = response.isStub ? " (stub)" : ""
        let outcome = "\(response.status) in \(milliseconds)ms, \(response.bodySize) bytes\(source)"
        logger.log(level: level, "\(request.method) \(url(request.url, request)) -> \(outcome)")
        if let headersLevel {
            logger.log(
                level: headersLevel, "\(request.method) \(url(response.url, request)) response headers",
                metadata: ["headers": .string(headers(response.headers, request).description)])
        }
    }

    public func didFail(_ error: any Error, for request: Request) {
        let names = queryNames(request)
        let message = Redaction.text(String(describing: error), names: names)
        logger.log(level: level, "\(request.method) \(Redaction.url(request.url, names: names)) failed: \(message)")
    }

    private func queryNames(_ request: Request) -> Set<String> {
        redactedQueryParameters.union(request.sensitiveQueryParameters.map { $0.lowercased() })
    }

    private func url(_ text: String, _ request: Request) -> String {
        Redaction.url(text, names: queryNames(request))
    }

    private func headers(_ fields: HTTPHeaders, _ request: Request) -> HTTPHeaders {
        Redaction.headers(fields, names: redactedHeaders.union(request.sensitiveHeaders.map { $0.lowercased() }))
    }
}
