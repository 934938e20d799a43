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
}
