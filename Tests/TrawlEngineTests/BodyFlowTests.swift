import Testing
import TrawlTestSupport

@testable import TrawlEngine

/// `BodyFlow`, the streamed body between libcurl's write callback and the consumer: every transition, no sockets.
@Suite("BodyFlow: a streamed body's buffer as a value", .hangGuard)
struct BodyFlowTests {
    typealias Flow = BodyFlow<Int>
    static let failure = TrawlError(code: .receiveFailed, message: "reset", method: "GET", url: "http://127.0.0.1:9/")

    static func offer(_ flow: inout Flow, _ bytes: [UInt8]) -> Flow.Offered {
        flow.offer(bytes)
    }

    @Test func bytesGoStraightToAWaitingConsumer() {
        var flow = Flow(highWater: 4)
        guard case .wait(resumeTransfer: false) = flow.next(waiter: 7) else { Issue.record("waits"); return }
        guard case .deliver(let chunk, to: 7) = Self.offer(&flow, [1, 2]) else { Issue.record("delivers"); return }
        #expect(chunk == [1, 2])
        #expect(flow.waiter == nil && flow.buffered == 0, "handed over, not kept")
    }

    @Test func bytesAreKeptUpToTheHighWaterMarkThenTheTransferPauses() {
        var flow = Flow(highWater: 4)
        guard case .accepted = Self.offer(&flow, [1, 2, 3]) else { Issue.record("kept"); return }
        guard case .accepted = Self.offer(&flow, [4, 5]) else { Issue.record("kept below the mark"); return }
        #expect(flow.buffered == 5)
        guard case .pause = Self.offer(&flow, [6]) else { Issue.record("pauses at the mark"); return }
        #expect(flow.paused && flow.buffered == 5, "libcurl keeps the paused bytes")
        guard case .take(let chunk, resumeTransfer: true) = flow.next(waiter: 1) else {
            Issue.record("the kept chunks in one, and the transfer resumes")
            return
        }
        #expect(chunk == [1, 2, 3, 4, 5])
        #expect(!flow.paused && flow.buffered == 0 && flow.chunks.isEmpty)
        guard case .wait(resumeTransfer: false) = flow.next(waiter: 2) else { Issue.record("then waits"); return }
    }

    @Test func aConsumerWaitingOnAPausedTransferResumesIt() {
        var flow = Flow(highWater: 1)
        _ = Self.offer(&flow, [1])
        _ = Self.offer(&flow, [2])
        #expect(flow.paused)
        _ = flow.next(waiter: 1)
        // The first take resumed it; a pause can also be pending when the buffer is empty (high water 1, then
        // taken): a waiter unpauses.
        _ = Self.offer(&flow, [3])
        _ = Self.offer(&flow, [4])
        guard case .take([3], resumeTransfer: true) = flow.next(waiter: 2) else { Issue.record("take"); return }
        _ = Self.offer(&flow, [5])
        #expect(!flow.paused)
    }

    @Test func theEndReachesAWaiterOrTheNextAsk() {
        var waiting = Flow(highWater: 4)
        _ = waiting.next(waiter: 3)
        guard case .end(3) = waiting.finish(failure: nil, timings: nil) else { Issue.record("ends the waiter"); return }
        guard case .none = waiting.finish(failure: Self.failure, timings: nil) else {
            Issue.record("only the first end counts")
            return
        }
        guard case .end = waiting.next(waiter: 4) else { Issue.record("ended"); return }

        var kept = Flow(highWater: 4)
        _ = Self.offer(&kept, [9])
        guard case .none = kept.finish(failure: nil, timings: nil) else { Issue.record("no one waits"); return }
        guard case .take([9], resumeTransfer: false) = kept.next(waiter: 1) else {
            Issue.record("bytes kept before the end come first")
            return
        }
        guard case .end = kept.next(waiter: 2) else { Issue.record("then the end"); return }
    }

    @Test func aFailureReachesAWaiterOrTheNextAsk() {
        var waiting = Flow(highWater: 4)
        _ = waiting.next(waiter: 5)
        guard case .fail(5, let error) = waiting.finish(failure: Self.failure, timings: nil) else {
            Issue.record("fails the waiter")
            return
        }
        #expect(error.code == .receiveFailed)
        var later = Flow(highWater: 4)
        _ = later.finish(failure: Self.failure, timings: nil)
        guard case .fail(let again) = later.next(waiter: 1) else { Issue.record("fails the next ask"); return }
        #expect(again.code == .receiveFailed)
    }

    @Test func aCancelFailsTheWaiterAbandonsTheTransferAndCountsOnce() {
        var flow = Flow(highWater: 4)
        _ = flow.next(waiter: 8)
        #expect(flow.cancel() == 8)
        #expect(flow.consumerGone && flow.waiter == nil)
        #expect(flow.cancel() == nil, "a second cancel has no waiter to fail")
        guard case .abandoned = Self.offer(&flow, [1]) else { Issue.record("the transfer is abandoned"); return }
        guard case .cancelled = flow.next(waiter: 9) else { Issue.record("a later ask is cancelled"); return }
        guard case .none = flow.finish(failure: nil, timings: nil) else { Issue.record("no waiter at the end"); return }
    }

    @Test func aCancelAfterTheEndChangesNothing() {
        var flow = Flow(highWater: 4)
        _ = Self.offer(&flow, [1])
        _ = flow.finish(failure: nil, timings: nil)
        #expect(flow.cancel() == nil)
        #expect(!flow.consumerGone)
        guard case .take([1], _) = flow.next(waiter: 1) else { Issue.record("the body is still read"); return }
    }
}
