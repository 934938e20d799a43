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
typealias Echo = EchoReply

func decodeEcho(_ response: Response) throws -> Echo {
    try JSONDecoder().decode(Echo.self, from: Data(response.body))
}

/// Waits until the client has no transfer queued or running (they end asynchronously on cancel).
func waitUntilIdle(_ client: Client, timeout: Duration = .seconds(20)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if client.transfersInProgress == 0 { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}

enum ToolError: Error { case failed(String) }

/// Runs a tool to completion, polling.
func runTool(_ path: String, _ arguments: [String]) async throws {
    let process = try ChildProcess(path, arguments)
    for _ in 0..<1000 where process.isRunning { try await Task.sleep(for: .milliseconds(10)) }
    guard !process.isRunning, process.exitStatus == 0 else {
        process.terminate(SIGKILL)
        throw ToolError.failed("\(path) \(arguments.joined(separator: " "))")
    }
}

/// A throwaway self-signed certificate for localhost and 127.0.0.1: (certificate path, key path).
func makeTestCertificate(in directory: URL) async throws -> (certificate: String, key: String) {
    let certificate = directory.appendingPathComponent("cert.pem").path
    let key = directory.appendingPathComponent("key.pem").path
    try await runTool("/usr/bin/openssl", [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
        "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ])
    return (certificate, key)
}

/// Where `actual` first differs from `expected`: nil when they are equal, else a description with the offset and
/// both lengths. For large buffers use `#expect(firstDifference(a, b) == nil)` rather than `#expect(a == b)`: on
/// failure Swift Testing diffs the two collections for its message, which takes minutes for a few hundred KB.
func firstDifference(_ actual: [UInt8], _ expected: [UInt8]) -> String? {
    if actual == expected { return nil }
    let common = min(actual.count, expected.count)
    let offset = (0..<common).first { actual[$0] != expected[$0] } ?? common
    return "byte \(offset) differs (lengths \(actual.count) and \(expected.count))"
}

/// A loopback port that refuses connections for as long as `body` runs: a socket bound to it but not listening
/// holds it, so no server a parallel test starts can take it (a stopped server's port could be reused at once).
func withRefusingPort<T>(_ body: (Int) async throws -> T) async throws -> T {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw ToolError.failed("socket: \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
        }
    }
    guard bound else { throw ToolError.failed("bind: \(String(cString: strerror(errno)))") }
    return try await body(Int(UInt16(bigEndian: address.sin_port)))
}
