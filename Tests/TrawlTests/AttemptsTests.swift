import Testing
import TrawlTestSupport

@testable import Trawl

/// `Attempts`, the one attempt policy of `API.send`, a walk's pages and a job's pages: every transition.
@Suite("Attempts: retry after a backoff, refresh once, or fail", .hangGuard)
struct AttemptsTests {
    let policy = RetryPolicy(attempts: 3, backoff: .milliseconds(100), maxBackoff: .seconds(1))

    @Test func retryableFailuresRetryUntilTheAttemptsAreSpent() {
        var attempts = Attempts(policy: policy)
        #expect(attempts.made == 1 && attempts.current == 0)
        guard case .retry(let first) = attempts.failed(retryable: true) else {
            Issue.record("the first failure retries")
            return
        }
        #expect(first >= .zero && first <= .milliseconds(100), "full jitter up to backoff * 2^0")
        #expect(attempts.made == 2 && attempts.current == 1)
        guard case .retry(let second) = attempts.failed(retryable: true) else {
            Issue.record("the second failure retries")
            return
        }
        #expect(second >= .zero && second <= .milliseconds(200), "full jitter up to backoff * 2^1")
        #expect(attempts.failed(retryable: true) == .fail, "three attempts made: no fourth")
        #expect(attempts.made == 3, "a failure that ends the attempts does not count one more")
    }

    @Test func aFailureThatCannotPassOrARequestThatCannotBeResentFailsAtOnce() {
        var attempts = Attempts(policy: policy)
        #expect(attempts.failed(retryable: false) == .fail)
        #expect(attempts.failed(retryable: true, replayable: false) == .fail)
        #expect(attempts.made == 1)
        var never = Attempts(policy: .never)
        #expect(never.failed(retryable: true) == .fail, "RetryPolicy.never makes one attempt")
    }

    @Test func theCredentialsAreRefreshedOnceAndTheRefreshIsAnAttempt() {
        var attempts = Attempts(policy: policy)
        #expect(attempts.mayRefresh)
        #expect(attempts.refreshing() == .refresh)
        #expect(!attempts.mayRefresh && attempts.made == 2 && attempts.current == 1)
        #expect(attempts.refreshing() == .fail, "a second refresh is refused")
        // The refresh counts against the policy: one retry left, then none.
        if case .retry = attempts.failed(retryable: true) {} else { Issue.record("one retry is left") }
        #expect(attempts.failed(retryable: true) == .fail)
    }

    @Test func aRequestThatCannotBeResentIsNotRefreshed() {
        var attempts = Attempts(policy: policy)
        #expect(attempts.refreshing(replayable: false) == .fail)
        #expect(attempts.mayRefresh && attempts.made == 1, "nothing was used")
    }

    @Test func aRefreshIsAllowedEvenWhenTheRetriesAreSpent() {
        var attempts = Attempts(policy: .never)
        #expect(attempts.refreshing() == .refresh, "a 401 answered by fresh credentials is not a retry")
        #expect(attempts.failed(retryable: true) == .fail)
    }
}
