import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
#if canImport(Glibc)
import Glibc
#endif

/// A loopback listener whose accept queue is full, so the kernel drops new SYNs: connecting to it
/// hangs until the client's connect timeout.
private struct FullBacklogListener {
    let port: Int
    private var sockets: [Int32] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        guard listener >= 0, bound == 0, listen(listener, 0) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        sockets = [listener]
        for _ in 0..<3 {  // fill the queue (backlog 0 admits one, the rest wait in SYN state)
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            sockets.append(client)
        }
    }

    func close() { for socket in sockets { _ = Glibc.close(socket) } }
}

@Suite("Connect timeout", .hangGuard)
struct ConnectTimeoutTests {
    @Test func connectTimeoutIsReported() async throws {
        let listener = try FullBacklogListener()
        defer { listener.close() }
        try await Task.sleep(for: .milliseconds(100))
        var request = Request(url: "http://127.0.0.1:\(listener.port)/")
        request.timeouts.connect = .milliseconds(500)
        let started = ContinuousClock.now
        let error = await expectTrawlError(.timeout) { _ = try await Client().send(request) }
        #expect(error?.message == "could not connect within the connect timeout of 0.5 seconds")
        #expect(error?.curlCode == 28)
        // The configured 0.5 s is what applied: libcurl says how long it waited ("Connection timeout after
        // 500 ms"), which the message above (built from the request's settings) cannot show. Were the request's
        // timeout not passed on, libcurl would wait the default 10 s and still report a timeout.
        let description = try #require(error?.description)
        let waited = try #require(description.firstMatch(of: /after (\d+) m/)?.1, "\(description)")
        let milliseconds = try #require(Int(waited))
        #expect(milliseconds >= 500 && milliseconds < 5000, "\(description)")
        #expect(ContinuousClock.now - started < .seconds(30))  // a hang check; the machine may be loaded
    }
}
