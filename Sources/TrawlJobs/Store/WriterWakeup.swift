import Foundation

/// How the job store's writer thread waits: for work, and for a batch to fill. Callers (tasks on the cooperative
/// pool) only `signal`, which takes a lock held for a few instructions and never waits; the writer thread alone
/// blocks, on a condition that a signal ends (no semaphore, no sleep).
final class WriterWakeup: @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var signalled = false
    /// Guarded by `condition`: the writer is in `hold`, where only urgent signals can end the wait.
    private var holding = false

    /// Wakes the writer (work was queued, or the store is closing). `urgent: false` (a page queued, which nobody
    /// waits for yet) does not wake a writer that is letting a batch fill: it would only look and wait again, a
    /// context switch per page.
    func signal(urgent: Bool = true) {
        condition.lock()
        signalled = true
        if urgent || !holding { condition.signal() }
        condition.unlock()
    }

    /// The writer is in `hold` (for tests).
    var isHolding: Bool {
        condition.lock()
        defer { condition.unlock() }
        return holding
    }

    /// On the writer thread: returns once `signal` was called since the last return.
    func waitForWork() {
        condition.lock()
        while !signalled { condition.wait() }
        signalled = false
        condition.unlock()
    }

    /// On the writer thread: lets a batch fill until `deadline`, or until `done()` says nothing more will come
    /// (checked again on every urgent signal). The signals meanwhile are spent: the batch taken next holds their
    /// work.
    func hold(until deadline: ContinuousClock.Instant, unless done: () -> Bool) {
        let clock = ContinuousClock()
        condition.lock()
        holding = true
        defer {
            holding = false
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
