import NIOCore
import Synchronization

/// One request as recorded in ``TestServer/requestLog``.
///
/// ```swift
/// let pages = server.requestLog.filter { $0.target.hasPrefix("/paged/") }
/// #expect(pages.map(\.status) == [429, 200])
/// ```
public struct LoggedRequest: Sendable, Equatable {
    /// The request target exactly as sent: path and query, e.g. `/paged/page?page=2&fault_429=2`.
    public let target: String
    /// The request method, e.g. `GET`.
    public let method: String
    /// When the request head arrived, on the continuous clock (compare with `ContinuousClock.now`
    /// taken in the test).
    public let receivedAt: ContinuousClock.Instant
    /// The status answered (for a fault that resets or truncates, the status of the head that was sent).
    public let status: Int
    /// Its headers, names lowercased (the last value of a repeated one), for tests of where credentials go.
    public let headers: [String: String]

    /// A log entry; the server makes these, tests rarely need to.
    ///
    /// ```swift
    /// let entry = LoggedRequest(target: "/echo", method: "GET", receivedAt: .now, status: 200)
    /// ```
    public init(
        target: String, method: String, receivedAt: ContinuousClock.Instant, status: Int,
        headers: [String: String] = [:]
    ) {
        self.target = target
        self.method = method
        self.receivedAt = receivedAt
        self.status = status
        self.headers = headers
    }
}

extension TestServer {
    /// The most entries ``requestLog`` keeps; older ones are dropped first.
    ///
    /// ```swift
    /// #expect(server.requestLog.count <= TestServer.requestLogLimit)
    /// ```
    public static let requestLogLimit = 200_000

    /// Every request answered since the server started (or since ``resetRequestLog()``), oldest first:
    /// a thread-safe snapshot of at most ``requestLogLimit`` entries (the most recent ones).
    ///
    /// A request is logged once its head and body have been received and its response chosen, with
    /// the time its head arrived; a request whose connection closed before it was complete, or that
    /// could not be parsed, is not logged.
    ///
    /// ```swift
    /// let pause = ContinuousClock.now
    /// // ... a client waits out a 429 with Retry-After: 1 ...
    /// let early = server.requestLog.filter { $0.receivedAt > pause && $0.receivedAt < pause + .seconds(1) }
    /// #expect(early.isEmpty)
    /// let page2 = server.requestLog.filter { $0.target.contains("page=2&") }.count
    /// ```
    public var requestLog: [LoggedRequest] {
        self.book.logSnapshot
    }

    /// Empties ``requestLog``. The per-target request counts that drive `/paged` faults are kept.
    ///
    /// ```swift
    /// server.resetRequestLog()
    /// #expect(server.requestLog.isEmpty)
    /// ```
    public func resetRequestLog() {
        self.book.clearLog()
    }
}

/// Per-server request bookkeeping shared by the connection handlers: how many times each `/paged`
/// target was requested (for transient faults), the request log, and the state of `/feed` and `/shop`.
final class RequestBook: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    private let log = Mutex(CircularBuffer<LoggedRequest>(initialCapacity: 1024))
    /// The items of each `/feed/NAME` (``FeedEndpoint``).
    let feeds = Mutex<[String: [FeedEndpoint.Item]]>([:])
    /// Per feed, the `since` values its requests fail for (``TestServer/feedFail(_:since:)``).
    let feedFaults = Mutex<[String: Set<String>]>([:])
    /// Whether and how feeds change by themselves (`trawl serve`); nil: only tests change them.
    let livingFeeds: TestServer.LivingFeeds?
    /// The bearer tokens `/shop/token` issued, with when each expires (``ShopEndpoint``).
    let shopTokens = Mutex<[String: ContinuousClock.Instant]>([:])

    init(livingFeeds: TestServer.LivingFeeds? = nil) {
        self.livingFeeds = livingFeeds
    }

    /// Counts one more request of `target` and returns its number, from 1.
    func nextAttempt(for target: String) -> Int {
        self.counts.withLock { counts in
            let attempt = (counts[target] ?? 0) + 1
            counts[target] = attempt
            return attempt
        }
    }

    func record(_ entry: LoggedRequest) {
        self.log.withLock { log in
            if log.count >= TestServer.requestLogLimit {
                log.removeFirst()
            }
            log.append(entry)
        }
    }

    var logSnapshot: [LoggedRequest] {
        self.log.withLock { Array($0) }
    }

    func clearLog() {
        self.log.withLock { $0.removeAll() }
    }
}
