import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// The report's rate-limit seconds are the wall time a host was paused: overlapping pauses count once.
@Suite("rate-limit pauses in wall time", .hangGuard)
struct PauseWallTimeTests {
    @Test("41 one-second pauses at once are one second; a later pause adds its own length, a partial overlap the rest")
    func overlappingPausesCountOnce() {
        let metrics = JobMetrics()
        let start = ContinuousClock.now
        let pause = RequestScheduler.Pause(host: "http://a", requested: .seconds(1), imposed: .seconds(1))
        for index in 0..<41 { metrics.paused(source: "s", pause, at: start + .milliseconds(index)) }
        var stats = metrics.finishedReport().totals
        #expect(stats.rateLimitWaits == 41)
        #expect(abs(stats.rateLimitWaitSeconds - 1.040) < 0.0001)

        metrics.paused(source: "s", pause, at: start + .seconds(5))       // apart: +1 s
        metrics.paused(source: "s", pause, at: start + .milliseconds(5500))  // half inside the last: +0.5 s
        stats = metrics.finishedReport().totals
        #expect(abs(stats.rateLimitWaitSeconds - 2.540) < 0.0001)
        #expect(abs((metrics.finishedReport().hosts["http://a"]?.rateLimitWaitSeconds ?? 0) - 2.540) < 0.0001)
        #expect(abs((metrics.finishedReport().sources["s"]?.rateLimitWaitSeconds ?? 0) - 2.540) < 0.0001)
    }

    @Test("pauses of two hosts at once: each host counts its own; the job counts the wall time once")
    func hostsPausedTogether() {
        let metrics = JobMetrics()
        let start = ContinuousClock.now
        for host in ["http://a", "http://b"] {
            let pause = RequestScheduler.Pause(host: host, requested: .seconds(2), imposed: .seconds(2))
            metrics.paused(source: "s", pause, at: start)
        }
        let report = metrics.finishedReport()
        #expect(abs(report.totals.rateLimitWaitSeconds - 2) < 0.0001)
        #expect(abs((report.hosts["http://a"]?.rateLimitWaitSeconds ?? 0) - 2) < 0.0001)
        #expect(abs((report.hosts["http://b"]?.rateLimitWaitSeconds ?? 0) - 2) < 0.0001)
    }
}

extension JobMetrics {
    /// The report of a complete run with no outputs: the counters alone.
    func finishedReport() -> JobReport {
        report(
            startedAt: Date(), complete: true, resumed: false, units: JobReport.UnitCounts(), outputs: [], flags: [],
            stateDirectory: nil)
    }
}
