import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

@Suite("bench --find-max-rate", .endToEndAlone)
struct BenchCapacityTests {
    @Test func findsTheCapacityOfASlowServer() async throws {
        try await TestServer.with { server in
            // Two slots on a 20 ms endpoint: at most 100 requests/s; above that the backlog grows and so does
            // the latency measured from the intended send times (at 200 req/s, about 0.5 s by the end of a
            // step). A busy machine may fail a step below 100, so the bounds are loose.
            let result = try await trawl(
                ["bench", "--json", "--find-max-rate", "--max-rate", "800", "--threshold", "p99<300ms", "-c", "2",
                 "-d", "0.4", "--warmup", "0.1", server.url("/delay/20")])
            #expect(result.status == 0, "\(result.stderr)")
            let object = try jsonObject(Data(result.stdout.utf8))
            let best = try #require(object["max_rate"] as? Double)
            #expect(best > 0 && best < 200, "\(result.stderr)")
            let steps = try #require(object["steps"] as? [[String: Any]])
            #expect(steps.first?["rate"] as? Double == 25)
            #expect(steps.contains { ($0["rate"] as? Double ?? 0) > best && $0["pass"] as? Bool == false }, "\(steps)")
            #expect(!steps.contains { ($0["rate"] as? Double ?? 0) >= 200 && $0["pass"] as? Bool == true },
                    "twice the capacity cannot pass: \(steps)")
            #expect(result.stderr.contains("step  asked     25.0 req/s  achieved"), "\(result.stderr)")
            #expect(result.stderr.contains(String(format: "max rate: %g req/s", best)), "\(result.stderr)")
        }
    }

    @Test(arguments: [
        (["--find-max-rate", "--threshold", "p99<1s"], "--find-max-rate needs --max-rate"),
        (["--find-max-rate", "--max-rate", "100"], "needs at least one --threshold"),
        (["--find-max-rate", "--max-rate", "0", "--threshold", "p99<1s"], "--max-rate must be from 1"),
        (["--find-max-rate", "--max-rate", "nan", "--threshold", "p99<1s"], "--max-rate must be from 1"),
        (["--find-max-rate", "--max-rate", "100", "--threshold", "p99<1s", "--rate", "5"], "drop --rate"),
        (["--max-rate", "100"], "--max-rate goes with --find-max-rate"),
    ])
    func badSearchesExitTwo(arguments: [String], message: String) async throws {
        let result = try await trawl(["bench"] + arguments + ["http://127.0.0.1:9/"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
