import Foundation
import Testing
@testable import TrawlBench
import TrawlTestSupport
@testable import trawl

@Suite("bench: the live panel", .hangGuard)
struct BenchPanelTests {
    @Test func panelShowsProgressCountsAndTheLastInterval() {
        var row = BenchRecorder.Row(start: 1, end: 2)
        row.requests = 5000
        row.p50 = 800
        row.p99 = 2500
        let snapshot = BenchRecorder.Snapshot(
            elapsed: 2.3, done: 9000, errors: 3, lateStarts: 7, inFlight: 12, last: row)
        let lines = BenchPanel.lines(snapshot, plan: .seconds(10))
        #expect(lines.count == BenchPanel.lineCount)
        #expect(lines[0] == "trawl bench  2.3 s / 10 s  done 9000  errors 3  in flight 12  late starts 7")
        #expect(lines[1] == "  last 1s: 5000 req/s  p50 0.80 ms  p99 2.50 ms")
        let byCount = BenchPanel.lines(snapshot, plan: .requests(20000))
        #expect(byCount[0].hasPrefix("trawl bench  2.3 s, 9003 / 20000 requests"))
        #expect(!BenchPanel.shouldDraw(json: false, quiet: false, stderrIsTerminal: false))
        #expect(!BenchPanel.shouldDraw(json: true, quiet: false, stderrIsTerminal: true))
        #expect(!BenchPanel.shouldDraw(json: false, quiet: true, stderrIsTerminal: true))
        #expect(BenchPanel.shouldDraw(json: false, quiet: false, stderrIsTerminal: true))
    }

    @Test func fullLiveViewShowsTheRunSoFarInAFixedNumberOfLines() {
        var histogram = BenchHistogram.benchWindow()
        for micros: UInt64 in [300, 400, 800, 900, 1500, 4000, 30_000] { histogram.record(micros) }
        let rows = (0..<5).map { index in
            var row = BenchRecorder.Row(start: Double(index), end: Double(index + 1))
            row.requests = 1000 * (index + 1)
            return row
        }
        let live = BenchRecorder.Live(rows: rows, latencies: histogram, statusClasses: [0, 70, 0, 3, 0])
        let lines = BenchPanel.liveLines(live)
        #expect(lines.count == BenchPanel.fullLineCount - BenchPanel.lineCount)
        #expect(lines[0].hasPrefix("  so far ms   p50 0.90  p90 "), "\(lines[0])")
        #expect(lines[1] == "  statuses    2xx 70  4xx 3")
        #expect(lines[2] == "  req/s       ▂▄▅▇█  (top 5000)", "\(lines[2])")
        #expect(lines[3] == "  histogram so far (ms):")
        let bars = lines.filter { $0.contains("] |") }
        #expect(bars.count == 7, "0.2-0.5-1-2-5-10-20-50: \(bars)")
        var total = 0
        for bar in bars {
            let inside = bar.split(separator: "[")[1].split(separator: "]")[0]
            total += Int(inside.trimmingCharacters(in: .whitespaces)) ?? 0
        }
        #expect(total == 7)
        let empty = BenchPanel.liveLines(BenchRecorder.Live(rows: [], latencies: nil, statusClasses: [0, 0, 0, 0, 0]))
        #expect(empty.count == lines.count)
        #expect(empty[0] == "  so far ms   waiting for the first interval")
    }
}
