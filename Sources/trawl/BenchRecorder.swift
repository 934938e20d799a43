import Foundation
import Histogram
import Synchronization
import TrawlEngine

/// What a bench run records while it runs, shared by every worker: per-interval rows, libcurl's phase timings,
/// and the live counters the panel reads. One short lock per request and nothing allocated per request (rows
/// are appended once per interval; the histograms are sized up front).
final class BenchRecorder: Sendable {
    /// One `--interval` of the run.
    struct Row: Sendable, Equatable {
        /// Seconds from the start of the measurement.
        var start: Double
        var end: Double
        var requests = 0
        var errors = 0
        var bytes = 0
        /// Microseconds; zero when no request completed in the interval.
        var p50: UInt64 = 0
        var p99: UInt64 = 0
        var max: UInt64 = 0
        /// Requests in flight when the interval closed.
        var inFlight = 0
        /// Responses by status class: 1xx, 2xx, 3xx, 4xx, 5xx (index 0...4).
        var statusClasses = [0, 0, 0, 0, 0]
    }

    /// libcurl's phases of each transfer, in microseconds: name resolution, TCP connect, TLS handshake and time
    /// to the first response byte (from the start of the transfer).
    struct Phases: Sendable {
        var dns = BenchHistogram.benchPhases()
        var connect = BenchHistogram.benchPhases()
        var tls = BenchHistogram.benchPhases()
        var firstByte = BenchHistogram.benchPhases()
    }

    /// What the live panel shows.
    struct Snapshot: Sendable {
        var elapsed: Double
        var done: Int
        var errors: Int
        var lateStarts: Int
        var inFlight: Int
        /// The last complete interval, if any.
        var last: Row?
    }

    private struct State {
        var index = 0
        var window = BenchHistogram.benchWindow()
        var row: Row
        var rows: [Row] = []
        var phases = Phases()
        var done = 0
        var errors = 0
        var lateStarts = 0
    }

    /// The start of the measurement (the end of the warm-up).
    let origin: ContinuousClock.Instant
    /// The length of an interval in nanoseconds.
    let intervalNanoseconds: Int64
    private let state: Mutex<State>
    private let flight = Atomic<Int>(0)
    private let stop = Atomic<Bool>(false)

    init(origin: ContinuousClock.Instant, interval: Duration) {
        self.origin = origin
        let nanos = interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
        intervalNanoseconds = Swift.max(1, nanos)
        let seconds = Double(intervalNanoseconds) / 1e9
        state = Mutex(State(row: Row(start: 0, end: seconds)))
    }

    /// Set by Ctrl-C: workers send nothing more.
    var isStopped: Bool { stop.load(ordering: .relaxed) }
    func requestStop() { stop.store(true, ordering: .relaxed) }

    /// Around each measured request: `began()` before sending, `ended…` after.
    func began() { flight.add(1, ordering: .relaxed) }
    var inFlight: Int { flight.load(ordering: .relaxed) }

    func ended(
        at instant: ContinuousClock.Instant, latency: Duration, bytes: Int, status: Int, timings: Timings,
        late: Bool = false
    ) {
        flight.subtract(1, ordering: .relaxed)
        let index = intervalIndex(instant)
        let micros = BenchHistogram.microseconds(latency)
        state.withLock { state in
            close(&state, through: index)
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
        }
    }

    func endedWithError(at instant: ContinuousClock.Instant, late: Bool = false) {
        flight.subtract(1, ordering: .relaxed)
        let index = intervalIndex(instant)
        state.withLock { state in
            close(&state, through: index)
            state.row.errors += 1
            state.errors += 1
            if late { state.lateStarts += 1 }
        }
    }

    /// A request cut short by Ctrl-C: neither a response nor an error.
    func abandoned() { flight.subtract(1, ordering: .relaxed) }

    /// Paginated flows (no in-flight count): one page received, or failed.
    func recordPage(_ head: ResponseHead, bytes: Int, began: ContinuousClock.Instant) {
        flight.add(1, ordering: .relaxed)
        let now = ContinuousClock.now
        ended(at: now, latency: began.duration(to: now), bytes: bytes, status: head.status, timings: head.timings)
    }

    func recordPageError() {
        flight.add(1, ordering: .relaxed)
        endedWithError(at: .now)
    }

    /// Closes the intervals that ended before `instant` (called by the ticker, so a stalled interval still gets
    /// its row on time).
    func tick(at instant: ContinuousClock.Instant) {
        let index = intervalIndex(instant)
        state.withLock { close(&$0, through: index) }
    }

    func snapshot(at instant: ContinuousClock.Instant) -> Snapshot {
        let elapsed = instant < origin ? 0 : BenchReport.seconds(origin.duration(to: instant))
        let inFlight = self.inFlight
        return state.withLock { state in
            Snapshot(
                elapsed: elapsed, done: state.done, errors: state.errors, lateStarts: state.lateStarts,
                inFlight: inFlight, last: state.rows.last)
        }
    }

    /// The rows of the run that ended at `end`: the last one is cut short there.
    func finish(at end: ContinuousClock.Instant) -> (rows: [Row], phases: Phases) {
        let index = intervalIndex(end)
        let endSeconds = end < origin ? 0 : BenchReport.seconds(origin.duration(to: end))
        return state.withLock { state in
            close(&state, through: index)
            var rows = state.rows
            // A last interval cut very short with nothing in it (the run ended just after a boundary) is noise.
            let length = Double(intervalNanoseconds) / 1e9
            if state.row.requests + state.row.errors > 0 || endSeconds - state.row.start >= length / 2 {
                var last = state.row
                last.end = Swift.max(last.start, endSeconds)
                Self.summarize(&last, state.window)
                last.inFlight = inFlight
                rows.append(last)
            }
            return (rows, state.phases)
        }
    }

    private func intervalIndex(_ instant: ContinuousClock.Instant) -> Int {
        guard instant > origin else { return 0 }
        let span = origin.duration(to: instant)
        let nanos = span.components.seconds * 1_000_000_000 + span.components.attoseconds / 1_000_000_000
        return Int(nanos / intervalNanoseconds)
    }

    private func close(_ state: inout State, through index: Int) {
        guard index > state.index else { return }
        let seconds = Double(intervalNanoseconds) / 1e9
        while state.index < index {
            var row = state.row
            Self.summarize(&row, state.window)
            row.inFlight = inFlight
            state.rows.append(row)
            state.window.reset()
            state.index += 1
            state.row = Row(start: Double(state.index) * seconds, end: Double(state.index + 1) * seconds)
        }
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

    /// A phase's timings: microseconds up to an hour, 3 significant digits, never resized.
    static func benchPhases() -> Histogram<UInt64> {
        Histogram<UInt64>(
            lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    }

    static func microseconds(_ duration: Duration) -> UInt64 {
        let micros = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        return UInt64(Swift.min(Swift.max(micros, 1), 3_600_000_000))
    }

    /// Records a phase's duration in microseconds (zero kept as zero: a reused connection has no connect phase).
    mutating func recordPhase(_ duration: Duration) {
        let micros = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        record(UInt64(Swift.min(Swift.max(micros, 0), 3_600_000_000)))
    }
}
