import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An HTTP/1.1 server on the loopback interface for tests, benchmarks and demos.
///
/// It serves deterministic bodies of any size (generated lazily, with back-pressure), echoes
/// requests, and injects faults: truncated bodies, connection resets, malformed chunks, stalls,
/// slow drips and redirect loops. ``endpointHelp`` lists the endpoints.
///
/// ```swift
/// let server = try await TestServer.start()
/// let url = server.url("/bytes/1048576?chunked=1")   // "http://127.0.0.1:PORT/bytes/1048576?chunked=1"
/// // ... fetch it, then:
/// #expect(server.stats.requestsServed == 1)
/// try await server.shutdown()
/// ```
public final class TestServer: Sendable {
    /// Counters since the server started (or since ``resetStats()``).
    ///
    /// ```swift
    /// server.resetStats()
    /// // ... run 8 concurrent requests against /delay/100 ...
    /// #expect(server.stats.maxInFlight == 8)
    /// #expect(server.stats.inFlight == 0)
    /// ```
    public struct Stats: Sendable, Equatable {
        /// TCP connections accepted.
        public var connectionsAccepted = 0
        /// Requests whose head was received.
        public var requestsServed = 0
        /// Requests received and not yet completely answered (a `/stall` stays in flight until
        /// the client closes).
        public var inFlight = 0
        /// The largest `inFlight` seen.
        public var maxInFlight = 0
        /// Bytes handed to the sockets: response heads and bodies.
        public var bytesWritten = 0

        /// All counters zero.
        public init() {}
    }

    /// The port the server listens on (the OS-chosen one when started with port `0`).
    ///
    /// ```swift
    /// let server = try await TestServer.start()
    /// print("listening on \(server.port)")
    /// ```
    public let port: Int
    /// The host the server is bound to, e.g. `127.0.0.1` (used by ``baseURL``).
    public let host: String

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let counters: StatsBox
    /// Per-target request counts (for `/paged` faults), the request log, feeds and shop tokens.
    let book: RequestBook
    /// Changes the feeds every ``LivingFeeds/interval`` (living feeds only).
    private let feedChanges: RepeatedTask?
    private let stopped = Mutex(false)

    private init(
        host: String,
        port: Int,
        group: MultiThreadedEventLoopGroup,
        channel: any Channel,
        counters: StatsBox,
        book: RequestBook,
        feedChanges: RepeatedTask?
    ) {
        self.host = host
        self.port = port
        self.group = group
        self.channel = channel
        self.counters = counters
        self.book = book
        self.feedChanges = feedChanges
    }

    /// Starts listening on `host` (loopback by default).
    ///
    /// ```swift
    /// let server = try await TestServer.start()                  // OS-chosen port, one thread
    /// let bench = try await TestServer.start(threads: System.coreCount)
    /// let likeServe = try await TestServer.start(livingFeeds: TestServer.LivingFeeds())
    /// ```
    ///
    /// - Parameters:
    ///   - host: the address to bind; keep the default unless you know why.
    ///   - port: the port to bind; `0` lets the OS choose (read it back from ``port``).
    ///   - threads: event loop threads; connections are spread across them.
    ///   - livingFeeds: feeds that start with items and change by themselves, as `trawl serve` has them; nil (the
    ///     default, for tests): a feed holds what ``feedAdd(_:count:)`` and ``feedTouch(_:id:)`` put there.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, threads: Int = 1, livingFeeds: LivingFeeds? = nil
    ) async throws -> TestServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let counters = StatsBox()
        let book = RequestBook(livingFeeds: livingFeeds)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.maxMessagesPerRead, value: 16)
                .childChannelOption(.writeBufferWaterMark, value: .init(low: 256 * 1024, high: 1024 * 1024))
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let decoder = HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(decoder))
                        try channel.pipeline.syncOperations.addHandler(ConnectionHandler(stats: counters, book: book))
                    }
                }
                .bind(host: host, port: port)
                .get()
            guard let boundPort = channel.localAddress?.port else {
                throw TestServerError.noLocalAddress
            }
            let feedChanges = livingFeeds.flatMap { living -> RepeatedTask? in
                guard living.interval > .zero else { return nil }
                let interval = TimeAmount(living.interval)
                return group.next().scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                    book.changeFeeds()
                }
            }
            return TestServer(
                host: host, port: boundPort, group: group, channel: channel, counters: counters, book: book,
                feedChanges: feedChanges)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// `http://HOST:PORT`, e.g. `http://127.0.0.1:54321`.
    public var baseURL: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "http://\(host):\(self.port)"
    }

    /// ``baseURL`` followed by `pathAndQuery`, which should start with `/` (one is added if not).
    ///
    /// ```swift
    /// server.url("/status/503")   // "http://127.0.0.1:54321/status/503"
    /// ```
    public func url(_ pathAndQuery: String) -> String {
        pathAndQuery.hasPrefix("/") ? self.baseURL + pathAndQuery : self.baseURL + "/" + pathAndQuery
    }

    /// A snapshot of the counters; safe to read from any thread.
    ///
    /// ```swift
    /// #expect(server.stats.connectionsAccepted == 1)   // two requests shared one connection
    /// ```
    public var stats: Stats {
        self.counters.snapshot
    }

    /// Zeroes the counters, except `inFlight` (requests still running) which also becomes the new
    /// `maxInFlight`.
    ///
    /// ```swift
    /// server.resetStats()
    /// #expect(server.stats.requestsServed == 0)
    /// ```
    public func resetStats() {
        self.counters.reset()
    }

    /// The byte at `offset` of every pattern body (`/bytes`, `/gzip` decoded, `/short`, ...).
    ///
    /// ```swift
    /// #expect(body.enumerated().allSatisfy { $1 == TestServer.patternByte(at: $0) })
    /// ```
    public static func patternByte(at offset: Int) -> UInt8 {
        Pattern.byte(at: offset)
    }

    /// Stops listening, closes every connection and stops the event loop threads. Calling it again
    /// does nothing.
    ///
    /// ```swift
    /// let server = try await TestServer.start()
    /// // ... use it ...
    /// try await server.shutdown()
    /// ```
    public func shutdown() async throws {
        let alreadyStopped = self.stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        self.feedChanges?.cancel()
        do {
            try await self.channel.close()
        } catch ChannelError.alreadyClosed {
            // Closed already: nothing to do.
        }
        try await self.group.shutdownGracefully()
    }
}

/// Errors from ``TestServer``.
///
/// ```swift
/// do { _ = try await TestServer.start() } catch TestServerError.noLocalAddress { /* ... */ }
/// ```
public enum TestServerError: Error, Sendable {
    /// The bound socket reported no port.
    case noLocalAddress
}

/// Thread-safe counters shared by the server and its connection handlers.
final class StatsBox: Sendable {
    private let stats = Mutex(TestServer.Stats())

    var snapshot: TestServer.Stats {
        self.stats.withLock { $0 }
    }

    func connectionAccepted() {
        self.stats.withLock { $0.connectionsAccepted += 1 }
    }

    func requestStarted() {
        self.stats.withLock { stats in
            stats.requestsServed += 1
            stats.inFlight += 1
            stats.maxInFlight = max(stats.maxInFlight, stats.inFlight)
        }
    }

    func requestEnded() {
        self.stats.withLock { $0.inFlight -= 1 }
    }

    func bytesWritten(_ count: Int) {
        guard count > 0 else { return }
        self.stats.withLock { $0.bytesWritten += count }
    }

    func reset() {
        self.stats.withLock { stats in
            stats = TestServer.Stats(inFlight: stats.inFlight, maxInFlight: stats.inFlight)
        }
    }
}

extension TestServer.Stats {
    init(inFlight: Int, maxInFlight: Int) {
        self.init()
        self.inFlight = inFlight
        self.maxInFlight = maxInFlight
    }
}
