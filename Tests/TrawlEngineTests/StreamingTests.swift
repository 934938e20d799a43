import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlEngine
import TrawlTestServer

@Suite("Streaming bodies, back-pressure and cancellation", .hangGuard)
struct StreamingTests {
    @Test func streamDeliversTheWholeBodyInOrder() async throws {
        try await withServer { server in
            let response = try await Client().stream(Request(url: server.url("/bytes/5000000?chunked=1")))
            #expect(response.status == 200)
            var offset = 0
            var matches = true
            for try await chunk in response.body {
                if chunk != pattern(chunk.count, from: offset) { matches = false }
                offset += chunk.count
            }
            #expect(matches)
            #expect(offset == 5_000_000)
            #expect(response.body.finalTimings?.total != nil)
        }
    }

    @Test func slowConsumerPausesTheTransfer() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.streamBufferSize = 256 << 10
            let client = Client(configuration: config)
            let size = 512 << 20
            let response = try await client.stream(Request(url: server.url("/bytes/\(size)")))
            var iterator = response.body.makeAsyncIterator()
            var received = try await iterator.next()?.count ?? 0
            // The consumer stalls: the transfer must pause, so the server can write only what the client
            // buffer and the socket buffers hold, not the whole body.
            try await Task.sleep(for: .milliseconds(700))
            let writtenWhilePaused = server.stats.bytesWritten
            try await Task.sleep(for: .milliseconds(300))
            #expect(server.stats.bytesWritten - writtenWhilePaused < 1 << 20, "transfer kept running")
            #expect(writtenWhilePaused < 48 << 20, "server wrote \(writtenWhilePaused) bytes to a stalled consumer")
            while let chunk = try await iterator.next() {
                #expect(chunk.count <= (256 << 10) + (128 << 10))
                received += chunk.count
            }
            #expect(received == size)
        }
    }

    @Test func droppingTheBodyCancelsTheTransfer() async throws {
        try await withServer { server in
            let client = Client()
            do {
                let response = try await client.stream(Request(url: server.url("/bytes/1000000000")))
                var iterator = response.body.makeAsyncIterator()
                _ = try await iterator.next()
            }
            #expect(await waitUntilIdle(client), "transfer still running after its body was dropped")
        }
    }

    @Test func cancellingTheTaskCancelsABufferedRequest() async throws {
        try await withServer { server in
            let client = Client()
            let started = ContinuousClock.now
            let task = Task { try await client.send(Request(url: server.url("/delay/30000"))) }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            let result = await task.result
            guard case .failure(let error as TrawlError) = result else {
                Issue.record("expected cancellation, got \(result)")
                return
            }
            #expect(error.code == .cancelled)
            // Well below the server's 30 s; generous because the test process can be very busy.
            #expect(ContinuousClock.now - started < .seconds(25))
            #expect(await waitUntilIdle(client))
        }
    }

    @Test func cancellingTheTaskStopsAStream() async throws {
        try await withServer { server in
            let client = Client()
            let task = Task {
                let response = try await client.stream(Request(url: server.url("/bytes/1000000000")))
                var total = 0
                for try await chunk in response.body { total += chunk.count }
                return total
            }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            let result = await task.result
            guard case .failure(let error as TrawlError) = result else {
                Issue.record("expected cancellation, got \(result)")
                return
            }
            #expect(error.code == .cancelled)
            #expect(await waitUntilIdle(client))
        }
    }

    @Test func cancellingQueuedTransfersFreesThem() async throws {
        try await withServer { server in
            var config = Client.Configuration()
            config.maxConcurrentTransfers = 1
            let client = Client(configuration: config)
            let tasks = (0..<5).map { _ in Task { try await client.send(Request(url: server.url("/delay/20000"))) } }
            try await Task.sleep(for: .milliseconds(100))
            for task in tasks { task.cancel() }
            for task in tasks {
                if case .success = await task.result { Issue.record("a cancelled request succeeded") }
            }
            #expect(await waitUntilIdle(client))
        }
    }

    @Test func streamErrorsReachTheConsumer() async throws {
        try await withServer { server in
            let response = try await Client().stream(Request(url: server.url("/short/100000")))
            var received = 0
            let error = await expectTrawlError(.truncated) {
                for try await chunk in response.body { received += chunk.count }
            }
            #expect(received == 100_000)  // everything that arrived was delivered first
            #expect(error?.curlCode == 18)
        }
    }

    @Test func collectEnforcesItsLimit() async throws {
        try await withServer { server in
            let response = try await Client().stream(Request(url: server.url("/bytes/3000000")))
            _ = await expectTrawlError(.tooLarge) { _ = try await response.body.collect(upTo: 1_000_000) }
        }
    }
}
