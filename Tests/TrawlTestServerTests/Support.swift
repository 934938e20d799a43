import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// Parent of every suite here. The tests use blocking sockets, so they run one at a time to occupy
/// at most one thread of the shared cooperative pool (other test targets run alongside).
@Suite(.serialized, .hangGuard, .ownThread)
struct TrawlTestServerTests {}

/// Runs `body` against a fresh server and always shuts it down.
func withServer(threads: Int = 1, _ body: (TestServer) async throws -> Void) async throws {
    let server = try await TestServer.start(threads: threads)
    do {
        try await body(server)
    } catch {
        try await server.shutdown()
        throw error
    }
    try await server.shutdown()
}

/// The server's pattern bytes `offset ..< offset + count`.
func patternBytes(count: Int, from offset: Int = 0) -> [UInt8] {
    let period = (0..<251).map { TestServer.patternByte(at: $0) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    var start = offset % period.count
    while bytes.count < count {
        let length = min(period.count - start, count - bytes.count)
        bytes.append(contentsOf: period[start..<(start + length)])
        start = 0
    }
    return bytes
}

/// Whether `bytes` equals the server's pattern starting at `offset` (memcmp: fast in debug builds).
func isPattern(_ bytes: [UInt8], from offset: Int = 0) -> Bool {
    let expected = patternBytes(count: bytes.count, from: offset)
    return bytes.withUnsafeBytes { actual in
        expected.withUnsafeBytes { expected in
            guard let actual = actual.baseAddress, let expected = expected.baseAddress else {
                return bytes.isEmpty
            }
            return memcmp(actual, expected, bytes.count) == 0
        }
    }
}
