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

/// The buffer between the loop thread (producer, inside libcurl's write callback) and the consumer.
final class BodyStream: Sendable {
    enum Offer {
        case accepted
        /// Buffer full: the write callback returns CURL_WRITEFUNC_PAUSE (libcurl keeps the bytes).
        case pause
        /// The consumer is gone: abort the transfer.
        case abandoned
    }

    private struct State {
        var chunks: [[UInt8]] = []
        var buffered = 0
        var paused = false
        var waiter: CheckedContinuation<[UInt8]?, any Error>?
        var finished = false
        var failure: TrawlError?
        var consumerGone = false
        var timings: Timings?
    }

    private struct Hooks {
        var resume: @Sendable () -> Void = {}
        var cancel: @Sendable () -> Void = {}
    }

    private let state = Mutex(State())
    private let highWater: Int
    private let method: String
    private let url: String
    /// Ask the loop to unpause (when the buffer drained) or cancel the transfer.
    private let hooks = Mutex(Hooks())

    init(highWater: Int, method: String, url: String) {
        self.highWater = max(1, highWater)
        self.method = method
        self.url = url
    }

    /// Set once, before the transfer is submitted.
    func connect(resume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void) {
        hooks.withLock { $0 = Hooks(resume: resume, cancel: cancel) }
    }

    private func resumeTransfer() { hooks.withLock { $0.resume }() }
    private func cancelTransfer() { hooks.withLock { $0.cancel }() }

    var finalTimings: Timings? { state.withLock { $0.timings } }

    /// Loop thread: offers bytes from libcurl's write callback.
    func offer(_ bytes: UnsafeRawBufferPointer) -> Offer {
        enum Step {
            case handOff(CheckedContinuation<[UInt8]?, any Error>)
            case answer(Offer)
        }
        let step = state.withLock { state -> Step in
            if state.consumerGone { return .answer(.abandoned) }
            if let waiter = state.waiter {
                state.waiter = nil
                return .handOff(waiter)
            }
            if state.buffered >= highWater {
                state.paused = true
                return .answer(.pause)
            }
            state.chunks.append([UInt8](copying: bytes))
            state.buffered += bytes.count
            return .answer(.accepted)
        }
        switch step {
        case .handOff(let waiter):
            // Resumed outside the lock, as finish and cancel do: resuming enqueues the consumer's task on its
            // executor (its locks, maybe a wake-up), work that must not hold up a consumer or a cancel waiting for
            // this lock. The waiter is ours alone once taken (cancel finds none), and the next offer comes from this
            // thread after this one returns, so the chunks keep their order.
            waiter.resume(returning: [UInt8](copying: bytes))
            return .accepted
        case .answer(let offer):
            return offer
        }
    }

    /// Loop thread: the transfer ended (`failure` nil on success).
    func finish(failure: TrawlError?, timings: Timings?) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = failure
            state.timings = timings
            defer { state.waiter = nil }
            return state.waiter
        }
        if let waiter {
            if let failure { waiter.resume(throwing: failure) } else { waiter.resume(returning: nil) }
        }
    }

    func next() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
                var wake = false
                let immediate: Result<[UInt8]?, any Error>? = state.withLock { state in
                    if !state.chunks.isEmpty {
                        let chunk = state.chunks.count == 1 ? state.chunks[0] : [UInt8](concatenating: state.chunks)
                        state.chunks.removeAll(keepingCapacity: true)
                        state.buffered = 0
                        if state.paused { state.paused = false; wake = true }
                        return .success(chunk)
                    }
                    if state.finished {
                        if let failure = state.failure { return .failure(failure) }
                        return .success(nil)
                    }
                    if state.consumerGone { return .failure(cancelledError()) }
                    state.waiter = continuation
                    if state.paused { state.paused = false; wake = true }
                    return nil
                }
                if wake { resumeTransfer() }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Consumer side: stop the transfer and fail a pending `next()`.
    func cancel() {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, any Error>? in
            guard !state.finished, !state.consumerGone else { return nil }
            state.consumerGone = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: cancelledError())
        cancelTransfer()
    }

    func error(code: TrawlError.Code, _ message: String, hint: String? = nil) -> TrawlError {
        TrawlError(code: code, message: message, hint: hint, method: method, url: url)
    }

    private func cancelledError() -> TrawlError {
        error(code: .cancelled, "the body stream was cancelled before it ended")
    }
}
