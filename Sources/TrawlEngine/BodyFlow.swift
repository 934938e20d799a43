/// A streamed response body between libcurl's write callback (the producer, on a loop thread) and its consumer, as
/// a value: each event (bytes offered, a chunk asked for, the transfer's end, the consumer's cancel) changes the
/// state and returns what to do. `BodyStream` holds one under its lock and does the actions (resume a waiting
/// consumer, unpause or cancel the transfer) after releasing it. `Waiter` is the consumer's continuation there and
/// anything in the tests.
///
/// ```swift
/// var flow = BodyFlow<Int>(highWater: 4)
/// flow.next(waiter: 1)                  // .wait(resumeTransfer: false): nothing yet
/// flow.offer([1, 2])                   // .deliver([1, 2], to: 1)
/// flow.offer([3])                      // .accepted: kept
/// flow.finish(failure: nil, timings: nil)     // .none: no one waits
/// flow.next(waiter: 2)                  // .take([3], resumeTransfer: false), then .end
/// ```
struct BodyFlow<Waiter> {
    /// After bytes were offered.
    enum Offered {
        /// Hand these bytes to the waiting consumer (they were not kept).
        case deliver([UInt8], to: Waiter)
        /// Kept for the next `next`.
        case accepted
        /// The buffer is at its high-water mark: libcurl keeps the bytes and the transfer pauses until a `next`.
        case pause
        /// The consumer is gone: abort the transfer.
        case abandoned
    }

    /// After the consumer asked for the next chunk.
    enum Asked {
        /// The bytes kept, as one chunk; unpause the transfer when `resumeTransfer`.
        case take([UInt8], resumeTransfer: Bool)
        /// The body ended.
        case end
        /// The transfer failed.
        case fail(TrawlError)
        /// The consumer cancelled earlier.
        case cancelled
        /// The waiter waits for the next offer or the end; unpause the transfer when `resumeTransfer`.
        case wait(resumeTransfer: Bool)
    }

    /// After the transfer ended.
    enum Finished {
        /// No one waits (or it had ended already).
        case none
        /// End the waiting consumer's body.
        case end(Waiter)
        /// Fail the waiting consumer with the transfer's error.
        case fail(Waiter, TrawlError)
    }

    let highWater: Int
    private(set) var chunks: [[UInt8]] = []
    private(set) var buffered = 0
    private(set) var paused = false
    private(set) var waiter: Waiter?
    private(set) var finished = false
    private(set) var failure: TrawlError?
    private(set) var consumerGone = false
    private(set) var timings: Timings?

    init(highWater: Int) {
        self.highWater = max(1, highWater)
    }

    /// Loop thread: bytes from libcurl's write callback.
    mutating func offer(_ bytes: [UInt8]) -> Offered {
        if consumerGone { return .abandoned }
        if let waiter {
            self.waiter = nil
            return .deliver(bytes, to: waiter)
        }
        if buffered >= highWater {
            paused = true
            return .pause
        }
        chunks.append(bytes)
        buffered += bytes.count
        return .accepted
    }

    /// Consumer: the next chunk, the end, or wait (then `waiter` is resumed by a later `offer` or `finish`).
    mutating func next(waiter: Waiter) -> Asked {
        if !chunks.isEmpty {
            let chunk = chunks.count == 1 ? chunks[0] : [UInt8](concatenating: chunks)
            chunks.removeAll(keepingCapacity: true)
            buffered = 0
            return .take(chunk, resumeTransfer: unpause())
        }
        if finished { return failure.map(Asked.fail) ?? .end }
        if consumerGone { return .cancelled }
        self.waiter = waiter
        return .wait(resumeTransfer: unpause())
    }

    /// Loop thread: the transfer ended (`failure` nil on success). Only the first end counts.
    mutating func finish(failure: TrawlError?, timings: Timings?) -> Finished {
        guard !finished else { return .none }
        finished = true
        self.failure = failure
        self.timings = timings
        guard let waiter else { return .none }
        self.waiter = nil
        if let failure { return .fail(waiter, failure) }
        return .end(waiter)
    }

    /// Consumer: it stops reading. Returns the waiter to fail, if one waits; the transfer is cancelled in any case.
    mutating func cancel() -> Waiter? {
        guard !finished, !consumerGone else { return nil }
        consumerGone = true
        defer { waiter = nil }
        return waiter
    }

    private mutating func unpause() -> Bool {
        guard paused else { return false }
        paused = false
        return true
    }
}
