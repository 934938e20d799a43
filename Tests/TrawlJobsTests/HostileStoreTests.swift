import Synchronization
import Testing
import TrawlTestServer
import TrawlTestSupport

@testable import TrawlJobs

/// A rate store is a peer: its replies are bounded before they are parsed, and its pauses before they are slept on.
@Suite("A rate store that lies: nested replies, endless pauses", .hangGuard)
struct HostileStoreTests {
    @Test("a reply nested 200,000 deep (800 KB, under the byte cap) is refused, not recursed into")
    func deepReplyIsRefused() throws {
        var reader = RESPReader()
        try reader.append(Array(String(repeating: "*1\r\n", count: 200_000).utf8))
        #expect(throws: RESPReader.Malformed.self) { try reader.next() }
        var deepest = RESPReader()
        let nested = String(repeating: "*1\r\n", count: RESPReader.deepestNesting) + ":7\r\n"
        try deepest.append(Array(nested.utf8))
        var expected = RESPValue.integer(7)
        for _ in 0..<RESPReader.deepestNesting { expected = .array([expected]) }
        #expect(try deepest.next() == expected)
        // Found by the resp-reply fuzz target: an empty array one level past the limit was taken.
        for leaf in ["*0\r\n", "*-1\r\n"] {
            var past = RESPReader()
            try past.append(Array((String(repeating: "*1\r\n", count: RESPReader.deepestNesting) + leaf).utf8))
            #expect(throws: RESPReader.Malformed.self) { try past.next() }
        }
    }

    @Test("a reply of more values than an answer holds is refused; a partial one waits for its bytes")
    func wideReplyIsRefused() throws {
        var reader = RESPReader()
        let inner = "*1024\r\n" + String(repeating: ":1\r\n", count: 1024)
        try reader.append(Array(("*8\r\n" + String(repeating: inner, count: 8)).utf8))
        #expect(throws: RESPReader.Malformed.self) { try reader.next() }
        var partial = RESPReader()
        try partial.append(Array("*2\r\n*2\r\n:1\r\n".utf8))
        #expect(try partial.next() == nil)
        try partial.append(Array(":2\r\n$2\r\nok\r\n".utf8))
        #expect(try partial.next() == .array([.array([.integer(1), .integer(2)]), .bulk(Array("ok".utf8))]))
    }

    @Test("a store asking for a pause of 1e300 s is obeyed for --max-wait only")
    func storePauseIsCappedAtMaxWait() async throws {
        let takes = Mutex(0)
        try await RESPServer.with({ command in
            guard command.first == "EVALSHA" || command.first == "EVAL" else { return RESPServer.bulk("sha") }
            let first = takes.withLock { count in
                count += 1
                return count == 1
            }
            return RESPServer.array(first ? ["0", "1e300", "pause"] : ["1", "0", "token"])
        }) { server in
            let address = RateStoreAddress(host: "127.0.0.1", port: server.port, database: 0)
            let budget = SharedRateBudget(address: address, job: "hostile", rate: 5, warn: { _ in })
            let scheduler = RequestScheduler(
                concurrency: 1, perHost: 1, rate: 5, maxWait: .milliseconds(50), shared: budget)
            try await scheduler.acquire("http://127.0.0.1:9")
        }
        #expect(takes.withLock { $0 } == 2)
    }
}
