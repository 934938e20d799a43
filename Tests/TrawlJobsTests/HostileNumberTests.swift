import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine

@testable import TrawlJobs

/// Numbers from servers and job files that used to end in "Double value cannot be converted" (issue 22).
@Suite("hostile numbers: server waits are bounded, job-file seconds are checked", .hangGuard)
struct HostileNumberTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let longest = Duration.seconds(Duration.longestBoundedSeconds)

    @Test("Retry-After 1e400, 1e300, inf and nan are bounded, never a trap")
    func retryAfter() {
        for value in ["1e400", "1e300", "inf", "9223372036854775808"] {
            #expect(RateLimitSignal.wait(status: 429, headers: ["Retry-After": value], now: now) == longest, "\(value)")
        }
        for value in ["nan", "-1e400", "-inf"] {
            #expect(RateLimitSignal.wait(status: 503, headers: ["Retry-After": value], now: now) == .zero, "\(value)")
        }
    }

    @Test("X-RateLimit-Reset 1e300, RateLimit-Reset inf and a combined reset of 1e999 are bounded")
    func resets() {
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1e300"], now: now) == longest)
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["RateLimit-Remaining": "0", "RateLimit-Reset": "inf"], now: now) == longest)
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["RateLimit": "limit=1, remaining=0, reset=1e999"], now: now) == longest)
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "nan"], now: now) == .zero)
    }

    @Test("a bounded wait is capped by max_wait and counted as capped")
    func cappedPause() async {
        let scheduler = RequestScheduler(concurrency: 1, perHost: 1, rate: nil, maxWait: .seconds(2))
        let wait = RateLimitSignal.wait(status: 429, headers: ["Retry-After": "1e400"], now: now) ?? .zero
        let pause = await scheduler.pause("h", for: wait)
        #expect(pause.imposed == .seconds(2))
        #expect(pause.capped)
    }

    @Test("job-file seconds past the bound are an error naming the field")
    func jobFileSeconds() {
        for field in ["max_wait_s", "timeout_s"] {
            let text = "settings:\n  \(field): 1e300\nsources:\n  - name: a\n    url: http://127.0.0.1:9/\n"
                + "    items: items\n    paginate: link\n"
            do {
                _ = try Job.parse(text, file: "j.yaml", environment: [:])
                Issue.record("\(field): 1e300 was accepted")
            } catch {
                #expect(error.field == "settings.\(field)", "\(error)")
                #expect(error.message.contains("at most"), "\(error)")
            }
        }
    }

    @Test("a tiny rate waits long, bounded, instead of trapping")
    func tinyRate() async throws {
        let scheduler = RequestScheduler(concurrency: 1, perHost: 1, rate: 1e-300, maxWait: .seconds(1))
        let waiting = Task { try await scheduler.acquire("h") }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        // Still waiting for its token when cancelled (1e300 s, bounded): cancelled, not admitted, not a trap.
        let result = await waiting.result
        #expect(throws: CancellationError.self) { try result.get() }
    }
}
