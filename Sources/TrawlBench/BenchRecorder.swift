import Foundation
import Histogram
import Synchronization
import TrawlEngine

/// What a bench run records while it runs, shared by every worker: per-interval rows, libcurl's phase timings,
/// and the live counters the panel reads. One short lock per request and nothing allocated per request (rows
/// are appended once per interval; the histograms are sized up front).
package final class BenchRecorder: Sendable {
    /// One `--interval` of the run.
    package struct Row: Sendable, Equatable {
        /// Seconds from the start of the measurement.
        package var start: Double
        package var end: Double
        package var requests = 0
        package var errors = 0
        package var bytes = 0
        /// Microseconds; zero when no request completed in the interval.
        package var p50: UInt64 = 0
        package var p99: UInt64 = 0
        package var max: UInt64 = 0
        /// Requests in flight when the interval closed.
        package var inFlight = 0
        /// Responses by status class: 1xx, 2xx, 3xx, 4xx, 5xx (index 0...4).
        package var statusClasses = [0, 0, 0, 0, 0]
    }

    /// libcurl's phases of each transfer, in microseconds (2 significant digits): name resolution, TCP connect,
    /// TLS handshake and time to the first response byte (from the start of the transfer).
    package struct Phases: Sendable {
        package var dns = BenchHistogram.benchWindow()
        package var connect = BenchHistogram.benchWindow()
        package var tls = BenchHistogram.benchWindow()
        package var firstByte = BenchHistogram.benchWindow()
    }

    /// What the live panel shows.
    package struct Snapshot: Sendable {
        package var elapsed: Double
        package var done: Int
        package var errors: Int
        package var lateStarts: Int
        package var inFlight: Int
        /// The last complete interval, if any.
        package var last: Row?
    }

    /// What one stripe (the workers of one loop thread) records; the stripes never share a lock or a cache line
    /// on the hot path.
    private struct StripeState {
        var index = 0
        var window = BenchHistogram.benchWindow()
        var row: Row
        var phases = Phases()
        var done = 0
        var errors = 0
        var lateStarts = 0
    }

    private final class Stripe: Sendable {
        let state: Mutex<StripeState>
        let flight = Atomic<Int>(0)
        init(row: Row) { state = Mutex(StripeState(row: row)) }
    }

    /// One stripe's share of a closed interval.
    private struct Contribution {
        var index: Int
        var window: BenchHistogram?
        var row: Row
    }

    /// Intervals whose stripes have not all reported yet, and the rows complete so far (once per interval).
    private struct Rows {
        var pending: [Int: (window: BenchHistogram?, row: Row, count: Int)] = [:]
        var rows: [Row] = []
        /// The complete intervals' latencies together, for the live view (`--tui`): added once per interval.
        var total: BenchHistogram?
        var statusClasses = [0, 0, 0, 0, 0]
    }

    /// What the live view (`--tui`) draws: the complete intervals so far (the last `recent` rows), their latencies
    /// together and their responses by status class.
    package struct Live: Sendable {
        package var rows: [Row]
        package var latencies: BenchHistogram?
        package var statusClasses: [Int]
    }

    package func live(recent: Int = 60) -> Live {
        rows.withLock { Live(rows: Array($0.rows.suffix(recent)), latencies: $0.total, statusClasses: $0.statusClasses) }
    }

    /// The start of the measurement (the end of the warm-up).
    let origin: ContinuousClock.Instant
    /// The length of an interval in nanoseconds.
    let intervalNanoseconds: Int64
    private let stripes: [Stripe]
    private let rows: Mutex<Rows>
    private let stop = Atomic<Bool>(false)
    private let cut = Atomic<Bool>(false)

    /// `stripes`: one per engine loop thread; worker `w` records into stripe `w % stripes`.
    package init(origin: ContinuousClock.Instant, interval: Duration, stripes: Int = 1) {
        self.origin = origin
        let nanos = interval.wholeNanoseconds
        intervalNanoseconds = Swift.max(1, nanos)
        let seconds = Double(intervalNanoseconds) / 1e9
        self.stripes = (0..<Swift.max(1, stripes)).map { _ in Stripe(row: Row(start: 0, end: seconds)) }
        rows = Mutex(Rows())
    }

    /// Set by Ctrl-C: workers send nothing more.
    package var isStopped: Bool { stop.load(ordering: .relaxed) }
    package func requestStop() { stop.store(true, ordering: .relaxed) }

    /// Set at the end of `-d` plus its grace: the requests still in flight are being cancelled, and each that
    /// fails now is counted as cut off, not as an error.
    package var isCutOff: Bool { cut.load(ordering: .relaxed) }
    package func cutOff() { cut.store(true, ordering: .relaxed) }

    private func stripe(_ worker: Int) -> Stripe { stripes[worker % stripes.count] }

    /// Around each measured request: `began()` before sending, `ended…` after.
    func began(worker: Int = 0) { stripe(worker).flight.add(1, ordering: .relaxed) }
    var inFlight: Int { stripes.reduce(0) { $0 + $1.flight.load(ordering: .relaxed) } }

    func ended(
        worker: Int = 0, at instant: ContinuousClock.Instant, latency: Duration, bytes: Int, status: Int,
        timings: Timings, late: Bool = false
    ) {
        let stripe = stripe(worker)
        stripe.flight.subtract(1, ordering: .relaxed)
        let index = intervalIndex(instant)
        let micros = BenchHistogram.microseconds(latency)
        let closed = stripe.state.withLock { state -> [Contribution] in
            let closed = close(&state, through: index, flight: stripe)
            state.window.record(micros)
            state.row.requests += 1
            state.row.bytes += bytes
            let statusClass = status / 100 - 1
            if (0..<5).contains(statusClass) { state.row.statusClasses[statusClass] += 1 }
            state.done += 1
            if late { state.lateStarts += 1 }
            let dns = timings.dns
            state.phases.dns.recordPhase(dns)
            state.phases.connect.recordPhase(timings.connect > .zero ? timings.connect - dns : .zero)
            state.phases.tls.recordPhase(timings.tls > .zero ? timings.tls - timings.connect : .zero)
            state.phases.firstByte.recordPhase(timings.firstByte)
            return closed
        }
        if !closed.isEmpty { submit(closed) }
    }

    /// A failed request: an error, or (`status`) a response whose status is not expected, which still counts in
    /// its status class and bytes.
    func endedWithError(
        worker: Int = 0, at instant: ContinuousClock.Instant, late: Bool = false, status: Int? = nil, bytes: Int = 0
    ) {
        let stripe = stripe(worker)
        stripe.flight.subtract(1, ordering: .relaxed)
        let index = intervalIndex(instant)
        let closed = stripe.state.withLock { state -> [Contribution] in
            let closed = close(&state, through: index, flight: stripe)
            state.row.errors += 1
            state.row.bytes += bytes
            if let status, case let statusClass = status / 100 - 1, (0..<5).contains(statusClass) {
                state.row.statusClasses[statusClass] += 1
            }
            state.errors += 1
            if late { state.lateStarts += 1 }
            return closed
        }
        if !closed.isEmpty { submit(closed) }
    }

    /// A request cut short by Ctrl-C or by the end of `-d`: neither a response nor an error.
    func abandoned(worker: Int = 0) { stripe(worker).flight.subtract(1, ordering: .relaxed) }

    /// Paginated flows: one page received, or failed.
    func recordPage(worker: Int, _ head: ResponseHead, bytes: Int, began: ContinuousClock.Instant) {
        stripe(worker).flight.add(1, ordering: .relaxed)
        let now = ContinuousClock.now
        ended(
            worker: worker, at: now, latency: began.duration(to: now), bytes: bytes, status: head.status,
            timings: head.timings)
    }

    func recordPageError(worker: Int, status: Int? = nil, bytes: Int = 0) {
        stripe(worker).flight.add(1, ordering: .relaxed)
        endedWithError(worker: worker, at: .now, status: status, bytes: bytes)
    }

    /// Closes the intervals that ended before `instant` in every stripe (called by the ticker, so a stalled
    /// interval still gets its row on time).
    package func tick(at instant: ContinuousClock.Instant) {
        let index = intervalIndex(instant)
        for stripe in stripes {
            let closed = stripe.state.withLock { close(&$0, through: index, flight: stripe) }
            if !closed.isEmpty { submit(closed) }
        }
    }

    package func snapshot(at instant: ContinuousClock.Instant) -> Snapshot {
        let elapsed = instant < origin ? 0 : BenchReport.seconds(origin.duration(to: instant))
        var snapshot = Snapshot(elapsed: elapsed, done: 0, errors: 0, lateStarts: 0, inFlight: inFlight, last: nil)
        for stripe in stripes {
            stripe.state.withLock { state in
                snapshot.done += state.done
                snapshot.errors += state.errors
                snapshot.lateStarts += state.lateStarts
            }
        }
        snapshot.last = rows.withLock { $0.rows.last }
        return snapshot
    }

    /// The rows of the run that ended at `end` (every worker done): the last one is cut short there.
    func finish(at end: ContinuousClock.Instant) -> (rows: [Row], phases: Phases) {
        tick(at: end)
        let index = intervalIndex(end)
        let endSeconds = end < origin ? 0 : BenchReport.seconds(origin.duration(to: end))
        var last = Row(start: 0, end: 0)
        var window: BenchHistogram?
        var phases = Phases()
        for stripe in stripes {
            stripe.state.withLock { state in
                last.start = state.row.start
                Self.merge(&last, state.row)
                if state.row.requests > 0 { Self.add(&window, state.window) }
                phases.dns.add(state.phases.dns)
                phases.connect.add(state.phases.connect)
                phases.tls.add(state.phases.tls)
                phases.firstByte.add(state.phases.firstByte)
            }
        }
        var result = rows.withLock { $0.rows }
        // A last interval cut very short with nothing in it (the run ended just after a boundary) is noise.
        let length = Double(intervalNanoseconds) / 1e9
        if last.requests + last.errors > 0 || endSeconds - last.start >= length / 2 {
            last.start = Double(index) * length
            last.end = Swift.max(last.start, endSeconds)
            if let window { Self.summarize(&last, window) }
            last.inFlight = inFlight
            result.append(last)
        }
        return (result, phases)
    }

    private func intervalIndex(_ instant: ContinuousClock.Instant) -> Int {
        guard instant > origin else { return 0 }
        let span = origin.duration(to: instant)
        let nanos = span.wholeNanoseconds
        return Int(nanos / intervalNanoseconds)
    }

    /// The stripe's intervals before `index`, handed over (their windows copied: once per interval).
    private func close(_ state: inout StripeState, through index: Int, flight stripe: Stripe) -> [Contribution] {
        guard index > state.index else { return [] }
        let seconds = Double(intervalNanoseconds) / 1e9
        var closed: [Contribution] = []
        while state.index < index {
            var row = state.row
            row.inFlight = stripe.flight.load(ordering: .relaxed)
            closed.append(
                Contribution(index: state.index, window: row.requests > 0 ? state.window : nil, row: row))
            if row.requests > 0 { state.window.reset() }
            state.index += 1
            state.row = Row(start: Double(state.index) * seconds, end: Double(state.index + 1) * seconds)
        }
        return closed
    }

    /// Adds stripes' shares; an interval every stripe has reported becomes a row, in order.
    private func submit(_ contributions: [Contribution]) {
        let count = stripes.count
        rows.withLock { rows in
            for part in contributions {
                var entry = rows.pending[part.index] ?? (nil, Row(start: part.row.start, end: part.row.end), 0)
                Self.merge(&entry.row, part.row)
                entry.row.inFlight += part.row.inFlight
                if let window = part.window { Self.add(&entry.window, window) }
                entry.count += 1
                rows.pending[part.index] = entry
            }
            while let entry = rows.pending[rows.rows.count], entry.count == count {
                var row = entry.row
                if let window = entry.window {
                    Self.summarize(&row, window)
                    Self.add(&rows.total, window)
                }
                for index in 0..<5 { rows.statusClasses[index] += row.statusClasses[index] }
                rows.rows.append(row)
                rows.pending[rows.rows.count - 1] = nil
            }
        }
    }

    private static func merge(_ row: inout Row, _ part: Row) {
        row.requests += part.requests
        row.errors += part.errors
        row.bytes += part.bytes
        for index in 0..<5 { row.statusClasses[index] += part.statusClasses[index] }
    }

    private static func add(_ window: inout BenchHistogram?, _ part: BenchHistogram) {
        if window == nil { window = part } else { window?.add(part) }
    }

    private static func summarize(_ row: inout Row, _ window: BenchHistogram) {
        guard window.totalCount > 0 else { return }
        row.p50 = window.valueAtPercentile(50)
        row.p99 = window.valueAtPercentile(99)
        row.max = window.maxRecorded
    }
}

extension Histogram where Count == UInt64 {
    /// One interval's latencies: 2 significant digits (1% resolution), microseconds up to an hour, about 25 KB,
    /// never resized (recording does not allocate).
    static func benchWindow() -> Histogram<UInt64> {
        Histogram<UInt64>(
            lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .two)
    }

    static func microseconds(_ duration: Duration) -> UInt64 {
        let micros = duration.wholeMicroseconds
        return UInt64(Swift.min(Swift.max(micros, 1), 3_600_000_000))
    }

    /// Records a phase's duration in microseconds (zero kept as zero: a reused connection has no connect phase).
    mutating func recordPhase(_ duration: Duration) {
        let micros = duration.wholeMicroseconds
        record(UInt64(Swift.min(Swift.max(micros, 0), 3_600_000_000)))
    }
}
