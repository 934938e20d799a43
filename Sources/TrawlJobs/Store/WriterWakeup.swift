import Foundation

/// How the job store's writer thread waits: for work, and for a batch to fill. Callers (tasks on the cooperative
/// pool) only `signal`, which takes a lock held for a few instructions and never waits; the writer thread alone
/// blocks, on a condition that a signal ends (no semaphore, no sleep).
final class WriterWakeup: @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var signalled = false

    /// Wakes the writer (work was queued, or the store is closing).
    func signal() {
        condition.lock()
        signalled = true
        condition.signal()
        condition.unlock()
    }

    /// On the writer thread: returns once `signal` was called since the last return.
    func waitForWork() {
        condition.lock()
        while !signalled { condition.wait() }
        signalled = false
        condition.unlock()
    }

    /// On the writer thread: lets a batch fill until `deadline`, or until `done()` says nothing more will come
    /// (checked again on every signal). The signals meanwhile are spent: the batch taken next holds their work.
    func hold(until deadline: ContinuousClock.Instant, unless done: () -> Bool) {
        let clock = ContinuousClock()
        condition.lock()
        defer {
            signalled = false
            condition.unlock()
        }
        while !done() {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { return }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
    }
}
