import Foundation
import Testing
@testable import TrawlBench
import TrawlTestSupport

/// A round as `--rounds` keeps it.
private func round(rps: Double, p99: Double, failed: Int = 0) -> [String: Any] {
    [
        "requests_per_s": rps, "failed": failed,
        "percentiles_ms": ["p50": p99 / 4, "p90": p99 / 2, "p99": p99, "p99.9": p99 * 2, "max": p99 * 3],
    ]
}

@Suite("bench: --rounds compared", .hangGuard)
struct BenchRoundsTests {
    @Test func overlappingRangesAreNoiseAndDisjointOnesBetterOrWorse() {
        let before = [round(rps: 1000, p99: 10), round(rps: 1100, p99: 11), round(rps: 1050, p99: 12)]
        let after = [round(rps: 1080, p99: 5, failed: 4), round(rps: 1200, p99: 6, failed: 5),
                     round(rps: 1150, p99: 5.5, failed: 3)]
        let table = BenchRounds.comparison(before: ("a.json", before), after: ("b.json", after))
        let lines = table.split(separator: "\n").map(String.init)
        func row(_ name: String) -> String {
            (lines.first { $0.hasPrefix("  " + name + " ") } ?? "").split(separator: " ").joined(separator: " ")
        }
        #expect(row("requests/s") == "requests/s 1050 [1000-1100] 1150 [1080-1200] 1.10x within noise", "\(table)")
        #expect(row("p99 ms") == "p99 ms 11.00 [10.00-12.00] 5.50 [5.00-6.00] 0.50x better", "\(table)")
        #expect(row("errors") == "errors 0 [0-0] 4 [3-5] - worse", "more errors after: \(table)")
        #expect(!table.contains("--rounds 3 or more"))
        let single = BenchRounds.comparison(before: ("a.json", [before[0]]), after: ("b.json", [after[0]]))
        #expect(!single.contains("within noise") && !single.contains("better"))
        #expect(single.contains("(run both with --rounds 3 or more to tell a difference from noise)"))
        #expect(BenchRounds.median([3, 1, 2]) == 2 && BenchRounds.median([4, 1, 2, 3]) == 2.5)
    }
}
