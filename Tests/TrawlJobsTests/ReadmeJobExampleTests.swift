import Foundation
import Testing
import TrawlTestSupport
import Trawl
import TrawlJobs

/// The README's job file must parse, and expand as described.
@Suite("README job example", .hangGuard)
struct ReadmeJobExampleTests {
    static func readmeYAML() throws -> String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        let readme = try String(contentsOf: url.appendingPathComponent("README.md"), encoding: .utf8)
        let marker = "```yaml\n# jobs.yaml"
        let start = try #require(readme.range(of: marker))
        let body = readme[start.upperBound...]
        let end = try #require(body.range(of: "```"))
        return "# jobs.yaml" + String(body[..<end.lowerBound])
    }

    @Test("the job file in the README parses and expands")
    func readmeJobParses() throws {
        let job = try Job.parse(try Self.readmeYAML(), file: "jobs.yaml", environment: ["GITHUB_TOKEN": "t0ken-value"])
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
}
