/// How long a transfer may take. Time spent waiting in the client's own queue (for a free
/// concurrency slot) never counts: the clock starts when the transfer starts.
///
/// ```swift
/// var config = Client.Configuration()
/// config.timeouts = Timeouts(connect: .seconds(5), total: .seconds(60), stall: .seconds(20))
/// ```
public struct Timeouts: Sendable, Hashable {
    /// Time to establish the connection (TCP and TLS).
    public var connect: Duration?
    /// Time for the whole transfer, body included. `nil` means no limit (the default: streamed
    /// bodies can be large; `stall` catches dead servers).
    public var total: Duration?
    /// A transfer is aborted when fewer than `stallMinimumBytesPerSecond` bytes per second move for
    /// this long. Time spent paused because the consumer is slow does not count.
    public var stall: Duration?
    public var stallMinimumBytesPerSecond: Int

    public init(
        connect: Duration? = .seconds(10),
        total: Duration? = nil,
        stall: Duration? = .seconds(30),
        stallMinimumBytesPerSecond: Int = 1
    ) {
        self.connect = connect
        self.total = total
        self.stall = stall
        self.stallMinimumBytesPerSecond = stallMinimumBytesPerSecond
    }

    /// Per-request overrides; a `nil` field keeps the client's value.
    public struct Override: Sendable, Hashable {
        public var connect: Duration?
        public var total: Duration?
        public var stall: Duration?
        public init(connect: Duration? = nil, total: Duration? = nil, stall: Duration? = nil) {
            self.connect = connect
            self.total = total
            self.stall = stall
        }
    }

    func applying(_ override: Override) -> Timeouts {
        var result = self
        if let connect = override.connect { result.connect = connect }
        if let total = override.total { result.total = total }
        if let stall = override.stall { result.stall = stall }
        return result
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so that a tiny positive duration never becomes "no limit" (0).
    var trawlMilliseconds: Int {
        let (seconds, attoseconds) = components
        // Saturating: a duration of Int64.max seconds is "as long as libcurl can wait", not an overflow trap.
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow, whole < Int64.max - 1000 else { return seconds < 0 ? 1 : Int(Int64.max) }
        let millis = whole + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(max(1, millis))
    }
}
