import Foundation
import Testing
import Trawl
import TrawlJobs
import TrawlTestSupport

/// The documented job files must parse, and expand as described.
@Suite("Documented job files", .hangGuard)
struct ReadmeJobExampleTests {
    /// The `jobs.yaml` block of docs/jobs.md's "Job files" section.
    static func jobsYAML() throws -> String {
        try codeBlock("yaml", after: "## Job files", in: try docsFile("jobs.md"))
    }

    @Test("docs/jobs.md's jobs.yaml parses and expands")
    func readmeJobParses() throws {
        let yaml = try Self.jobsYAML()
        #expect(yaml.hasPrefix("# jobs.yaml"))
        let job = try Job.parse(yaml, file: "jobs.yaml", environment: ["GITHUB_TOKEN": "t0ken-value"])
        #expect(job.sources.map(\.name) == ["repos", "issues"])
        #expect(job.settings.concurrency == 16)
        let units = try job.units(environment: ["GITHUB_TOKEN": "t0ken-value"])
        #expect(units.filter { $0.source == "repos" }.count == 3)
        // 2024 has 366 days: 52 full weeks and a 2-day window.
        let issues = units.filter { $0.source == "issues" }
        #expect(issues.count == 53)
        #expect(issues.first?.request.url.contains("created:2024-01-01..2024-01-07") == true)
        #expect(issues.last?.request.url.contains("created:2024-12-30..2024-12-31") == true)
        #expect(units.allSatisfy { !$0.id.contains("t0ken-value") })
    }

    @Test("README's daily job is one incremental source with its token from the environment")
    func frontPageDailyJobParses() throws {
        let yaml = try codeBlock("yaml", after: "### A daily job", in: try repositoryFile("README.md"))
        let environment = ["API_TOKEN": "t0ken-value"]
        let job = try Job.parse(yaml, file: "daily.yaml", environment: environment)
        #expect(job.sources.map(\.name) == ["events"])
        #expect(job.sources[0].incremental == IncrementalSpec(
            cursor: "updated_at", param: "since", initial: "2024-01-01T00:00:00Z", lookback: "1h"))
        #expect(job.sources[0].primaryKey == "id")
        let units = try job.units(environment: environment)
        #expect(units.count == 1)
        #expect(units.allSatisfy { !$0.id.contains("t0ken-value") })
    }
}
