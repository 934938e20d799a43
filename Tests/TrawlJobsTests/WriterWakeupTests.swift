import Foundation
import Synchronization
import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// The job store's writer lets a batch fill while pages come (a page's signal does not wake it), and stops waiting
/// as soon as someone waits for the batch (an urgent signal).
@Suite("WriterWakeup: a batch fills until an urgent signal", .hangGuard, .ownThread)
struct WriterWakeupTests {
    @Test("an urgent signal ends a hold whose deadline is an hour away, once the holder is done")
    func urgentSignalEndsTheHold() async {
        let wakeup = WriterWakeup()
        let done = Atomic(false)
        async let held: Void = withCheckedContinuation { (returned: CheckedContinuation<Void, Never>) in
            Thread {
                wakeup.hold(until: ContinuousClock.now + .seconds(3600)) { done.load(ordering: .acquiring) }
                returned.resume()
            }.start()
        }
        while !wakeup.isHolding { await Task.yield() }
        // A page: the holder is not woken (it would only look and wait again); the batch taken next holds it.
        wakeup.signal(urgent: false)
        #expect(wakeup.isHolding)
        done.store(true, ordering: .releasing)
        wakeup.signal(urgent: true)
        await held
        #expect(!wakeup.isHolding)
    }

    @Test("a signal while the writer waits for work wakes it, urgent or not")
    func pageSignalWakesAnIdleWriter() async {
        let wakeup = WriterWakeup()
        await withCheckedContinuation { (returned: CheckedContinuation<Void, Never>) in
            Thread {
                wakeup.waitForWork()
                returned.resume()
            }.start()
            wakeup.signal(urgent: false)
        }
    }
}
