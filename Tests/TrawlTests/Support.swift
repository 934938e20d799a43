import Foundation
import Logging
import Testing
import Trawl
import TrawlJSON
import TrawlTestServer

/// One engine client shared by the suite (each creates a loop thread).
let sharedClient = Client()

/// Starts a fresh loopback test server for one test and shuts it down afterwards.
func withServer<T>(_ body: (TestServer) async throws -> T) async throws -> T {
    try await TestServer.with(body)
}

/// An API pointed at the server, sharing the suite's client.
func api(_ server: TestServer) -> API {
    API(baseURL: server.baseURL, client: sharedClient)
}

/// The `/echo` endpoint's reply.
typealias Echo = EchoReply

/// Runs `body`, expecting an `APIError<Model>`, and returns it.
func expectAPIError<Model>(
    _ model: Model.Type, _ kind: APIError<Model>.Kind, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> APIError<Model>? {
    do {
        try await body()
        Issue.record("expected APIError.\(kind), got success", sourceLocation: sourceLocation)
    } catch let error as APIError<Model> {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected APIError.\(kind), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Keeps every log line (message and metadata) for inspection.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var all: [String] { lock.withLock { lines } }

    func append(_ line: String) { lock.withLock { lines.append(line) } }

    func logger() -> Logger {
        var logger = Logger(label: "test") { _ in CapturingHandler(capture: self) }
        logger.logLevel = .trace
        return logger
    }
}

struct CapturingHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let extra = (event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
        capture.append("\(event.level): \(event.message) \(extra)")
    }
}
