import Testing
@testable import TrawlBench
import TrawlTestSupport

@Suite("bench: spans of time and expected statuses as flags give them", .hangGuard)
struct BenchFlagTextTests {
    @Test(arguments: [
        ("2", 2.0), ("0.5", 0.5), ("500ms", 0.5), ("2s", 2), ("1m", 60), ("1.5m", 90), ("1h", 3600),
        ("1m30s", 90), ("250us", 0.000_25), (" 3s ", 3), ("0", 0),
    ])
    func durationsTakeUnits(text: String, seconds: Double) throws {
        let value = try #require(BenchDurationText.seconds(text))
        #expect(abs(value - seconds) < 1e-9, "\(text) -> \(value)")
    }

    @Test(arguments: ["", "2 sec", "s", "ms5", "1x", "-1s", "nan", "inf", "1e300", "2s2", "1..5s"])
    func nonsenseIsRefused(text: String) {
        #expect(BenchDurationText.seconds(text) == nil, "\(text)")
    }

    @Test func statusesAreCodesAndRanges() throws {
        #expect(BenchStatusSet.success.contains(200))
        #expect(BenchStatusSet.success.contains(304))
        #expect(!BenchStatusSet.success.contains(404))
        #expect(!BenchStatusSet.success.contains(500))
        let set = try #require(BenchStatusSet(parsing: "200,204,404"))
        #expect(set.contains(404) && set.contains(204) && !set.contains(201))
        let ranges = try #require(BenchStatusSet(parsing: "200-299,404"))
        #expect(ranges.contains(201) && ranges.contains(404) && !ranges.contains(302))
        #expect(ranges.description == "200-299,404")
        for bad in ["", "2xx", "600", "99", "299-200", "200,,204", "200-", "20a", "200-300-400"] {
            #expect(BenchStatusSet(parsing: bad) == nil, "\(bad)")
        }
        #expect(BenchStatusSet.errorKind(404) == "http_4xx")
    }
}
