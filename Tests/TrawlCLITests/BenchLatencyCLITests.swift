import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// `trawl bench`'s latency picture, `.hgrm` file and thresholds, end to end against the loopback server.
@Suite("trawl bench: latency picture and thresholds", .serialized, .endToEnd)
struct BenchLatencyCLITests {
    @Test func jsonCarriesPercentilesHistogramPhasesAndIntervalsThatAgreeWithTheTotals() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try await TestServer.with { server in
            let result = try await trawl(
                ["bench", "--json", "-d", "1", "--interval", "0.25", "-c", "4", "--hgrm", "out.hgrm",
                 server.url("/json/small")], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let report = try jsonObject(Data(result.stdout.utf8))
            let requests = try #require(report["requests"] as? Int)
            #expect(requests > 0)
            let percentiles = try #require(report["percentiles_ms"] as? [String: Double])
            let names = ["p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99", "max"]
            #expect(Set(percentiles.keys) == Set(names + ["mean"]))
            let values = names.map { percentiles[$0] ?? -1 }
            #expect(values[0] > 0 && values == values.sorted(), "\(percentiles)")
            let latency = try #require(report["latency_ms"] as? [String: Double])
            #expect(latency["p99"] == percentiles["p99"] && latency["max"] == percentiles["max"])

            let histogram = try #require(report["histogram_ms"] as? [[String: Any]])
            // Log buckets with 1-2-5 edges: a handful for a fast run, each at most 2.5 times as wide as the last.
            #expect((1...30).contains(histogram.count), "\(histogram)")
            #expect(histogram.allSatisfy { (($0["to"] as? Double) ?? 0) <= (($0["from"] as? Double) ?? 0) * 2.5 + 1e-9 })
            #expect(histogram.compactMap { $0["count"] as? Int }.reduce(0, +) == requests)

            let phases = try #require(report["phases_ms"] as? [String: [String: Double]])
            #expect(Set(phases.keys) == ["dns", "connect", "tls", "first_byte"])
            let firstByte = try #require(phases["first_byte"])
            #expect((firstByte["mean"] ?? 0) > 0)
            #expect((firstByte["mean"] ?? .infinity) <= (percentiles["mean"] ?? 0) * 1.01 + 0.01,
                    "the first byte comes before the end of the transfer")
            #expect(phases["tls"]?["p99"] == 0, "plain HTTP has no TLS phase")

            #expect(report["interval_s"] as? Double == 0.25)
            let rows = try #require(report["intervals"] as? [[String: Any]])
            // 1 s in 0.25 s steps; requests in flight at the end may add rows when the machine is slow.
            #expect(rows.count >= 4, "\(rows.count) rows for 1 s in 0.25 s steps")
            #expect(rows.compactMap { $0["requests"] as? Int }.reduce(0, +) == requests)
            #expect(rows.compactMap { $0["bytes"] as? Int }.reduce(0, +) == report["bytes"] as? Int)
            for (index, row) in rows.enumerated() {
                #expect(abs((row["start_s"] as? Double ?? -1) - Double(index) * 0.25) < 1e-9)
                let max = row["max_ms"] as? Double ?? 0
                #expect(max <= (percentiles["max"] ?? 0) * 1.01 + 0.01)
                #expect((row["p50_ms"] as? Double ?? .infinity) <= max)
                #expect(Set((row["statuses"] as? [String: Int] ?? [:]).keys) == ["1xx", "2xx", "3xx", "4xx", "5xx"])
            }

            // The .hgrm file is HdrHistogram's percentile distribution, in ms, of the same run.
            let hgrm = workspace.text("out.hgrm")
            let lines = hgrm.split(separator: "\n")
            #expect(lines.first?.split(separator: " ") == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"])
            #expect(hgrm.contains("#[Max     =") && hgrm.contains("Total count    =") && hgrm.contains("#[Buckets"))
            let points = lines.dropFirst().filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ") }
            let last = try #require(points.last)
            #expect(Int(last[2]) == requests, "the last point counts every request")
            let max = percentiles["max"] ?? -1
            #expect(abs((Double(last[0]) ?? 0) - max) <= max * 0.001 + 0.002, "3 significant digits")
            let median = try #require(points.first { (Double($0[1]) ?? 0) >= 0.5 })
            #expect(abs((Double(median[0]) ?? 0) - (percentiles["p50"] ?? -1)) < 0.002, "\(median)")
        }
    }

    @Test func tableShowsThePictureAndThresholdsPassOrExitThree() async throws {
        try await TestServer.with { server in
            let url = server.url("/json/small")
            let passing = try await trawl(
                ["bench", "-n", "300", "-c", "4", "--threshold", "p99<10s", "--threshold", "errors=0",
                 "--threshold", "status_5xx<1%", url])
            #expect(passing.status == 0, "\(passing.stdout)\n\(passing.stderr)")
            for text in ["Latency histogram (ms):", "percentiles   p50 ", "p99.99 ", "phases ms     dns ", "first_byte",
                         "Intervals (1 s each):", "threshold pass  p99<10s  (measured ",
                         "threshold pass  errors=0  (measured 0)", "threshold pass  status_5xx<1%"] {
                #expect(passing.stdout.contains(text), "missing '\(text)' in\n\(passing.stdout)")
            }
            let failing = try await trawl(
                ["bench", "--json", "-n", "200", "-c", "4", "--threshold", "p50<1us", "--threshold", "errors=0", url])
            #expect(failing.status == 3, "\(failing.stderr)")
            #expect(failing.stderr.contains("threshold FAIL  p50<1us  (measured "), "\(failing.stderr)")
            #expect(failing.stderr.contains("threshold pass  errors=0"), "\(failing.stderr)")
            let report = try jsonObject(Data(failing.stdout.utf8))
            let checks = try #require(report["thresholds"] as? [[String: Any]])
            #expect(checks.map { $0["pass"] as? Bool } == [false, true])
            #expect((checks[0]["measured"] as? Double ?? 0) > 0.001)
        }
    }

    @Test(arguments: [
        (["--threshold", "p99<250"], "a latency needs a unit"),
        (["--threshold", "speed>5"], "unknown metric 'speed'"),
        (["--interval", "0"], "--interval must be from 0.1 to 86400 seconds"),
        (["--interval", "nan"], "is invalid for '--interval"),
        (["--interval=-1"], "is invalid for '--interval"),
        (["-d", "0"], "is invalid for '-d"),
        (["-d", "nan"], "is invalid for '-d"),
        (["-d", "1e300"], "is invalid for '-d"),
        (["--rate", "nan"], "--rate"),
        (["--rate", "inf"], "--rate"),
        (["--hgrm", "/nonexistent-dir/x.hgrm"], "--hgrm '/nonexistent-dir/x.hgrm': the directory"),
        (["--hgrm", "/tmp"], "--hgrm '/tmp' is a directory"),
    ])
    func badValuesExitTwoBeforeTheRunNamingTheFlag(arguments: [String], message: String) async throws {
        let result = try await trawl(["bench", "-c", "1"] + arguments + ["http://127.0.0.1:9/"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing ran")
    }
}
