import Synchronization

/// The body of a streamed response: chunks of decoded bytes, in order.
///
/// Back-pressure: when the consumer falls behind by more than the client's `streamBufferSize`, the
/// transfer pauses until the consumer catches up, so memory stays bounded however large the body.
/// Iterate it once. Dropping it (or cancelling the consuming task) before the end cancels the transfer.
///
/// ```swift
/// let response = try await client.stream(Request(url: url))
/// var total = 0
/// for try await chunk in response.body { total += chunk.count }
/// ```
public struct ResponseBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public typealias Failure = any Error

    let consumer: BodyConsumer
    private var stream: BodyStream { consumer.stream }

    init(stream: BodyStream) { consumer = BodyConsumer(stream: stream) }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: consumer)
    }

    /// Timings including the total, once the body has ended.
    public var finalTimings: Timings? { stream.finalTimings }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let consumer: BodyConsumer

        public mutating func next() async throws -> [UInt8]? {
            try await consumer.stream.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? {
            try await consumer.stream.next()
        }
    }

    /// Collects the whole body, failing with `TrawlError.Code.tooLarge` past `limit` bytes.
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var result: [UInt8] = []
        for try await chunk in self {
            guard result.count + chunk.count <= limit else {
                stream.cancel()
                throw stream.error(code: .tooLarge, "the body exceeded the limit of \(limit) bytes",
                                   hint: "raise the limit or stream the body instead")
            }
            result.append(contentsOf: chunk)
        }
        return result
    }
}

/// Owned by the consumer's copies of `ResponseBody`: when the last one goes away before the body ended,
/// the transfer is cancelled (its handle freed) instead of running on unread.
final class BodyConsumer: Sendable {
    let stream: BodyStream
    init(stream: BodyStream) { self.stream = stream }
    deinit { stream.cancel() }
}

/// The buffer between the loop thread (producer, inside libcurl's write callback) and the consumer: a `BodyFlow`
/// under a lock, whose actions run after the lock is released.
final class BodyStream: Sendable {
    typealias Waiter = CheckedContinuation<[UInt8]?, any Error>

    enum Offer {
        case accepted
        /// Buffer full: the write callback returns CURL_WRITEFUNC_PAUSE (libcurl keeps the bytes).
        case pause
        /// The consumer is gone: abort the transfer.
        case abandoned
    }

    private struct Hooks {
        var resume: @Sendable () -> Void = {}
        var cancel: @Sendable () -> Void = {}
    }

    private let flow: Mutex<BodyFlow<Waiter>>
    private let method: String
    private let url: String
    /// Ask the loop to unpause (when the buffer drained) or cancel the transfer.
    private let hooks = Mutex(Hooks())

    init(highWater: Int, method: String, url: String) {
        flow = Mutex(BodyFlow(highWater: highWater))
        self.method = method
        self.url = url
    }

    /// Set once, before the transfer is submitted.
    func connect(resume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void) {
        hooks.withLock { $0 = Hooks(resume: resume, cancel: cancel) }
    }

    private func resumeTransfer() { hooks.withLock { $0.resume }() }
    private func cancelTransfer() { hooks.withLock { $0.cancel }() }

    var finalTimings: Timings? { flow.withLock { $0.timings } }

    /// Loop thread: offers bytes from libcurl's write callback.
    func offer(_ bytes: UnsafeRawBufferPointer) -> Offer {
        // Copied before the lock (libcurl's bytes are valid during this call only): every offer but a pause (once per
        // full buffer) or one after the consumer left keeps or hands over the copy.
        let chunk = [UInt8](copying: bytes)
        switch flow.withLock({ $0.offer(chunk) }) {
        case .deliver(let chunk, let waiter):
            // Resumed outside the lock, as finish and cancel do: resuming enqueues the consumer's task on its
            // executor (its locks, maybe a wake-up), work that must not hold up a consumer or a cancel waiting for
            // this lock. The waiter is ours alone once taken (cancel finds none), and the next offer comes from this
            // thread after this one returns, so the chunks keep their order.
            waiter.resume(returning: chunk)
            return .accepted
        case .accepted: return .accepted
        case .pause: return .pause
        case .abandoned: return .abandoned
        }
    }

    /// Loop thread: the transfer ended (`failure` nil on success).
    func finish(failure: TrawlError?, timings: Timings?) {
        switch flow.withLock({ $0.finish(failure: failure, timings: timings) }) {
        case .none: break
        case .end(let waiter): waiter.resume(returning: nil)
        case .fail(let waiter, let failure): waiter.resume(throwing: failure)
        }
    }

    func next() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                switch flow.withLock({ $0.next(waiter: continuation) }) {
                case .take(let chunk, let wake):
                    if wake { resumeTransfer() }
                    continuation.resume(returning: chunk)
                case .end: continuation.resume(returning: nil)
                case .fail(let failure): continuation.resume(throwing: failure)
                case .cancelled: continuation.resume(throwing: cancelledError())
                case .wait(let wake): if wake { resumeTransfer() }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Consumer side: stop the transfer and fail a pending `next()`.
    func cancel() {
        flow.withLock { $0.cancel() }?.resume(throwing: cancelledError())
        cancelTransfer()
    }

    func error(code: TrawlError.Code, _ message: String, hint: String? = nil) -> TrawlError {
        TrawlError(code: code, message: message, hint: hint, method: method, url: url)
    }

    private func cancelledError() -> TrawlError {
        error(code: .cancelled, "the body stream was cancelled before it ended")
    }
}
