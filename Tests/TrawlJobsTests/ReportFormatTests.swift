import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// `report.json` has snake_case keys and a `version`; the camelCase reports and checkpoints of earlier releases
/// are still read.
@Suite("Report JSON: snake_case with a version, earlier camelCase files still read", .hangGuard)
struct ReportFormatTests {
    /// A report as releases before the `version` field wrote it, with a source named like one of the old keys.
    static let camelCaseReport = """
        {
          "complete" : false,
          "failures" : [ { "attempts" : 3, "error" : "HTTP 500", "keptItems" : 20, "keptPages" : 2,
                           "page" : "page 3", "pageIndex" : 2, "source" : "notModified", "status" : 500,
                           "unit" : "notModified", "url" : "http://h/x?page=3" } ],
          "flags" : [ { "kind" : "incomplete_results", "message" : "m", "pageIndices" : [ 1 ],
                        "source" : "notModified", "unit" : "notModified" } ],
          "hosts" : { "h:80" : { "bytes" : 10, "cappedWaits" : 1, "failedAttempts" : 3, "items" : 20,
                                 "latencyMs" : { "max" : 4, "p50" : 1, "p90" : 2, "p99" : 3 }, "notModified" : 5,
                                 "pages" : 2, "rateLimitWaitSeconds" : 0.5, "rateLimitWaits" : 2, "requests" : 5,
                                 "retries" : 2 } },
          "outputs" : [ { "bytes" : 99, "incomplete" : [ { "items" : 20, "pages" : 2, "unit" : "notModified" } ],
                          "path" : "out.jsonl", "settledBytes" : 0, "units" : 0 } ],
          "resumed" : false,
          "seconds" : 1.5,
          "sources" : { "notModified" : { "bytes" : 10, "cappedWaits" : 1, "failedAttempts" : 3, "items" : 20,
                                 "latencyMs" : { "max" : 4, "p50" : 1, "p90" : 2, "p99" : 3 }, "notModified" : 5,
                                 "pages" : 2, "rateLimitWaitSeconds" : 0.5, "rateLimitWaits" : 2, "requests" : 5,
                                 "retries" : 2 } },
          "startedAt" : "2026-11-28T06:00:00Z",
          "stateDirectory" : "state",
          "totals" : { "bytes" : 10, "cappedWaits" : 1, "failedAttempts" : 3, "items" : 20,
                       "latencyMs" : { "max" : 4, "p50" : 1, "p90" : 2, "p99" : 3 }, "notModified" : 5,
                       "pages" : 2, "rateLimitWaitSeconds" : 0.5, "rateLimitWaits" : 2, "requests" : 5,
                       "retries" : 2 },
          "units" : { "done" : 0, "failed" : 1, "skipped" : 0, "total" : 1 }
        }
        """

    @Test("an earlier release's camelCase report is read whole; a source named like an old key keeps its name")
    func camelCaseReportIsRead() throws {
        let report = try JobReport.decoded(from: Data(Self.camelCaseReport.utf8))
        #expect(report.version == JobReport.formatVersion)
        #expect(report.startedAt == Date(timeIntervalSince1970: 1_795_845_600))
        #expect(report.stateDirectory == "state")
        let stats = try #require(report.sources["notModified"])
        #expect(report.sources.keys.sorted() == ["notModified"])
        for stats in [stats, report.totals, try #require(report.hosts["h:80"])] {
            #expect(stats.failedAttempts == 3 && stats.cappedWaits == 1 && stats.notModified == 5)
            #expect(stats.rateLimitWaits == 2 && stats.rateLimitWaitSeconds == 0.5 && stats.latencyMs.p99 == 3)
        }
        let failure = try #require(report.failures.first)
        #expect(failure.pageIndex == 2 && failure.keptPages == 2 && failure.keptItems == 20)
        #expect(report.flags.first?.pageIndices == [1])
        #expect(report.outputs.first?.settledBytes == 0 && report.outputs.first?.bytes == 99)
    }

    @Test("the report is written in snake_case with a version, and read back the same")
    func snakeCaseWithVersion() throws {
        let old = try JobReport.decoded(from: Data(Self.camelCaseReport.utf8))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(old)
        let text = String(decoding: data, as: UTF8.self)
        // Every old key is gone, but for the source (and unit) named notModified, which keeps its name.
        for key in LegacyReportKeys.renamed.keys where key != "notModified" {
            #expect(!text.contains("\"\(key)\""), "\(key) in \(text)")
        }
        #expect(!text.contains("\"notModified\":5") && text.contains("\"not_modified\":5"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["version"] as? Int == 1)
        #expect(json["started_at"] as? String == "2026-11-28T06:00:00Z")
        #expect(json["state_directory"] as? String == "state")
        let totals = try #require(json["totals"] as? [String: Any])
        #expect(totals["failed_attempts"] as? Int == 3 && totals["rate_limit_wait_seconds"] as? Double == 0.5)
        #expect((totals["latency_ms"] as? [String: Any])?["p90"] as? Double == 2)
        #expect((json["sources"] as? [String: Any])?.keys.sorted() == ["notModified"])
        let failure = try #require((json["failures"] as? [[String: Any]])?.first)
        #expect(failure["page_index"] as? Int == 2 && failure["kept_pages"] as? Int == 2)
        #expect((json["flags"] as? [[String: Any]])?.first?["page_indices"] as? [Int] == [1])
        #expect((json["outputs"] as? [[String: Any]])?.first?["settled_bytes"] as? Int == 0)
        let again = try JobReport.decoded(from: data)
        #expect(again.totals.failedAttempts == 3 && again.failures.first?.keptItems == 20)
    }

    @Test("a report without version that is not a report still fails, naming what is missing")
    func notAReport() {
        #expect(throws: DecodingError.self) { try JobReport.decoded(from: Data(#"{"hello": 1}"#.utf8)) }
        #expect(throws: (any Error).self) { try JobReport.decoded(from: Data("[1]".utf8)) }
    }

    /// A checkpoint sealed as earlier releases wrote it: its flags and stuck record with camelCase keys.
    func legacyCheckpoint(tamper: Bool) throws -> [UInt8] {
        var checkpoint = Checkpoint(fingerprint: "f", shard: "all", withMeta: false)
        checkpoint.version = Checkpoint.sealedVersion
        var unit = Checkpoint.UnitState(id: "u")
        unit.flags = [CompletenessFlag(
            source: "s", unit: "u", kind: .incompleteResults, message: "m", pageIndices: [0, 2])]
        unit.stuck = PageFailureRecord(
            source: "s", unit: "u", page: "page 3", pageIndex: 2, url: "http://h/", attempts: 1, status: nil,
            error: "e", keptPages: 2, keptItems: 7)
        checkpoint.units["0"] = unit
        checkpoint.seal = try checkpoint.contentDigest(legacy: true)
        if tamper { checkpoint.units["0"]?.stuck?.keptItems = 8 }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .custom { LegacyReportKeys.camelCase($0) }
        return [UInt8](try encoder.encode(checkpoint))
    }

    @Test("a checkpoint of an earlier release (camelCase flags) is read intact; one changed by hand is not")
    func legacyCheckpointIsRead() throws {
        let bytes = try legacyCheckpoint(tamper: false)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\"pageIndices\"") && text.contains("\"keptItems\"") && !text.contains("kept_items"))
        let (checkpoint, intact) = try Checkpoint.read(bytes)
        #expect(intact)
        let unit = try #require(checkpoint.units["0"])
        #expect(unit.flags?.first?.pageIndices == [0, 2])
        #expect(unit.stuck?.pageIndex == 2 && unit.stuck?.keptPages == 2 && unit.stuck?.keptItems == 7)
        #expect(try Checkpoint.read(legacyCheckpoint(tamper: true)).intact == false)
        // Written again, it is sealed in the current layout and still intact.
        let rewritten = try checkpoint.sealedEncoding()
        #expect(String(decoding: rewritten, as: UTF8.self).contains("\"kept_items\""))
        #expect(try Checkpoint.read(rewritten).intact)
    }
}
