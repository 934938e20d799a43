import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// Reports, plans and job files are input too: every counter merged, every count bounded, every exception exact.
@Suite("Report merges, shard plans and job files under hostile input", .hangGuard)
struct HostileReportTests {
    func report(notModified: Int, mark: String) -> JobReport {
        var stats = JobStats()
        stats.requests = 4
        stats.pages = 4
        stats.notModified = notModified
        stats.cappedWaits = 1
        stats.rateLimitWaits = 2
        return JobReport(
            startedAt: Date(timeIntervalSince1970: 0), seconds: 1, complete: true, resumed: false,
            units: JobReport.UnitCounts(), totals: stats, sources: ["s": stats], hosts: ["h": stats], failures: [],
            flags: [], outputs: [], stateDirectory: nil,
            marks: [mark: MarkChange(before: nil, after: "9", since: "0", run: "r", committed: true)])
    }

    @Test("report --merge adds notModified (and every other counter) in totals, sources and hosts; marks are kept")
    func everyCounterIsMerged() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        // Through JSON, as `trawl report --merge` reads the shards' files.
        let shards = try [report(notModified: 3, mark: "a"), report(notModified: 3, mark: "b")].map {
            try decoder.decode(JobReport.self, from: encoder.encode($0))
        }
        let merged = try #require(JobReport.merged(shards))
        for stats in [merged.totals, try #require(merged.sources["s"]), try #require(merged.hosts["h"])] {
            #expect(stats.notModified == 6 && stats.cappedWaits == 2 && stats.rateLimitWaits == 4)
            #expect(stats.requests == 8 && stats.pages == 8)
        }
        #expect(merged.marks?.keys.sorted() == ["a", "b"])
    }

    @Test("a shard count past the limit is refused before anything is allocated by it")
    func shardCountIsBounded() throws {
        let job = try Job.parse(
            "sources: [{name: a, url: \"http://127.0.0.1:9/a?u={u}\", paginate: link, items: \"\", matrix: {u: \"1..3\"}}]",
            environment: [:])
        for count in [Shard.mostShards + 1, 1_000_000_000, Int.max] {
            #expect(throws: JobSpecError.self) { try ShardPlan(job: job, count: count, environment: [:]) }
            #expect(throws: JobSpecError.self) { try Shard(index: 0, count: count) }
        }
        let plan = try ShardPlan(job: job, count: 7, environment: [:])
        #expect(plan.shards.count == 7 && plan.shards.map(\.units.count).reduce(0, +) == 3)
        for entry in plan.shards {
            let shard = try Shard.parse(entry.shard)
            #expect(entry.units.allSatisfy { shard.contains(id: $0) })
        }
    }

    @Test("a job's OAuth2 token_url over http on a name that starts with 127. is refused at read")
    func lookalikeLoopbackIsRefused() {
        for host in ["127.0.0.1.nip.example", "127.attacker.example"] {
            let text = """
                sources:
                  - name: a
                    url: "https://api.example.com/a"
                    paginate: link
                    items: $
                    auth:
                      type: oauth2_client_credentials
                      token_url: "http://\(host)/token"
                      client_id: i
                      client_secret: s
                """
            #expect(throws: JobFileError.self, "\(host)") { try Job.parse(text, environment: [:]) }
        }
    }
}
