import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer
@testable import trawl

/// A round as `--rounds` keeps it.
private func round(rps: Double, p99: Double, failed: Int = 0) -> [String: Any] {
    [
        "requests_per_s": rps, "failed": failed,
        "percentiles_ms": ["p50": p99 / 4, "p90": p99 / 2, "p99": p99, "p99.9": p99 * 2, "max": p99 * 3],
    ]
}

@Suite("bench --rounds and --compare", .endToEnd)
struct BenchCompareTests {
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

    @Test func roundsAreKeptInTheJSONAndCompared() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try await TestServer.with { server in
            let url = server.url("/json/small")
            for (file, concurrency) in [("before.json", "1"), ("after.json", "4")] {
                let run = try await trawl(
                    ["bench", "--json", "--rounds", "2", "-n", "300", "-c", concurrency, url], in: workspace)
                #expect(run.status == 0, "\(run.stderr)")
                #expect(run.stderr.contains("round 2/2: "), "\(run.stderr)")
                try workspace.write(file, run.stdout)
                let report = try jsonObject(Data(run.stdout.utf8))
                let rounds = try #require(report["rounds"] as? [[String: Any]])
                #expect(rounds.count == 2)
                #expect(rounds.allSatisfy { $0["requests"] as? Int == 300 })
                #expect(rounds.last?["requests_per_s"] as? Double == report["requests_per_s"] as? Double,
                        "the top level is the last round")
            }
            let compared = try await trawl(["bench", "--compare", "before.json", "after.json"], in: workspace)
            #expect(compared.status == 0, "\(compared.stderr)")
            #expect(compared.stdout.hasPrefix("trawl bench --compare: before.json (2 round(s)) vs after.json"))
            for name in ["requests/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors"] {
                #expect(compared.stdout.contains("\n  \(name) "), "\(compared.stdout)")
            }
            #expect(compared.stdout.contains("x  within noise") || compared.stdout.contains("x  better")
                    || compared.stdout.contains("x  worse"))
        }
    }

    @Test(arguments: [
        (["--compare", "a.json"], "--compare takes two result files"),
        (["--compare", "a.json", "http://127.0.0.1:9/"], "--compare takes two result files"),
        (["--rounds", "0", "http://127.0.0.1:9/"], "--rounds must be from 1 to 100"),
        (["--rounds", "1000", "http://127.0.0.1:9/"], "--rounds must be from 1 to 100"),
    ])
    func badComparisonsExitTwo(arguments: [String], message: String) async throws {
        let result = try await trawl(["bench"] + arguments)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func aMissingResultFailsNamingIt() async throws {
        let result = try await trawl(["bench", "--compare", "/nonexistent/a.json", "/nonexistent/b.json"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot read '/nonexistent/a.json'"), "\(result.stderr)")
    }
}
