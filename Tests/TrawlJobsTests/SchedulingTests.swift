import Foundation
import Testing
import TrawlTestSupport
import TrawlEngine
import TrawlTestServer

@testable import Trawl
@testable import TrawlJobs

@Suite("Job scheduling: rate-limit signals, retries, host gates", .hangGuard)
struct SchedulingTests {
    @Test("Retry-After in seconds and as an HTTP date")
    func retryAfter() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RateLimitSignal.wait(status: 429, headers: ["Retry-After": "3"], now: now) == .seconds(3))
        #expect(RateLimitSignal.wait(status: 503, headers: ["Retry-After": " 0 "], now: now) == .seconds(0))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: now.addingTimeInterval(7))
        let wait = RateLimitSignal.wait(status: 429, headers: ["Retry-After": date], now: now)
        #expect(wait == .seconds(7))
        // A date in the past means now; garbage is ignored.
        #expect(RateLimitSignal.wait(status: 429, headers: ["Retry-After": "yesterday"], now: now) == nil)
        // Retry-After on a 200 is not a pause.
        #expect(RateLimitSignal.wait(status: 200, headers: ["Retry-After": "3"], now: now) == nil)
    }

    @Test("remaining 0 with a reset pauses: X-RateLimit (epoch or delta), RateLimit-*, combined RateLimit")
    func rateLimitHeaders() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000005"], now: now)
            == .seconds(5))
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "2"], now: now) == .seconds(2))
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["X-RateLimit-Remaining": "12", "X-RateLimit-Reset": "1700000005"], now: now) == nil)
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["RateLimit-Remaining": "0", "RateLimit-Reset": "4"], now: now) == .seconds(4))
        #expect(RateLimitSignal.wait(
            status: 200, headers: ["RateLimit": "limit=100, remaining=0, reset=9"], now: now) == .seconds(9))
        #expect(RateLimitSignal.wait(status: 200, headers: ["RateLimit": "limit=100, remaining=3, reset=9"], now: now)
            == nil)
    }

    @Test("retried: connection errors, timeouts, truncation, 408, 429, 5xx; not: other 4xx, bad JSON")
    func retryClassification() {
        let policy = RetryPolicy()
        func status(_ code: Int) -> TrawlError {
            TrawlError(code: .unexpectedStatus, message: "x", method: "GET", url: "http://h/", status: code)
        }
        for code in [408, 429, 500, 502, 503, 504] { #expect(policy.isRetryable(status(code)), "\(code)") }
        for code in [400, 401, 403, 404, 410, 422] { #expect(!policy.isRetryable(status(code)), "\(code)") }
        for code: TrawlError.Code in [.connectFailed, .timeout, .stalled, .truncated, .receiveFailed, .transport] {
            #expect(policy.isRetryable(TrawlError(code: code, message: "x", method: "GET", url: "http://h/")))
        }
        let badJSON = TrawlError(code: .invalidBody, message: "x", method: "GET", url: "http://h/")
        #expect(!policy.isRetryable(badJSON))
        let cut = TrawlError(
            code: .invalidBody, message: "x", method: "GET", url: "http://h/",
            underlying: TrawlError(code: .receiveFailed, message: "reset", method: "GET", url: "http://h/"))
        #expect(policy.isRetryable(cut))
        #expect(!policy.isRetryable(CancellationError()))
    }

    @Test("backoff is full jitter under a doubling, capped ceiling")
    func backoff() {
        let policy = RetryPolicy(attempts: 5, backoff: .milliseconds(100), maxBackoff: .milliseconds(350))
        for _ in 0..<200 {
            #expect(policy.delay(afterAttempt: 1) <= .milliseconds(100))
            #expect(policy.delay(afterAttempt: 2) <= .milliseconds(200))
            #expect(policy.delay(afterAttempt: 6) <= .milliseconds(350))
        }
        let delays = (0..<200).map { _ in policy.delay(afterAttempt: 3).seconds }
        #expect(delays.min()! < 0.1)
        #expect(delays.max()! > 0.2)
    }

    @Test("a pause holds every request to its host, not to others, and is capped")
    func hostPause() async throws {
        let clock = ContinuousClock()
        // Another host goes while one is paused for a minute (a bound far below that: this process may wait
        // seconds for a thread of its cooperative pool).
        let scheduler = RequestScheduler(concurrency: 8, perHost: 8, rate: nil, maxWait: .seconds(60))
        let start = clock.now
        _ = await scheduler.pause("http://a:80", for: .seconds(60))
        try await scheduler.acquire("http://b:80")
        #expect(clock.now - start < .seconds(30), "another host is not paused")
        // The paused host waits out the pause, capped at the scheduler's maximum wait: no sooner than the cap after
        // the pause began (taken before it, so a slow thread only adds), and far sooner than the minute asked for.
        let capped = RequestScheduler(concurrency: 8, perHost: 8, rate: nil, maxWait: .milliseconds(300))
        let begun = clock.now
        let pause = await capped.pause("http://a:80", for: .seconds(60))
        #expect(pause.imposed == .milliseconds(300))
        #expect(pause.capped)
        try await capped.acquire("http://a:80")
        let held = clock.now - begun
        #expect(held >= .milliseconds(300) && held < .seconds(30), "\(held)")
    }

    @Test("per-host and global slots: a waiter gets in when a request finishes")
    func slots() async throws {
        let scheduler = RequestScheduler(concurrency: 3, perHost: 2, rate: nil, maxWait: .seconds(1))
        try await scheduler.acquire("a")
        try await scheduler.acquire("a")
        try await scheduler.acquire("b")
        let waiting = Task {
            try await scheduler.acquire("b")
            return ContinuousClock.now
        }
        try await Task.sleep(for: .milliseconds(100))
        let released = ContinuousClock.now
        await scheduler.release("a")
        let admitted = try await waiting.value
        #expect(admitted >= released)
    }

    @Test("a token bucket spaces requests to one host")
    func tokenBucket() async throws {
        let scheduler = RequestScheduler(concurrency: 64, perHost: 64, rate: 20, maxWait: .seconds(1))
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<40 {
            try await scheduler.acquire("a")
            await scheduler.release("a")
        }
        // A burst of 20, then 20 more at 20/s: about a second. The upper bound only catches a bucket that never
        // refills; on a busy machine (the suite runs in parallel on two shared cores) each of the 20 short sleeps
        // can overshoot by a lot, so it is loose: a tight one failed at 7.6 s.
        let elapsed = clock.now - start
        #expect(elapsed >= .milliseconds(900))
        #expect(elapsed < .seconds(60))
    }

    @Test("rate: the server never receives more than the token bucket lets through")
    func rateAtTheServer() async throws {
        try await TestServer.with { server in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var settings = JobSettings()
            settings.ratePerHost = 20
            // 50 pages, 8 in flight: without the bucket they all arrive within a few milliseconds.
            let unit = pagedUnit(server, "page", ordinal: 0, count: 500, query: "&tag=r")
            let report = try await JobRunner(
                units: [unit], fingerprint: "rate", settings: settings,
                options: JobRunOptions(output: .file(directory + "/out.jsonl"), stateDirectory: directory + "/state")
            ).run()
            #expect(report.failures.isEmpty, "\(report.failures)")
            #expect(fileText(directory + "/out.jsonl") == taggedLines("r", 500))
            let pacing = RequestPacing(server.requestLog.map(\.receivedAt))
            #expect(pacing.count == 50)
            // In no window more than a burst of one second's worth (20) and 20 a second, with 5 requests of slack
            // (a server thread that waits a quarter of a second for a core reads the requests sent meanwhile at
            // once): unpaced, 50 arrive at once. This holds whatever the load: a request held up only arrives
            // later. The rate itself, 1/rate apart after the burst, is measured on `trawl fetch --rate`
            // (FetchSchedulingCLITests): in this process the suite's other tests hold the cooperative pool for
            // seconds at a time, and a client held up that long loses the tokens it would have caught up with.
            let shown = pacing.offsets.map { String(format: "%.3f", $0) }.joined(separator: " ")
            let excess = pacing.excess(rate: 20, burst: 20)
            #expect(excess <= 5, "\(excess) requests more than the bucket allows; received at \(shown)")
        }
    }
}
