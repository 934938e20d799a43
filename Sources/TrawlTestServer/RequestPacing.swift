/// How requests were spaced in time, from the receive times of ``TestServer/requestLog``: for checking a
/// client's rate limit where it matters, at the server.
///
/// A token bucket of `burst` tokens refilled at `rate` per second lets at most `burst + rate × T` requests
/// through in any window of `T` seconds, and once its first burst is spent it lets one through every `1 / rate`
/// seconds.
///
/// ```swift
/// let pacing = RequestPacing(server.requestLog.map(\.receivedAt))
/// #expect(pacing.excess(rate: 20, burst: 20) <= 5)                  // never more than the bucket lets through
/// let measured = try #require(pacing.scheduledRate(from: 22, nominal: 20))   // after the first burst
/// #expect(abs(measured / 20 - 1) <= 0.1)
/// ```
public struct RequestPacing: Sendable {
    /// The receive times, in seconds after the first, in order.
    public let offsets: [Double]

    /// The pacing of requests received at `instants` (in any order).
    ///
    /// ```swift
    /// let pacing = RequestPacing(server.requestLog.filter { $0.target.hasPrefix("/paged/") }.map(\.receivedAt))
    /// ```
    public init(_ instants: [ContinuousClock.Instant]) {
        let sorted = instants.sorted()
        guard let first = sorted.first else {
            self.offsets = []
            return
        }
        self.offsets = sorted.map { instant in
            let elapsed = (instant - first).components
            return Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
        }
    }

    /// The number of requests.
    ///
    /// ```swift
    /// #expect(RequestPacing(server.requestLog.map(\.receivedAt)).count == 50)
    /// ```
    public var count: Int { self.offsets.count }

    /// The most requests any window of the log held beyond what a token bucket of `burst` tokens refilled at
    /// `rate` per second lets through in a window of its length (`count - burst - rate × length`); 0 or less
    /// when the requests kept to the bucket. Delays only spread requests out, so this holds on a loaded machine.
    ///
    /// ```swift
    /// #expect(pacing.excess(rate: 20, burst: 20) <= 5)   // slack: a busy server thread reads a backlog at once
    /// ```
    public func excess(rate: Double, burst: Double) -> Double {
        var worst = -burst
        for start in self.offsets.indices {
            for end in start..<self.offsets.count {
                let held = Double(end - start + 1)
                worst = max(worst, held - burst - rate * (self.offsets[end] - self.offsets[start]))
            }
        }
        return worst
    }

    /// The rate (requests per second) of the schedule the requests from the one at `index` (counted from 0) on
    /// kept to, by ``punctualRate(_:nominal:)`` with each request's number as its amount; `nil` with fewer than 3.
    ///
    /// ```swift
    /// let measured = pacing.scheduledRate(from: 22, nominal: 20)   // skip a 20-request burst and one refill
    /// ```
    public func scheduledRate(from index: Int, nominal: Double) -> Double? {
        let start = max(0, index)
        guard start < self.offsets.count else { return nil }
        let points = self.offsets[start...].enumerated().map { (amount: Double($0.offset), time: $0.element) }
        return Self.punctualRate(points, nominal: nominal)
    }

    /// The rate of a schedule seen through delays: `points` are (amount done, when), in order, each no earlier than
    /// the schedule allowed but possibly later (a client or server that was held up; a client that caught up with
    /// a burst is still no earlier). The most punctual point of the first third and of the last third (the
    /// earliest against `nominal`) are taken to be on time, and the rate is the slope between them. One punctual
    /// point in each third is enough, so a machine busy enough to hold processes up for a while at a time leaves
    /// it as it was; a schedule that runs at another rate moves it. `nil` with fewer than 3 points or no progress.
    ///
    /// ```swift
    /// let rate = RequestPacing.punctualRate([(0, 0.0), (1, 0.09), (2, 0.1), (3, 0.15)], nominal: 20)   // 20
    /// ```
    public static func punctualRate(_ points: [(amount: Double, time: Double)], nominal: Double) -> Double? {
        guard points.count >= 3, nominal > 0 else { return nil }
        let third = points.count / 3
        func punctual(_ slice: ArraySlice<(amount: Double, time: Double)>) -> (amount: Double, time: Double)? {
            slice.min { $0.time - $0.amount / nominal < $1.time - $1.amount / nominal }
        }
        guard let early = punctual(points.prefix(third)), let late = punctual(points.suffix(third)),
            late.amount > early.amount, late.time > early.time
        else { return nil }
        return (late.amount - early.amount) / (late.time - early.time)
    }
}
