import Foundation
import Testing
import TrawlTestServer

// Running one job as several processes (issue 17): the rate a shard applies, the budget shared through a rate
// store, adaptive concurrency, merged reports and plans.

/// A job of `units` one-page units at the test server (`/paged/page?...&u={u}`), with `settings`.
func clusterJob(_ server: TestServer, units: Int, settings: String, query: String = "n=10&per_page=10") -> String {
    """
    settings: {\(settings)}
    sources:
      - name: items
        url: "\(server.url("/paged/page?" + query))&u={u}"
        paginate: {style: page, total_pages: total_pages}
        items: items
        matrix:
          u: "1..\(units)"

    """
}

@Suite("trawl fetch past one machine: shard rates", .timeLimit(.minutes(3)))
struct ShardRateCLITests {
    @Test("a sharded run without a store sends its 1/N share of --rate, and says so on its first line")
    func shardWithoutStoreTakesItsShare() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 120, settings: "per_host: 32, concurrency: 32"))
            let result = try await trawl(
                ["fetch", "job.yaml", "-q", "-o", "out.jsonl", "--rate", "20", "--shard", "0/2"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(
                first == "trawl: rate: 20/s per host is split between 2 shards without a --rate-store: this shard "
                    + "sends at most 10/s per host", "\(result.stderr)")
            let pacing = RequestPacing(server.requestLog.map(\.receivedAt))
            #expect(pacing.count > 40 && pacing.count < 80, "\(pacing.count) units in shard 0/2 of 120")
            expectPaced(pacing, rate: 10)
        }
    }

    @Test("an unsharded run says nothing about shards")
    func unshardedSaysNothingAboutShards() async throws {
        try await TestServer.with { server in
            let workspace = try Workspace()
            defer { workspace.remove() }
            try workspace.write("job.yaml", clusterJob(server, units: 2, settings: "rate: 20"))
            let result = try await trawl(["fetch", "job.yaml", "-q", "-o", "out.jsonl"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
        }
    }
}
