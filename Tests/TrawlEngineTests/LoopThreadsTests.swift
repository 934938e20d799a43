import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

/// `Configuration.loopThreads`: more than one multi handle, each on its own thread.
@Suite("Several loop threads", .endToEnd)
struct LoopThreadsTests {
    private func client(loops: Int, _ adjust: (inout Client.Configuration) -> Void = { _ in }) -> Client {
        var config = Client.Configuration()
        config.loopThreads = loops
        adjust(&config)
        return Client(configuration: config)
    }

    @Test func callersOffTheLoopsAreSpreadOverEveryLoop() async throws {
        try await withServer { server in
            let client = client(loops: 2)
            #expect(client.executors.count == 2)
            let bodies = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let response = try await client.send(Request(url: server.url("/bytes/\(index)")))
                        return response.status == 200 && response.body == pattern(index)
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(bodies.count == 200 && bodies.allSatisfy { $0 })
            #expect(client.handlesCreated.allSatisfy { $0 >= 1 }, "\(client.handlesCreated)")
            #expect(await waitUntilIdle(client))
        }
    }

    @Test func aTaskOnALoopsExecutorSendsThroughThatLoop() async throws {
        try await withServer { server in
            let client = client(loops: 2)
            let statuses = try await withTaskExecutorPreference(client.executors[1]) {
                var statuses: [Int] = []
                for _ in 0..<10 {
                    statuses.append(try await client.send(Request(url: server.url("/json/small"))).status)
                }
                return statuses
            }
            #expect(statuses == Array(repeating: 200, count: 10))
            #expect(client.handlesCreated == [0, 1])
            #expect(server.stats.connectionsAccepted == 1)
        }
    }

    @Test func theConcurrencyLimitIsSplitBetweenTheLoops() async throws {
        try await withServer { server in
            let client = client(loops: 2) { $0.maxConcurrentTransfers = 3 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<12 {
                    group.addTask { _ = try await client.send(Request(url: server.url("/delay/50"))) }
                }
                try await group.waitForAll()
            }
            #expect(server.stats.maxInFlight <= 3)
            #expect(server.stats.maxInFlight >= 2)
        }
    }

    @Test func moreLoopsThanTransferSlotsAreCutToTheSlots() async throws {
        try await withServer { server in
            let client = client(loops: 4) { $0.maxConcurrentTransfers = 2 }
            #expect(client.executors.count == 2)
            let status = try await client.send(Request(url: server.url("/json/small"))).status
            #expect(status == 200)
        }
    }

    @Test func aPerHostCapHoldsAcrossLoops() async throws {
        try await withServer { server in
            try await withServer { other in
                let client = client(loops: 2) { $0.maxConnectionsPerHost = 2 }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<16 {
                        let target = index.isMultiple(of: 2) ? server : other
                        // Half the senders run on the second loop's thread: the origin still decides the loop.
                        let preference: EngineExecutor? = index % 4 < 2 ? client.executors[1] : nil
                        group.addTask(executorPreference: preference) {
                            _ = try await client.send(Request(url: target.url("/delay/50")))
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(server.stats.maxInFlight == 2)
                #expect(other.stats.maxInFlight == 2)
            }
        }
    }

    @Test func streamsPauseResumeAndCancelOnTheirOwnLoop() async throws {
        try await withServer { server in
            let client = client(loops: 2) { $0.streamBufferSize = 64 << 10 }
            // Two streams, one per loop (round-robin), each read slowly enough to pause its transfer.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        let response = try await client.stream(Request(url: server.url("/bytes/4000000")))
                        var total = 0
                        var offset = 0
                        for try await chunk in response.body {
                            #expect(chunk == pattern(chunk.count, from: offset))
                            offset += chunk.count
                            total += chunk.count
                            if total < 1_000_000 { try await Task.sleep(for: .milliseconds(5)) }
                        }
                        return total
                    }
                }
                for try await total in group { #expect(total == 4_000_000) }
            }
            #expect(client.handlesCreated == [1, 1])
            let task = Task {
                let response = try await client.stream(Request(url: server.url("/bytes/1000000000")))
                for try await _ in response.body {}
            }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            guard case .failure(let error as TrawlError) = await task.result else {
                Issue.record("expected a cancellation")
                return
            }
            #expect(error.code == .cancelled)
            #expect(await waitUntilIdle(client))
        }
    }
}
