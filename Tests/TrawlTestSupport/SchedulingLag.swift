import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How late this machine runs a thread that asked to wake: a thread of its own sleeps 5 ms at a time and keeps
/// the largest oversleep. A check that counts requests by the time a server thread read them can allow for what a
/// held-up thread reads at once (a rate times this lag) instead of a fixed slack that a busy machine exceeds.
///
/// ```swift
/// let lag = SchedulingLag.start()
/// … // the measured interval
/// let late = lag.stop()   // seconds, 0.000x on a quiet machine
/// ```
public final class SchedulingLag: Sendable {
    private let state = Mutex((running: true, worst: 0.0))

    private init() {}

    public static func start() -> SchedulingLag {
        let lag = SchedulingLag()
        let thread = Thread { lag.watch() }
        thread.name = "trawl-test-scheduling-lag"
        thread.start()
        return lag
    }

    private func watch() {
        let clock = ContinuousClock()
        while state.withLock({ $0.running }) {
            let before = clock.now
            usleep(5_000)
            let slept = before.duration(to: clock.now)
            let late = Double(slept.components.seconds) + Double(slept.components.attoseconds) * 1e-18 - 0.005
            state.withLock { $0.worst = max($0.worst, late) }
        }
    }

    /// Stops watching; the largest lateness seen, in seconds.
    public func stop() -> Double {
        state.withLock {
            $0.running = false
            return $0.worst
        }
    }
}
