import Synchronization
import Testing
import TrawlTestServer
import TrawlTestSupport

@testable import TrawlJobs

/// What a process does when its rate store stops answering, checked in this process against a fake store: the
/// local share applies at once and its bucket starts empty. Only lower bounds on time are asserted (a sleep never
/// ends early, however busy the machine), so these hold on a loaded machine where counting requests at a server
/// in another process does not.
@Suite("A rate store lost: the local share, with no saved-up burst", .hangGuard)
struct RateStoreFallbackTests {
    /// A store that hands out `tokens` tokens, then answers every script with an error (as a store that went away
    /// and came back empty would, or one out of memory).
    static func failing(after tokens: Int) -> @Sendable ([String]) -> [UInt8] {
        let taken = Taken()
        return { command in
            guard command.first == "EVALSHA" || command.first == "EVAL" else { return RESPServer.bulk("sha") }
            let count = taken.count.withLock { count in
                count += 1
                return count
            }
            return count <= tokens ? RESPServer.array(["1", "0", "token"]) : Array("-ERR store lost\r\n".utf8)
        }
    }

    final class Taken: Sendable {
        let count = Mutex(0)
    }

    @Test("after the store is lost, 12 requests at a 10/s share take at least 1.1 s (the bucket starts empty)")
    func lostStoreStartsTheShareEmpty() async throws {
        let warnings = Mutex([String]())
        try await RESPServer.with(Self.failing(after: 5)) { server in
            let address = RateStoreAddress(host: "127.0.0.1", port: server.port, database: 0)
            let budget = SharedRateBudget(
                address: address, job: "fallback", rate: 20, retryInterval: .seconds(60),
                warn: { message in warnings.withLock { $0.append(message) } })
            // 10/s is this process's share; the store held the budget, so the local bucket never refilled or spent.
            let scheduler = RequestScheduler(concurrency: 4, perHost: 4, rate: 10, maxWait: .seconds(5), shared: budget)
            let host = "http://127.0.0.1:9"
            for _ in 0..<5 {
                try await scheduler.acquire(host)
                await scheduler.release(host)
            }
            #expect(budget.losses == 0)
            let lost = ContinuousClock.now
            for _ in 0..<12 {
                try await scheduler.acquire(host)
                await scheduler.release(host)
            }
            let elapsed = ContinuousClock.now - lost
            #expect(budget.losses == 1)
            // Empty at the loss: the n-th request waits n/10 s. A bucket that kept what it saved (one second's worth,
            // 10) would let 10 go at once and take 0.2 s; no local share at all, no time.
            #expect(elapsed >= .milliseconds(1100), "12 requests in \(elapsed) after the store was lost")
        }
        #expect(warnings.withLock { $0.filter { $0.contains("does not answer") }.count } == 1)
    }

    @Test("a store unreachable from the first request: the share applies from the start, still without a burst")
    func unreachableStoreAppliesTheShare() async throws {
        try await RESPServer.with(Self.failing(after: 0)) { server in
            let address = RateStoreAddress(host: "127.0.0.1", port: server.port, database: 0)
            let budget = SharedRateBudget(
                address: address, job: "fallback", rate: 20, retryInterval: .seconds(60), warn: { _ in })
            let scheduler = RequestScheduler(concurrency: 4, perHost: 4, rate: 10, maxWait: .seconds(5), shared: budget)
            let host = "http://127.0.0.1:9"
            let started = ContinuousClock.now
            for _ in 0..<12 {
                try await scheduler.acquire(host)
                await scheduler.release(host)
            }
            let elapsed = ContinuousClock.now - started
            #expect(budget.losses == 1)
            #expect(elapsed >= .milliseconds(1100), "12 requests in \(elapsed) without a store")
        }
    }
}
