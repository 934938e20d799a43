import Foundation
import Testing
import TrawlBench
import TrawlTestServer
import TrawlTestSupport

/// `trawl bench --merge` (issue 37, point 6): two bench processes against a fixed-latency endpoint, merged.
@Suite("trawl bench --merge", .serialized, .endToEnd)
struct BenchMergeCLITests {
    @Test func twoProcessesMergeToTheirUnionsPercentiles() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            async let first = trawl(
                ["bench", "--json", "--quiet", "-n", "60", "-c", "3", server.url("/delay/5")], in: workspace)
            async let second = trawl(
                ["bench", "--json", "--quiet", "-n", "90", "-c", "3", server.url("/delay/15")], in: workspace)
            let runs = try await [first, second]
            for run in runs { #expect(run.status == 0, "\(run.stderr)") }
            try workspace.write("a.json", runs[0].stdout)
            try workspace.write("b.json", runs[1].stdout)
            // The union of the two histograms, as one process that recorded every request would have it.
            let histograms = try runs.map { run in
                let object = try jsonObject(Data(run.stdout.utf8))
                return try BenchHistogramCodec.decode(
                    try #require(object["histogram"] as? String), maxValue: (object["max_us"] as? NSNumber)?.uint64Value)
            }
            var union = histograms[0]
            union.add(histograms[1])
            let merged = try await trawl(["bench", "--merge", "a.json", "b.json"], in: workspace)
            #expect(merged.status == 0, "\(merged.stderr)")
            let report = try jsonObject(Data(merged.stdout.utf8))
            #expect(report["requests"] as? Int == 150)
            #expect(report["statuses"] as? [String: Int] == ["200": 150])
            #expect(report["concurrency"] as? Int == 6)
            let latency = try #require(report["latency_ms"] as? [String: Double])
            #expect(latency["max"] == Double(union.maxRecorded) / 1000, "\(latency)")
            for (key, level) in [("p50", 50.0), ("p90", 90), ("p99", 99), ("p999", 99.9)] {
                #expect(latency[key] == Double(union.valueAtPercentile(level)) / 1000, "\(key) \(latency)")
            }
            #expect((latency["p50"] ?? 0) >= 5)
            let rows = try #require(report["intervals"] as? [[String: Any]])
            #expect(rows.map { $0["requests"] as? Int ?? 0 }.reduce(0, +) == 150)
            // The merge is itself a result: it merges again, and the thresholds judge it.
            try workspace.write("all.json", merged.stdout)
            let again = try await trawl(["bench", "--merge", "all.json", "--threshold", "p50<1ms"], in: workspace)
            #expect(again.status == 3, "\(again.stderr)")
            #expect(again.stderr.contains("error: 1 threshold(s) failed"), "\(again.stderr)")
        }
    }

    @Test func badInputsAreRefusedWithTheirName() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write("x.json", #"{"requests_per_s": 1, "histogram": "HISTFAAAAAA="}"#)
        let result = try await trawl(["bench", "--merge", "x.json"], in: workspace)
        #expect(result.status == 1)
        #expect(result.stderr.contains("'x.json'"), "\(result.stderr)")
        let usage = try await trawl(["bench", "--merge", "http://127.0.0.1:9/"], in: workspace)
        #expect(usage.status == 2)
    }
}
