import ArgumentParser
import Foundation
import TrawlEngine
import TrawlJobs

/// `trawl report --merge`: one report for a job run as shards.
struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Merge the --report files of a job's shards into one report.",
        discussion: """
            trawl report --merge out-*/report.json adds up totals, sources and hosts, counts units, lists \
            failures, completeness flags and outputs, and is complete only when every shard is. Latency \
            percentiles are the request-weighted mean of the shards' (an estimate); max is the largest.
            """)

    @Option(
        name: .customLong("merge"), parsing: .upToNextOption,
        help: "The shards' report files (JSON from trawl fetch --report).")
    var merge: [String] = []

    @Option(name: [.customShort("o"), .customLong("output")], help: "Write the merged report here (default stdout).")
    var output: String?

    func validate() throws {
        if merge.isEmpty { throw ValidationError("give the shards' reports: --merge out-*/report.json") }
    }

    func run() async throws {
        var reports: [JobReport] = []
        for path in merge {
            // A report is a file from elsewhere: read only up to 64 MiB (docs/security.md).
            let read: [UInt8]?
            do {
                read = try DurableFiles.read(path, limit: 64 << 20)
            } catch {
                throw CLIFailure("error: cannot read the report \(path) (--merge): \(error)")
            }
            guard let read else {
                throw CLIFailure("error: cannot read the report \(path) (--merge): no such readable file")
            }
            let data = Data(read)
            do {
                reports.append(try JobReport.decoded(from: data))
            } catch {
                throw CLIFailure(
                    "error: \(path) is not a report of trawl fetch --report (--merge): \(Self.reason(error))")
            }
        }
        guard let merged = JobReport.merged(reports) else { return }
        if let output {
            try JobSummary.writeReport(merged, to: output)
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .iso8601
            FileHandle.standardOutput.write(try encoder.encode(merged) + Data("\n".utf8))
        }
    }

    /// What is wrong with the JSON, in its terms (a key path), not Foundation's.
    static func reason(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "\((context.codingPath + [key]).map(\.stringValue).joined(separator: ".")) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type"
        case DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? "it is not JSON" : "\(path) is malformed"
        default:
            return "it cannot be read"
        }
    }
}

/// `trawl plan JOB --shards N`: which units each shard runs.
struct Plan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print which units each of N shards runs (for Argo, Airflow or any fan-out).",
        discussion: """
            The split is the one trawl fetch --shard I/N makes: by a stable hash of each unit's id. The job's \
            ${NAME} variables must be set, as for trawl fetch (unit ids never hold their values).
            """)

    @Argument(help: "A job file (.json, .yaml or .yml).")
    var jobFile: String

    @Option(name: .customLong("shards"), help: "The number of shards.")
    var shards: Int

    @Flag(help: "JSON: {\"count\", \"units\", \"shards\": [{\"shard\": \"I/N\", \"index\", \"units\": [ids]}]}.")
    var json = false

    func validate() throws {
        if shards < 1 { throw ValidationError("--shards must be at least 1, not \(shards)") }
        if shards > Shard.mostShards {
            throw ValidationError("--shards must be at most \(Shard.mostShards), not \(shards)")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let plan: ShardPlan
        do {
            let job = try Job.load(contentsOf: jobFile, environment: environment)
            plan = try ShardPlan(job: job, count: shards, environment: environment)
        } catch {
            throw CLIFailure("error: \(error)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            FileHandle.standardOutput.write(try encoder.encode(plan) + Data("\n".utf8))
            return
        }
        var lines: [String] = []
        for entry in plan.shards {
            lines.append("shard \(entry.shard): \(entry.units.count) unit\(entry.units.count == 1 ? "" : "s")")
            for unit in entry.units { lines.append("  \(unit)") }
        }
        print(TerminalText.safe(lines.joined(separator: "\n")))
    }
}
