import Foundation
import Testing
@testable import TrawlBench
import TrawlTestSupport

@Suite("bench: the open model's schedule along a ramp", .hangGuard)
struct BenchScheduleTests {
    /// Requests due in the first `t` seconds of a ramp from `r0` to `r1` over `span` seconds.
    private func dueBy(_ t: Double, _ r0: Double, _ r1: Double, _ span: Double) -> Double {
        let onRamp = min(t, span)
        return r0 * onRamp + (r1 - r0) / span * onRamp * onRamp / 2 + max(0, t - span) * r1
    }

    @Test(arguments: [(100.0, 1000.0, 2.0), (1000.0, 100.0, 2.0), (50.0, 50.0, 1.0)])
    func ticketsFollowTheRampThenTheEndRate(r0: Double, r1: Double, span: Double) {
        let schedule = BenchRunner.Schedule(
            start: .now, rate: r0, warmup: .seconds(1), limit: .duration(.seconds(3)),
            ramp: BenchRunner.Ramp(endRate: r1, seconds: span))
        #expect(schedule.warmupTickets == Int(r0), "the warm-up runs at START")
        var previous = Duration.zero
        for ticket in 0..<schedule.endTicket {
            let offset = schedule.offset(ticket)
            #expect(offset >= previous)
            previous = offset
        }
        // Tickets due by each instant of the measurement agree with the integral of the rate.
        for t in stride(from: 0.25, through: 3, by: 0.25) {
            let due = (schedule.warmupTickets..<schedule.endTicket).filter {
                schedule.offset($0) < .nanoseconds(Int64((1 + t) * 1e9))
            }.count
            #expect(abs(Double(due) - dueBy(t, r0, r1, span)) <= 1.01, "at \(t) s: \(due)")
        }
        #expect(abs(Double(schedule.endTicket - schedule.warmupTickets) - dueBy(3, r0, r1, span)) <= 1.01)
    }
}
