import Foundation
import Testing
import TrawlTestServer
import TrawlTestSupport

/// The open model reports latency both ways (issue 37, point 5): from the intended send time (corrected for
/// coordinated omission) and from the actual send (service time, uncorrected), as wrk2 does.
@Suite("trawl bench: corrected and uncorrected latency", .serialized, .endToEnd)
struct BenchServiceTimeCLITests {
    @Test func openModelGivesBothLatenciesWhenRequestsQueue() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            // One slot, a request due every 50 ms, each taking 100 ms: the queue grows, so the corrected
            // latencies grow with it while the service times stay about 100 ms.
            let result = try await trawl(
                [
                    "bench", "--json", "--quiet", "-c", "1", "--rate", "20", "-d", "1s", "--hgrm", "run.hgrm",
                    server.url("/delay/100"),
                ], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let report = try jsonObject(Data(result.stdout.utf8))
            #expect(report["latency_from"] as? String == "intended_send")
            let corrected = try #require(report["latency_ms"] as? [String: Double])
            let service = try #require(report["service_latency_ms"] as? [String: Double], "\(result.stdout)")
            let serviceP50 = try #require(service["p50"])
            #expect(serviceP50 >= 100 && serviceP50 < 2000, "\(service)")
            #expect((corrected["max"] ?? 0) > (service["max"] ?? 0), "corrected \(corrected), service \(service)")
            #expect(report["service_percentiles_ms"] is [String: Double])
            #expect(workspace.text("run.hgrm").contains("Percentile"))
            #expect(workspace.text("run-service.hgrm").contains("Percentile"))
        }
    }

    @Test func closedModelSaysWhichItReports() async throws {
        try await TestServer.with { server in
            let table = try await trawl(["bench", "--quiet", "-n", "50", "-c", "2", server.url("/json/small")])
            #expect(table.status == 0, "\(table.stderr)")
            #expect(table.stdout.contains("measured      from each request's actual send"), "\(table.stdout)")
            let json = try await trawl(["bench", "--json", "-n", "50", "-c", "2", server.url("/json/small")])
            let report = try jsonObject(Data(json.stdout.utf8))
            #expect(report["latency_from"] as? String == "actual_send")
            #expect(report["service_latency_ms"] is NSNull)
        }
    }
}
