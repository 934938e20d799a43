import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
@testable import TrawlBench

/// A report of `latencies` (microseconds) over one second, with `errors` failed requests and these statuses.
private func report(_ latencies: [UInt64], errors: Int = 0, statuses: [Int: Int]? = nil) -> BenchReport {
    var histogram = BenchHistogram.benchLatencies()
    for value in latencies { histogram.record(value) }
    return BenchReport(
        urls: ["http://127.0.0.1:9/"], concurrency: 1, mode: .closed, elapsed: .seconds(1), latencies: histogram,
        bytes: 0, errors: errors > 0 ? ["timeout": errors] : [:], statuses: statuses ?? [200: latencies.count],
        cpuSeconds: 0)
}

@Suite("bench: thresholds, histogram, intervals", .hangGuard)
struct BenchPictureTests {
    @Test(arguments: [
        ("p99<250ms", BenchThreshold.Metric.percentile(99), BenchThreshold.Comparison.less, 250.0, false),
        ("p99.9 < 1s", .percentile(99.9), .less, 1000, false),
        ("mean<=500us", .mean, .lessOrEqual, 0.5, false),
        ("max<2s", .max, .less, 2000, false),
        ("rps>5000", .rps, .greater, 5000, false),
        ("errors<0.1%", .errors, .less, 0.1, true),
        ("status_5xx=0", .statusClass(5), .equal, 0, false),
        ("status_503==2", .status(503), .equal, 2, false),
        ("late_starts>=3", .lateStarts, .greaterOrEqual, 3, false),
    ])
    func thresholdsParse(
        text: String, metric: BenchThreshold.Metric, comparison: BenchThreshold.Comparison, limit: Double,
        percent: Bool
    ) throws {
        let threshold = try BenchThreshold(text)
        #expect(threshold.metric == metric)
        #expect(threshold.comparison == comparison)
        #expect(abs(threshold.limit - limit) < 1e-9)
        #expect(threshold.percent == percent)
    }

    @Test(arguments: [
        ("p99<250", "a latency needs a unit"),
        ("p99<250kg", "'kg' is not a unit of time"),
        ("p100<1s", "unknown metric 'p100'"),
        ("latency<1s", "unknown metric 'latency'"),
        ("errors<1ms", "'ms' does not fit errors"),
        ("rps>5000ms", "rps takes a plain number"),
        ("p99", "no comparison"),
        ("p99!=1ms", "'!=' is not a comparison"),
        ("p99<-1ms", "does not start with a number"),
        ("p99<nanms", "does not start with a number"),
        ("errors<200%", "a percent is at most 100"),
        ("<5ms", "no metric"),
    ])
    func badThresholdsNameTheProblemAndListTheMetrics(text: String, problem: String) {
        do {
            _ = try BenchThreshold(text)
            Issue.record("'\(text)' parsed")
        } catch {
            #expect(error.description.contains(problem), "\(error.description)")
            #expect(error.description.contains("metrics: p50"), "\(error.description)")
            #expect(error.description.contains("us, ms or s"), "\(error.description)")
        }
    }

    @Test func thresholdsCompareTheMeasuredValues() throws {
        // 1000 requests: 990 at 1 ms, 10 at 100 ms; 10 more failed; 5 answered 503.
        var run = report(Array(repeating: 1000, count: 990) + Array(repeating: 100_000, count: 10), errors: 10,
                         statuses: [200: 995, 503: 5])
        run.lateStarts = 4
        func holds(_ text: String) throws -> Bool { try BenchThreshold(text).holds(in: run) }
        #expect(try holds("p50<2ms"))
        #expect(try !holds("p99.5<2ms"))
        #expect(try holds("p99.5<101ms"))
        #expect(try holds("max<=100.1ms"))
        #expect(try !holds("max<99ms"))
        #expect(try holds("rps>=1000"))
        #expect(try !holds("rps>1001"))
        #expect(try holds("errors=10"))
        #expect(try holds("errors<1%"))
        #expect(try !holds("errors<0.9%"))
        #expect(try holds("status_5xx=5"))
        #expect(try holds("status_503<=5"))
        #expect(try !holds("status_2xx<995"))
        #expect(try holds("late_starts=4"))
        let line = try BenchThreshold("errors<0.9%").line(for: run)
        #expect(line.hasPrefix("threshold FAIL  errors<0.9%"), "\(line)")
        #expect(line.contains("measured 0.9901%"), "\(line)")
    }

    @Test func histogramBucketsCoverEveryLatencyOnce() {
        let values: [UInt64] = (1...1000).map { UInt64($0) * 37 } + [90_000, 90_001]
        let buckets = report(values).histogramBuckets()
        // Log buckets with 1-2-5 edges from 0.02 ms to 100 ms: 11 bars, each at most 2.5 times as wide as the last.
        #expect(buckets.count == 11)
        #expect(buckets.map(\.count).reduce(0, +) == values.count)
        #expect(buckets.first?.from == 0.02)
        #expect(buckets.last?.to == 100)
        #expect(buckets.allSatisfy { $0.to / $0.from <= 2.5 + 1e-9 })
        #expect(buckets.last?.count == 2, "the two 90 ms outliers land in the last bucket")
        #expect(buckets.filter { $0.count > 0 }.count >= 8, "\(buckets)")
        #expect(BenchReport.logEdges(low: 1, high: 1) == [1, 2])
        #expect(BenchReport.logEdges(low: 30, high: 2000) == [20, 50, 100, 200, 500, 1000, 2000])
        let lines = report(values).latencyPictureLines(allIntervals: false)
        #expect(lines.contains("Latency histogram (ms):"), "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.hasPrefix("     100.000 [  2] |") }, "\(lines)")
        #expect(lines.contains { $0.contains("p99.99") && $0.contains("max 90.0") }, "\(lines)")
    }

    @Test func recorderCutsRowsAtEachIntervalAndKeepsEmptyOnes() {
        let origin = ContinuousClock.now
        let recorder = BenchRecorder(origin: origin, interval: .milliseconds(100))
        func at(_ ms: Int) -> ContinuousClock.Instant { origin + .milliseconds(ms) }
        for (ms, latency) in [(10, 1000), (50, 3000), (99, 2000)] {
            recorder.began()
            recorder.ended(at: at(ms), latency: .microseconds(latency), bytes: 10, status: 200, timings: .zero)
        }
        recorder.began()
        recorder.endedWithError(at: at(120))
        recorder.began()
        recorder.ended(at: at(350), latency: .microseconds(500), bytes: 7, status: 503, timings: .zero, late: true)
        let (rows, _) = recorder.finish(at: at(380))
        #expect(rows.map(\.requests) == [3, 0, 0, 1])
        #expect(rows.map(\.errors) == [0, 1, 0, 0])
        #expect(rows.map(\.bytes) == [30, 0, 0, 7])
        // An interval's histogram keeps 2 significant digits (1%).
        #expect(abs(Double(rows[0].p50) - 2000) <= 20 && abs(Double(rows[0].max) - 3000) <= 30, "\(rows[0])")
        #expect(rows[3].statusClasses == [0, 0, 0, 0, 1])
        #expect(zip(rows.map(\.start), [0, 0.1, 0.2, 0.3]).allSatisfy { abs($0 - $1) < 1e-9 }, "\(rows)")
        #expect(abs(rows[3].end - 0.38) < 1e-9, "the last row ends with the run")
        let snapshot = recorder.snapshot(at: at(380))
        #expect(snapshot.done == 4 && snapshot.errors == 1 && snapshot.lateStarts == 1 && snapshot.inFlight == 0)
    }

    @Test func recorderMergesTheStripesOfTheLoopThreadsIntoOneRowPerInterval() {
        let origin = ContinuousClock.now
        let recorder = BenchRecorder(origin: origin, interval: .milliseconds(100), stripes: 2)
        func at(_ ms: Int) -> ContinuousClock.Instant { origin + .milliseconds(ms) }
        // Worker 0 (stripe 0) is fast, worker 1 (stripe 1) slow; stripe 1 is silent in the second interval.
        for (worker, ms, latency) in [(0, 10, 1000), (0, 20, 1000), (1, 30, 9000), (0, 150, 2000), (1, 250, 4000)] {
            recorder.began(worker: worker)
            recorder.ended(worker: worker, at: at(ms), latency: .microseconds(latency), bytes: 1, status: 200,
                           timings: .zero)
        }
        recorder.tick(at: at(220))
        #expect(recorder.snapshot(at: at(220)).last?.requests == 1, "the second interval closed on the tick")
        let (rows, _) = recorder.finish(at: at(290))
        #expect(rows.map(\.requests) == [3, 1, 1])
        #expect(abs(Double(rows[0].max) - 9000) <= 90, "the slow stripe's latency is in the first row: \(rows[0])")
        #expect(abs(Double(rows[0].p50) - 1000) <= 10)
        #expect(rows.map(\.bytes) == [3, 1, 1])
        #expect(recorder.snapshot(at: at(290)).done == 5)
    }

    @Test func recorderSplitsLibcurlPhases() {
        let recorder = BenchRecorder(origin: .now, interval: .seconds(1))
        let timings = Timings(
            dns: .microseconds(100), connect: .microseconds(300), tls: .microseconds(1300),
            firstByte: .microseconds(2000), total: .microseconds(2500))
        recorder.began()
        recorder.ended(at: .now, latency: .microseconds(2500), bytes: 1, status: 200, timings: timings)
        let phases = recorder.finish(at: .now).phases
        #expect(phases.dns.maxRecorded == 100)
        #expect(phases.connect.maxRecorded == 200, "connect is counted from the end of name resolution")
        #expect(phases.tls.maxRecorded == 1000, "TLS is counted from the end of the connect")
        #expect(phases.firstByte.maxRecorded == 2000)
    }
}
