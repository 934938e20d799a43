import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@Suite("bench: --rate START:END --ramp", .endToEndAlone)
struct BenchRampTests {
    @Test func theRunFollowsTheRamp() async throws {
        try await TestServer.with { server in
            let result = try await trawl(
                ["bench", "--json", "--rate", "200:600", "--ramp", "1", "-d", "1.5", "--interval", "0.5", "-c", "16",
                 server.url("/json/small")])
            #expect(result.status == 0, "\(result.stderr)")
            let report = try jsonObject(Data(result.stdout.utf8))
            let ramp = try #require(report["ramp"] as? [String: Double])
            #expect(ramp == ["to_rate": 600, "seconds": 1])
            // 200·1 + 400·1/2 + 600·0.5 requests were due: sent, or reported as never started.
            let scheduled = ["requests", "failed", "unsent"].map { report[$0] as? Int ?? 0 }.reduce(0, +)
            #expect(abs(scheduled - 700) <= 1, "\(scheduled)")
            // When the client kept up (few late starts), the rows follow the ramp: 200 -> 400 req/s in the
            // first half second, 400 -> 600 in the second, then 600. On a starved machine only the totals hold.
            let late = Double(report["late_starts"] as? Int ?? 0) / Double(max(1, scheduled))
            let rows = try #require(report["intervals"] as? [[String: Any]])
            let counts = rows.map { Double($0["requests"] as? Int ?? 0) }
            if late < 0.02, report["unsent"] as? Int == 0 {
                for (count, expected) in zip(counts, [150.0, 250, 300]) {
                    #expect(abs(count - expected) <= expected * 0.1, "\(counts)")
                }
            }
        }
    }

    @Test(arguments: [
        (["--rate", "100:1000"], "--rate START:END needs --ramp"),
        (["--ramp", "5"], "--ramp needs --rate START:END"),
        (["--rate", "100", "--ramp", "5"], "--ramp needs --rate START:END"),
        (["--rate", "100:0", "--ramp", "5"], "--rate must be a positive number"),
        (["--rate", "100:x", "--ramp", "5"], "--rate must be a number of requests per second, or START:END"),
        (["--rate", "1:2:3", "--ramp", "5"], "or START:END, not '1:2:3'"),
        (["--rate", "100:1e9", "--ramp", "5"], "--rate must be at most"),
        (["--rate", "100:200", "--ramp", "0"], "--ramp must be from more than 0"),
        (["--rate", "100:200", "--ramp", "nan"], "is invalid for '--ramp"),
    ])
    func badRampsExitTwo(arguments: [String], message: String) async throws {
        let result = try await trawl(["bench"] + arguments + ["http://127.0.0.1:9/"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
