import Foundation

extension BenchRunner {
    /// `--rate START:END --ramp SECONDS`: the open model's rate rises (or falls) linearly from START to END over
    /// SECONDS of the measurement, then stays at END (k6's ramping arrival rate). The warm-up runs at START.
    package struct Ramp: Sendable, Equatable {
        package var endRate: Double
        package var seconds: Double

        package init(endRate: Double, seconds: Double) {
            self.endRate = endRate
            self.seconds = seconds
        }
    }

    /// When each request is due: ticket `i` at `start + i / rate` (or along the ramp). Tickets before
    /// `warmupTickets` are the warm-up; `endTicket` is the first ticket not to send.
    package struct Schedule: Sendable {
        package let start: ContinuousClock.Instant
        package let rate: Double
        package let ramp: Ramp?
        package let warmupSeconds: Double
        package let warmupTickets: Int
        package let endTicket: Int
        /// With -d: nothing starts at or after this instant.
        package let deadline: ContinuousClock.Instant?

        init(start: ContinuousClock.Instant, rate: Double, warmup: Duration, limit: Limit, ramp: Ramp? = nil) {
            self.start = start
            self.rate = rate
            self.ramp = ramp
            warmupSeconds = BenchReport.seconds(warmup)
            let warmupTickets = Self.tickets(before: warmup, rate: rate)
            self.warmupTickets = warmupTickets
            switch limit {
            case .requests(let count):
                endTicket = count > Int.max - warmupTickets ? Int.max : warmupTickets + count
                deadline = nil
            case .duration(let span):
                if let ramp {
                    endTicket = Self.firstTicket(
                        atOrAfter: warmupSeconds + BenchReport.seconds(span),
                        offset: { Self.rampOffset($0, rate: rate, ramp: ramp, warmupTickets, warmup) },
                        upperBound: warmupTickets
                            + Int((BenchReport.seconds(span) * max(rate, ramp.endRate)).rounded(.up)) + 2)
                } else {
                    endTicket = Self.tickets(before: warmup + span, rate: rate)
                }
                deadline = start + warmup + span
            }
        }

        func offset(_ ticket: Int) -> Duration {
            guard let ramp else { return .nanoseconds(Int64((Double(ticket) * 1e9 / rate).rounded())) }
            return .nanoseconds(Int64((Self.rampOffset(ticket, rate: rate, ramp: ramp, warmupTickets,
                                                      .nanoseconds(Int64(warmupSeconds * 1e9))) * 1e9).rounded()))
        }

        func due(_ ticket: Int) -> ContinuousClock.Instant { start + offset(ticket) }

        /// Seconds from the start to ticket `ticket` on a ramp: warm-up tickets at `rate`, then the ramp's
        /// `j`-th ticket at the time `t` where the requests due so far, `rate·t + a·t²/2` (`a` the slope), reach
        /// `j`; past the ramp, at `endRate`.
        static func rampOffset(_ ticket: Int, rate: Double, ramp: Ramp, _ warmupTickets: Int, _ warmup: Duration)
            -> Double
        {
            if ticket < warmupTickets { return Double(ticket) / rate }
            let j = Double(ticket - warmupTickets)
            let span = ramp.seconds
            let slope = (ramp.endRate - rate) / span
            let onRamp = span * (rate + ramp.endRate) / 2
            let t: Double
            if j <= onRamp {
                t = abs(slope) < 1e-12 ? j / rate : (-rate + (rate * rate + 2 * slope * j).squareRoot()) / slope
            } else {
                t = span + (j - onRamp) / ramp.endRate
            }
            return BenchReport.seconds(warmup) + t
        }

        /// The first ticket whose offset is at or after `seconds` (offsets rise with the ticket).
        static func firstTicket(atOrAfter seconds: Double, offset: (Int) -> Double, upperBound: Int) -> Int {
            var low = 0
            var high = max(1, upperBound)
            while offset(high) < seconds { high *= 2 }
            while low < high {
                let middle = low + (high - low) / 2
                if offset(middle) < seconds { low = middle + 1 } else { high = middle }
            }
            return low
        }

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
