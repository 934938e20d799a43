import Foundation
import TrawlEngine

/// `--find-max-rate`: the highest open-model rate at which every `--threshold` holds.
///
/// A stepped ramp, then bisection: short steady steps (each `-d` long after its own `--warmup`) at rates that
/// double from `--max-rate`/32 until one fails (or halve while the first fails), then bisect between the last
/// rate that passed and the first that failed until they are within 5% (at most 6 more steps). A step fails
/// when a threshold fails or when more than 2% of its requests never started (the rate was not sustained:
/// their latency would be in no percentile). A step where
/// the client itself could not keep up (more than 1% late starts while its CPU was busy) ends the search: the
/// rate found is then a lower bound, and the output says the client, not the server, was the limit.
package struct BenchCapacitySearch {
    package struct Step {
        package var rate: Double
        package var report: BenchReport
        package var pass: Bool
        package var failed: [String]
        package var clientLimited: Bool
    }

    package let maxRate: Double
    package let checks: [BenchThreshold]
    /// Runs one steady step at a rate.
    package let run: (Double) async -> BenchReport
    /// Called after each step (the evidence, printed as the search goes).
    package let report: (Step) -> Void
    package var cores = ProcessInfo.processInfo.activeProcessorCount

    package init(
        maxRate: Double, checks: [BenchThreshold], run: @escaping (Double) async -> BenchReport,
        report: @escaping (Step) -> Void, cores: Int = ProcessInfo.processInfo.activeProcessorCount
    ) {
        self.maxRate = maxRate
        self.checks = checks
        self.run = run
        self.report = report
        self.cores = cores
    }

    /// The steps taken, in order; the answer is `best(steps)`.
    package func search() async -> [Step] {
        var steps: [Step] = []
        func step(_ rate: Double) async -> Step {
            let result = await run(rate)
            var failed = checks.filter { !$0.holds(in: result) }.map(\.text)
            // Requests still waiting for a slot when the step ended were never sent, so their latency is in no
            // percentile: a step that left more than 2% of its schedule unsent did not sustain the rate.
            let scheduled = result.completed + result.failed + result.unsent
            // (At least 3 of them: in a step of a few requests, one late at the end is not a verdict.)
            if scheduled > 0, result.unsent >= 3, Double(result.unsent) / Double(scheduled) > 0.02 {
                failed.append(String(format: "rate not sustained: %.0f%% never started",
                                     Double(result.unsent) / Double(scheduled) * 100))
            }
            // A step the client could not deliver measured nothing about the server: it does not pass.
            let limited = Self.clientLimited(result, cores: cores)
            let step = Step(
                rate: rate, report: result, pass: !limited && result.completed > 0 && failed.isEmpty, failed: failed,
                clientLimited: limited)
            steps.append(step)
            report(step)
            return step
        }
        var low: Double?
        var high: Double?
        var rate = max(1, maxRate / 32)
        var first = await step(rate)
        if first.clientLimited { return steps }
        if first.pass {
            low = rate
            while rate < maxRate {
                rate = min(maxRate, rate * 2)
                let next = await step(rate)
                if next.clientLimited { return steps }
                if next.pass { low = rate } else {
                    high = rate
                    break
                }
            }
        } else {
            high = rate
            for _ in 0..<6 where rate > 1 {
                rate = max(1, rate / 2)
                first = await step(rate)
                if first.clientLimited { return steps }
                if first.pass {
                    low = rate
                    break
                }
                high = rate
            }
        }
        guard var lo = low, var hi = high else { return steps }
        for _ in 0..<6 where (hi - lo) / hi > 0.05 {
            let middle = ((lo + hi) / 2).rounded()
            guard middle > lo, middle < hi else { break }
            let next = await step(middle)
            if next.clientLimited { break }
            if next.pass { lo = middle } else { hi = middle }
        }
        return steps
    }

    /// The highest rate that passed.
    package static func best(_ steps: [Step]) -> Double? {
        steps.filter(\.pass).map(\.rate).max()
    }

    /// The client could not keep up: more than 1% of the requests started late (or never) while the process
    /// used at least 85% of the cores its loop threads can use.
    static func clientLimited(_ report: BenchReport, cores: Int) -> Bool {
        let scheduled = report.completed + report.failed + report.unsent
        guard scheduled > 0, report.seconds > 0 else { return false }
        let late = Double(report.lateStarts + report.unsent) / Double(scheduled)
        let busy = report.cpuSeconds / report.seconds
        return late > 0.01 && busy >= 0.85 * Double(max(1, min(report.loops, cores)))
    }

    package static func line(_ step: Step) -> String {
        let report = step.report
        var verdict = step.clientLimited ? "CLIENT LIMITED" : step.pass ? "pass" : "FAIL"
        if !step.failed.isEmpty, !step.clientLimited { verdict += " (" + step.failed.joined(separator: ", ") + ")" }
        return String(
            format: "step  asked %8.1f req/s  achieved %8.1f req/s  p99 %8.2f ms  errors %d  late starts %d  %@",
            step.rate, report.requestsPerSecond, report.percentile(99), report.failed, report.lateStarts,
            verdict)
    }

    package static func json(_ steps: [Step], maxRate: Double) -> [String: Any] {
        [
            "max_rate": best(steps).map { $0 as Any } ?? NSNull(),
            "max_rate_asked": maxRate,
            "client_limited": steps.contains { $0.clientLimited },
            "steps": steps.map { step -> [String: Any] in
                [
                    "rate": step.rate, "achieved_rps": step.report.requestsPerSecond,
                    "p99_ms": step.report.percentile(99), "errors": step.report.failed,
                    "late_starts": step.report.lateStarts, "pass": step.pass, "failed": step.failed,
                    "client_limited": step.clientLimited,
                ]
            },
        ]
    }
}
