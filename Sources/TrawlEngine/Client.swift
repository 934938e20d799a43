import Synchronization

/// An HTTP client driven by one libcurl multi handle on its own thread. Create one and share it:
/// it is safe to use from any number of tasks, reuses connections, and shares DNS results.
///
/// ```swift
/// let client = Client()
/// let response = try await client.send(Request(url: "http://127.0.0.1:8080/items"))
/// print(response.status, response.bodyText)
///
/// // Large bodies: stream them, with back-pressure.
/// let stream = try await client.stream(Request(url: "http://127.0.0.1:8080/export"))
/// for try await chunk in stream.body { consume(chunk) }
/// ```
///
/// The loop thread stops when the client (and its `executor`) are released and the last transfer has ended.
public final class Client: Sendable {
    public let configuration: Configuration
    /// Runs tasks on the engine's (first) loop thread; see `EngineExecutor`.
    public var executor: EngineExecutor { executors[0] }
    /// One executor per loop thread (`Configuration.loopThreads`). A task that prefers one of them sends
    /// its requests through that executor's loop.
    public let executors: [EngineExecutor]
    private let loops: [CurlLoop]
    private let nextLoop = Atomic<Int>(0)
    private let defaults: ClientDefaults

    public init(configuration: Configuration = Configuration()) {
        var configuration = configuration
        configuration.maxConcurrentTransfers = max(1, configuration.maxConcurrentTransfers)
        configuration.loopThreads = min(max(1, configuration.loopThreads), configuration.maxConcurrentTransfers)
        self.configuration = configuration
        if !configuration.tls.verifyPeer {
            let warning = "TLS certificate verification is OFF for this client: anyone on the network path "
                + "can read and alter its traffic"
            configuration.logger.warning("\(warning)")
        }
        let defaults = ClientDefaults(configuration: configuration)
        self.defaults = defaults
        let count = configuration.loopThreads
        let loops = (0..<count).map { index in
            var share = configuration
            // Shares that add up to the client's limit: 64 over 3 loops is 22, 21, 21.
            share.maxConcurrentTransfers = (configuration.maxConcurrentTransfers + count - 1 - index) / count
            return CurlLoop(configuration: share, defaultHeaderLines: defaults.lines)
        }
        self.loops = loops
        executors = loops.map { EngineExecutor(loop: $0) }
    }

    /// The loop a transfer goes through: by origin when a per-host cap must hold across loops, else the
    /// loop whose thread is calling (a task on one of `executors`), else the next one round-robin.
    func loop(for origin: Origin) -> CurlLoop {
        guard loops.count > 1 else { return loops[0] }
        if configuration.maxConnectionsPerHost != nil {
            return loops[Int(UInt(bitPattern: origin.hashValue) % UInt(loops.count))]
        }
        if let current = loops.first(where: { $0.isCurrentThread }) { return current }
        return loops[nextLoop.add(1, ordering: .relaxed).oldValue % loops.count]
    }

    /// Transfers queued or running, over every loop.
    var transfersInProgress: Int { loops.reduce(0) { $0 + $1.transfersInProgress.load(ordering: .relaxed) } }
    /// Easy handles created by each loop.
    var handlesCreated: [Int] { loops.map { $0.handlesCreated.load(ordering: .relaxed) } }

    /// Sends a request and buffers the whole body, up to `Request.maxBodySize` (default: the client's
    /// `maxBodySize`); a larger body fails with `TrawlError.Code.tooLarge`. Redirects are followed per
    /// the redirect policy. Any HTTP status is a successful response; check `response.status`.
    public func send(_ request: Request) async throws -> Response {
        var redirects = RedirectTracker(request: request, configuration: configuration)
        var current = request
        while true {
            let prepared = try PreparedRequest(current, client: defaults, streaming: false)
            let transfer = Transfer(request: prepared, delivery: .buffered)
            var outcome = try await run(transfer, on: loop(for: prepared.origin))
            guard let next = try redirects.next(after: outcome, request: current) else {
                outcome.head.redirects = redirects.chain
                return Response(head: outcome.head, body: outcome.body)
            }
            current = next
        }
    }

    /// Checks `request` and merges this client's settings into it once, for sending it many times with
    /// `send(_:)` (a load generator sending the same few URLs): each send then skips the URL and header checks.
    /// Throws what `send` would throw for an invalid request, before anything is sent.
    ///
    /// ```swift
    /// let ready = try client.prepare(Request(url: "http://127.0.0.1:8080/health"))
    /// for _ in 0..<1000 { _ = try await client.send(ready) }
    /// ```
    public func prepare(_ request: Request) throws -> PreparedSend {
        PreparedSend(request: request, checked: try PreparedRequest(request, client: defaults, streaming: false), by: self)
    }

    /// Sends a request `prepare(_:)` checked, exactly as `send(prepared.request)` would (redirects included).
    /// A request prepared by another client, or whose body is a one-shot stream, goes through `send(_:)` whole.
    public func send(_ prepared: PreparedSend) async throws -> Response {
        guard prepared.client === self, prepared.request.body?.isReplayable ?? true else {
            return try await send(prepared.request)
        }
        let checked = prepared.checked
        let outcome = try await run(Transfer(request: checked, delivery: .buffered), on: loop(for: checked.origin))
        guard outcome.redirectURL != nil else { return Response(head: outcome.head, body: outcome.body) }
        return try await follow(after: outcome, of: prepared.request)
    }

    /// The rest of a redirect chain whose first hop, `request`, ended in `outcome`.
    private func follow(after first: TransferOutcome, of request: Request) async throws -> Response {
        var redirects = RedirectTracker(request: request, configuration: configuration)
        var outcome = first
        var current = request
        while let next = try redirects.next(after: outcome, request: current) {
            current = next
            let prepared = try PreparedRequest(current, client: defaults, streaming: false)
            outcome = try await run(Transfer(request: prepared, delivery: .buffered), on: loop(for: prepared.origin))
        }
        outcome.head.redirects = redirects.chain
        return Response(head: outcome.head, body: outcome.body)
    }

    /// Sends a request and returns as soon as the final response head arrives; the body follows as an
    /// `AsyncSequence` of chunks with back-pressure. No size limit applies unless the request sets
    /// `maxBodySize`.
    public func stream(_ request: Request) async throws -> StreamingResponse {
        var redirects = RedirectTracker(request: request, configuration: configuration)
        var current = request
        while true {
            let prepared = try PreparedRequest(current, client: defaults, streaming: true)
            let stream = BodyStream(
                highWater: configuration.streamBufferSize, method: prepared.method.rawValue, url: prepared.url)
            let transfer = Transfer(request: prepared, delivery: .streaming(stream))
            let loop = loop(for: prepared.origin)
            stream.connect(
                resume: { [loop, weak transfer] in if let transfer { loop.resumeReceive(transfer) } },
                cancel: { [loop, weak transfer] in if let transfer { loop.cancel(transfer) } })
            let body = ResponseBody(stream: stream)
            var outcome = try await run(transfer, on: loop)
            guard let next = try redirects.next(after: outcome, request: current) else {
                outcome.head.redirects = redirects.chain
                return StreamingResponse(head: outcome.head, body: body)
            }
            current = next
        }
    }

    /// Runs one hop: submits the transfer and waits for its outcome, cancelling it if the task is.
    private func run(_ transfer: Transfer, on loop: CurlLoop) async throws -> TransferOutcome {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                transfer.setContinuation(continuation)
                loop.submit(transfer)
            }
        } onCancel: { [loop] in
            loop.cancel(transfer)
        }
    }
}

/// A request checked once by `Client.prepare(_:)`, to send many times with `Client.send(_:)`.
public struct PreparedSend: Sendable {
    /// The request as it was given.
    public let request: Request
    let checked: PreparedRequest
    let client: Client

    init(request: Request, checked: PreparedRequest, by client: Client) {
        self.request = request
        self.checked = checked
        self.client = client
    }
}
