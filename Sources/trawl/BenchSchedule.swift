import Foundation

extension BenchRunner {
    /// When each request is due: ticket `i` at `start + i / rate`. Tickets before `warmupTickets` are the
    /// warm-up; `endTicket` is the first ticket not to send.
    struct Schedule: Sendable {
        let start: ContinuousClock.Instant
        let rate: Double
        let warmupTickets: Int
        let endTicket: Int
        /// With -d: nothing starts at or after this instant.
        let deadline: ContinuousClock.Instant?

        init(start: ContinuousClock.Instant, rate: Double, warmup: Duration, limit: Limit) {
            self.start = start
            self.rate = rate
            let warmupTickets = Self.tickets(before: warmup, rate: rate)
            self.warmupTickets = warmupTickets
            switch limit {
            case .requests(let count):
                endTicket = count > Int.max - warmupTickets ? Int.max : warmupTickets + count
                deadline = nil
            case .duration(let span):
                endTicket = Self.tickets(before: warmup + span, rate: rate)
                deadline = start + warmup + span
            }
        }

        func offset(_ ticket: Int) -> Duration {
            .nanoseconds(Int64((Double(ticket) * 1e9 / rate).rounded()))
        }

        func due(_ ticket: Int) -> ContinuousClock.Instant { start + offset(ticket) }

        /// How many tickets are due strictly before `span` after the start.
        static func tickets(before span: Duration, rate: Double) -> Int {
            let seconds = BenchReport.seconds(span)
            var count = max(0, Int((seconds * rate).rounded(.up)))
            func offset(_ ticket: Int) -> Duration { .nanoseconds(Int64((Double(ticket) * 1e9 / rate).rounded())) }
            while count > 0, offset(count - 1) >= span { count -= 1 }
            while offset(count) < span { count += 1 }
            return count
        }
    }
}
