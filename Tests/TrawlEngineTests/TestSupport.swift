import Foundation
import Testing
@testable import TrawlEngine
import TrawlTestServer

/// Starts a fresh loopback test server for one test and shuts it down afterwards.
func withServer<T>(threads: Int = 1, _ body: (TestServer) async throws -> T) async throws -> T {
    try await TestServer.with(threads: threads, body)
}

/// The test server's deterministic body pattern.
func pattern(_ count: Int, from offset: Int = 0) -> [UInt8] {
    (offset..<(offset + count)).map { TestServer.patternByte(at: $0) }
}

/// Runs `body`, expecting a `TrawlError`, and returns it.
func expectTrawlError(
    _ code: TrawlError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> TrawlError? {
    do {
        try await body()
        Issue.record("expected TrawlError.\(code), got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as TrawlError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected TrawlError.\(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The echo endpoint's reply.
struct Echo: Decodable {
    let method: String
    let path: String
    let query: String
    let headers: [[String]]
    let bodyLength: Int
    let body: String

    func header(_ name: String) -> [String] {
        headers.filter { $0.first?.lowercased() == name.lowercased() }.compactMap { $0.count > 1 ? $0[1] : nil }
    }
}

func decodeEcho(_ response: Response) throws -> Echo {
    try JSONDecoder().decode(Echo.self, from: Data(response.body))
}

/// Waits until the client has no transfer queued or running (they end asynchronously on cancel).
func waitUntilIdle(_ client: Client, timeout: Duration = .seconds(20)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if client.loop.transfersInProgress.load(ordering: .relaxed) == 0 { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}
