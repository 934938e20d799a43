import Foundation
import Testing
@testable import TrawlBench
import TrawlTestSupport

/// A one-second report of a step at `rate`: `latency` µs each, `late` late starts, `cpu` seconds of CPU.
private func step(rate: Double, latency: UInt64, late: Int = 0, cpu: Double = 0.1) -> BenchReport {
    var histogram = BenchHistogram.benchLatencies()
    let count = Int(rate)
    histogram.record(latency, count: UInt64(count))
    var report = BenchReport(
        urls: ["http://127.0.0.1:9/"], concurrency: 8, mode: .open, elapsed: .seconds(1), latencies: histogram,
        bytes: 0, errors: [:], statuses: [200: count], cpuSeconds: cpu)
    report.loops = 2
    report.lateStarts = late
    return report
}

@Suite("bench: the capacity search", .hangGuard)
struct BenchCapacitySearchTests {
    @Test func searchDoublesThenBisectsToWithinFivePercentOfTheKnee() async throws {
        // A server that answers in 1 ms up to 1370 req/s and in 500 ms above.
        let search = BenchCapacitySearch(
            maxRate: 8000, checks: [try BenchThreshold("p99<100ms")],
            run: { rate in step(rate: rate, latency: rate <= 1370 ? 1000 : 500_000) }, report: { _ in },
            cores: 2)
        let steps = await search.search()
        #expect(Array(steps.prefix(4).map(\.rate)) == [250, 500, 1000, 2000], "doubling from --max-rate/32")
        let best = try #require(BenchCapacitySearch.best(steps))
        #expect(best <= 1370 && best >= 1370 * 0.95, "\(steps.map(\.rate))")
        #expect(steps.count <= 10)
        #expect(steps.allSatisfy { $0.pass == ($0.rate <= 1370) })
        #expect(steps.first { !$0.pass }?.failed == ["p99<100ms"])
    }

    @Test func searchHalvesWhenTheFirstStepFailsAndStopsAtMaxRate() async throws {
        let low = BenchCapacitySearch(
            maxRate: 3200, checks: [try BenchThreshold("p99<100ms")],
            run: { rate in step(rate: rate, latency: rate <= 30 ? 1000 : 500_000) }, report: { _ in }, cores: 2)
        let steps = await low.search()
        #expect(Array(steps.prefix(3).map(\.rate)) == [100, 50, 25])
        #expect(BenchCapacitySearch.best(steps).map { $0 <= 30 && $0 >= 28 } == true, "\(steps.map(\.rate))")
        let easy = BenchCapacitySearch(
            maxRate: 3200, checks: [try BenchThreshold("p99<100ms")],
            run: { rate in step(rate: rate, latency: 1000) }, report: { _ in }, cores: 2)
        let all = await easy.search()
        #expect(all.map(\.rate) == [100, 200, 400, 800, 1600, 3200])
        #expect(BenchCapacitySearch.best(all) == 3200)
    }

    @Test func aStepThatLeavesItsScheduleUnsentFails() async throws {
        // The server keeps every slot busy above 500 req/s: the backlog is never sent, so the percentiles
        // of what was sent look fine.
        let search = BenchCapacitySearch(
            maxRate: 3200, checks: [try BenchThreshold("p99<100ms")],
            run: { rate in
                var report = step(rate: min(rate, 500), latency: 1000)
                report.unsent = max(0, Int(rate) - 500)
                return report
            }, report: { _ in }, cores: 2)
        let steps = await search.search()
        #expect(BenchCapacitySearch.best(steps).map { $0 <= 500 && $0 >= 475 } == true, "\(steps.map(\.rate))")
        let failing = try #require(steps.first { !$0.pass })
        #expect(failing.failed == ["rate not sustained: 38% never started"], "\(failing.rate): \(failing.failed)")
    }

    @Test func aStepWhereTheClientCannotKeepUpEndsTheSearch() async throws {
        var printed: [String] = []
        let search = BenchCapacitySearch(
            maxRate: 8000, checks: [try BenchThreshold("p99<100ms")],
            run: { rate in
                // Above 1000 req/s the client's two loop threads are saturated and starts slip.
                rate > 1000 ? step(rate: rate, latency: 1000, late: Int(rate / 10), cpu: 1.9)
                    : step(rate: rate, latency: 1000)
            },
            report: { printed.append(BenchCapacitySearch.line($0)) }, cores: 2)
        let steps = await search.search()
        #expect(steps.map(\.rate) == [250, 500, 1000, 2000])
        #expect(steps.last?.clientLimited == true)
        #expect(BenchCapacitySearch.best(steps) == 1000)
        #expect(printed.last?.hasSuffix("CLIENT LIMITED") == true, "\(printed)")
        // Late starts with an idle client are the server's doing (every slot busy), not the client's.
        #expect(!BenchCapacitySearch.clientLimited(step(rate: 2000, latency: 1000, late: 500, cpu: 0.2), cores: 2))
    }
}
