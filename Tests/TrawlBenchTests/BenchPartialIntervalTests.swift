import Foundation
import Testing
import TrawlTestSupport
@testable import TrawlBench

@Suite("bench: a partial last interval is not a full interval's rate", .hangGuard)
struct BenchPartialIntervalTests {
    /// Two full 1 s intervals of 9,800 requests, then a stub of 8.7 ms with 16 requests (as issue 37 saw).
    private func report() -> BenchReport {
        var histogram = BenchHistogram.benchLatencies()
        histogram.record(100)
        var report = BenchReport(
            urls: ["http://127.0.0.1:9/"], concurrency: 16, mode: .closed, elapsed: .milliseconds(2009),
            latencies: histogram, bytes: 0, errors: [:], statuses: [200: 19_616], cpuSeconds: 0)
        report.intervalSeconds = 1
        report.intervals = [
            BenchRecorder.Row(start: 0, end: 1, requests: 9_800),
            BenchRecorder.Row(start: 1, end: 2, requests: 9_800),
            BenchRecorder.Row(start: 2, end: 2.0087, requests: 16),
        ]
        return report
    }

    @Test func theTableGivesRatesOverTheTrueLengthAndMarksTheStub() throws {
        let table = report().table(embeddedServer: false, allIntervals: true)
        let lines = table.split(separator: "\n").map(String.init)
        let stub = try #require(lines.first { $0.contains("2.00-2.009") }, "\(table)")
        #expect(stub.contains("1839*"), "16 requests over 8.7 ms: \(stub)")
        let full = try #require(lines.first { $0.contains("1.00-2.00") }, "\(table)")
        #expect(full.contains("9800 ") && !full.contains("*"), "\(full)")
        #expect(lines.contains { $0.contains("* partial: the run ended 0.009 s into this interval") }, "\(table)")
    }

    @Test func theJSONMarksThePartialRowWithItsRate() throws {
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(report().json().utf8)) as? [String: Any])
        let rows = try #require(object["intervals"] as? [[String: Any]])
        #expect(rows.map { $0["partial"] as? Bool } == [false, false, true])
        let rate = try #require(rows[2]["requests_per_s"] as? Double)
        #expect(abs(rate - 16 / 0.0087) < 1, "\(rate)")
        #expect(rows[0]["requests_per_s"] as? Double == 9_800)
    }
}
