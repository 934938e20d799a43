import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Size limits, timeouts and concurrency limits", .hangGuard)
struct LimitsTests {
    @Test(arguments: ["/bytes/3000000", "/bytes/3000000?chunked=1", "/gzip/3000000"])
    func bodyLimitHoldsForEveryEncoding(path: String) async throws {
        try await withServer { server in
            var request = Request(url: server.url(path))
            request.maxBodySize = 1_000_000
            let error = await expectTrawlError(.tooLarge) { _ = try await Client().send(request) }
            #expect(error?.message == "the body exceeded the limit of 1000000 bytes (decoded)")
            #expect(error?.curlCode == 23)
        }
    }

    @Test func clientDefaultLimitApplies() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.maxBodySize = 10_000
            _ = await expectTrawlError(.tooLarge) {
                _ = try await Client(configuration: config).send(Request(url: server.url("/bytes/10001")))
            }
            let fits = try await Client(configuration: config).send(Request(url: server.url("/bytes/10000")))
            #expect(fits.body.count == 10_000)
        }
    }

    @Test func totalTimeout() async throws {
        try await withServer { server in
            var request = Request(url: server.url("/delay/20000"))
            request.timeouts.total = .milliseconds(300)
            let started = ContinuousClock.now
            let error = await expectTrawlError(.timeout) { _ = try await Client().send(request) }
            // Generous bound: other suites may keep the test process's threads busy.
            #expect(ContinuousClock.now - started < .seconds(30))  // a hang check; the machine may be loaded
            #expect(error?.curlCode == 28)
            let expected = "the transfer did not finish within the total timeout of 0.3 seconds"
            #expect(error?.message.hasPrefix(expected) == true)
        }
    }

    @Test func stalledTransfer() async throws {
        try await withServer { server in
            // libcurl averages speed over a few seconds: a high minimum trips quickly after the stall.
            var config = Client.Configuration()
            config.timeouts = Timeouts(stall: .seconds(1), stallMinimumBytesPerSecond: 2000)
            let started = ContinuousClock.now
            let error = await expectTrawlError(.stalled) {
                _ = try await Client(configuration: config).send(Request(url: server.url("/stall?after=1000")))
            }
            #expect(error?.message == "fewer than 2000 bytes/s moved for 1.0 seconds")
            #expect(error?.bodyExcerpt.count == 512)
            #expect(ContinuousClock.now - started < .seconds(30))  // a hang check; the machine may be loaded
        }
    }

    @Test func pausedStreamIsNotAStall() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.timeouts.stall = .seconds(1)
            config.streamBufferSize = 64 << 10
            let response = try await Client(configuration: config).stream(Request(url: server.url("/bytes/20000000")))
            var iterator = response.body.makeAsyncIterator()
            var total = try await iterator.next()?.count ?? 0
            try await Task.sleep(for: .milliseconds(2500))  // consumer slower than the stall limit
            while let chunk = try await iterator.next() { total += chunk.count }
            #expect(total == 20_000_000)
        }
    }

    @Test func concurrencyLimitIsHonoured() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.maxConcurrentTransfers = 3
            let client = Client(configuration: config)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask { _ = try await client.send(Request(url: server.url("/delay/50"))) }
                }
                try await group.waitForAll()
            }
            #expect(server.stats.maxInFlight == 3)
        }
    }

    @Test func perHostLimitLeavesOtherHostsFree() async throws {
        try await withServer { server in
            try await withServer { other in
                var config = Client.Configuration()
                config.maxConnectionsPerHost = 2
                let client = Client(configuration: config)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<16 {
                        let target = index.isMultiple(of: 2) ? server : other
                        group.addTask { _ = try await client.send(Request(url: target.url("/delay/50"))) }
                    }
                    try await group.waitForAll()
                }
                #expect(server.stats.maxInFlight == 2)
                #expect(other.stats.maxInFlight == 2)
            }
        }
    }

    @Test func queuedTransfersDoNotSpendTheirTimeout() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.maxConcurrentTransfers = 1
            // Each transfer has 3.75 times its 400 ms to finish (a loaded machine can hold one up), while the five
            // queued behind each other take 2 s: counted from when they were queued, the fourth and fifth time out.
            config.timeouts.total = .milliseconds(1500)
            let client = Client(configuration: config)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<5 {
                    group.addTask { try await client.send(Request(url: server.url("/delay/400"))).status }
                }
                for try await status in group { #expect(status == 200) }
            }
        }
    }
}
