import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@Suite("bench --rounds and --compare", .endToEnd)
struct BenchCompareTests {
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
            // -c 1 against -c 4 measured different things: refused, unless forced.
            let refused = try await trawl(["bench", "--compare", "before.json", "after.json"], in: workspace)
            #expect(refused.status == 2, "\(refused.stdout)")
            #expect(refused.stderr.contains("the runs differ in what was measured"), "\(refused.stderr)")
            #expect(refused.stderr.contains("  -c: 1 vs 4"), "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
            let compared = try await trawl(
                ["bench", "--compare", "--force", "before.json", "after.json"], in: workspace)
            #expect(compared.status == 0, "\(compared.stderr)")
            #expect(compared.stdout.contains("note: the runs differ in -c: 1 vs 4"), "\(compared.stdout)")
            #expect(compared.stdout.hasPrefix("trawl bench --compare: before.json (2 round(s)) vs after.json"))
            for name in ["requests/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors"] {
                #expect(compared.stdout.contains("\n  \(name) "), "\(compared.stdout)")
            }
            #expect(compared.stdout.contains("x  within noise") || compared.stdout.contains("x  better")
                    || compared.stdout.contains("x  worse"))
        }
    }

    @Test func runsThatMeasuredTheSameThingCompareAndOthersAreNamed() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try await TestServer.with { server in
            let url = server.url("/json/small")
            for (file, extra) in [("a.json", ["-c", "2"]), ("b.json", ["-c", "2"]), ("c.json", ["-c", "2", "-X", "HEAD"])] {
                let run = try await trawl(["bench", "--json", "-n", "100"] + extra + [url], in: workspace)
                #expect(run.status == 0, "\(run.stderr)")
                try workspace.write(file, run.stdout)
            }
            let same = try await trawl(["bench", "--compare", "a.json", "b.json"], in: workspace)
            #expect(same.status == 0, "\(same.stderr)")
            #expect(!same.stdout.contains("note: the runs differ"), "\(same.stdout)")
            let method = try await trawl(["bench", "--compare", "a.json", "c.json"], in: workspace)
            #expect(method.status == 2)
            #expect(method.stderr.contains("  method: GET vs HEAD"), "\(method.stderr)")
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
