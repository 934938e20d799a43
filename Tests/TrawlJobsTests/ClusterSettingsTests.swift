import Testing
import TrawlTestSupport

@testable import TrawlJobs

@Suite("Running past one machine: settings, the RESP reader, AIMD", .hangGuard)
struct ClusterSettingsTests {
    let minimal = "sources: [{name: a, url: \"http://127.0.0.1:9/a\", paginate: link, items: \"\"}]"

    @Test func jobFileReadsRateStoreAndAdaptive() throws {
        let job = try Job.parse(
            "settings: {rate_store: \"redis://10.0.0.5:6380/3\", adaptive: true}\n" + minimal, environment: [:])
        #expect(job.settings.rateStore == RateStoreAddress(host: "10.0.0.5", port: 6380, database: 3))
        #expect(job.settings.adaptive)
        let plain = try Job.parse(minimal, environment: [:])
        #expect(plain.settings.rateStore == nil && !plain.settings.adaptive)
    }

    @Test func badRateStoreOrAdaptiveNamesTheField() {
        for (setting, message) in [
            ("rate_store: \"http://x:1\"", "is not a redis:// address"),
            ("rate_store: \"redis://x:99999\"", "is not a port"),
            ("rate_store: \"redis://:pw@x:1\"", "carries credentials"),
            ("adaptive: maybe", "expected true or false"),
        ] {
            do {
                _ = try Job.parse("settings: {\(setting)}\n" + minimal, environment: [:])
                Issue.record("\(setting) was accepted")
            } catch {
                #expect(error.description.contains(message), "\(error)")
                #expect(error.field?.hasPrefix("settings.") == true, "\(error)")
            }
        }
    }

    @Test func rateStoreAddresses() throws {
        #expect(try RateStoreAddress.parse("redis://cache") == RateStoreAddress(host: "cache"))
        let bracketed = try RateStoreAddress.parse("redis://[::1]:7000/1")
        #expect(bracketed == RateStoreAddress(host: "::1", port: 7000, database: 1))
        #expect(throws: JobSpecError.self) { try RateStoreAddress.parse("redis://host/x") }
    }

    @Test func respReaderWaitsForWholeValues() throws {
        var reader = RESPReader()
        try reader.append(Array("*3\r\n$1\r\n0\r\n$4\r\n0.25".utf8))
        #expect(try reader.next() == nil)
        try reader.append(Array("\r\n$5\r\ntoken\r\n+OK\r\n".utf8))
        let bulks = ["0", "0.25", "token"].map { RESPValue.bulk(Array($0.utf8)) }
        #expect(try reader.next() == .array(bulks))
        #expect(try reader.next() == .simple("OK"))
        #expect(try reader.next() == nil)
        var hostile = RESPReader()
        try hostile.append(Array("$99999999999\r\n".utf8))
        #expect(throws: RESPReader.Malformed.self) { try hostile.next() }
        #expect(RESPReader.command(["GET", "k"]) == Array("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n".utf8))
    }

    @Test("AIMD: halves on a 429, ignores answers to requests sent before, adds one after a calm window")
    func adaptiveConcurrencyIsAIMD() {
        var adaptive = AdaptiveConcurrency(ceiling: 8)
        let host = "http://127.0.0.1:80"
        #expect(adaptive.limit(host) == 8)
        adaptive.answered(host, limited: true)
        #expect(adaptive.limit(host) == 4)
        // The 8 requests in flight at the halving answer 429 too: no second halving for them.
        for _ in 0..<8 { adaptive.answered(host, limited: true) }
        #expect(adaptive.limit(host) == 4)
        adaptive.answered(host, limited: true)
        #expect(adaptive.limit(host) == 2)
        for _ in 0..<4 { adaptive.answered(host, limited: false) }  // the stale ones
        adaptive.answered(host, limited: false)
        #expect(adaptive.limit(host) == 2)
        adaptive.answered(host, limited: false)
        #expect(adaptive.limit(host) == 3)
        adaptive.paused(host)
        #expect(adaptive.limit(host) == 1)
        for _ in 0..<3 { adaptive.answered(host, limited: false) }
        adaptive.answered(host, limited: false)
        #expect(adaptive.limit(host) == 2)
        #expect(adaptive.report[host] == JobReport.ConcurrencyRange(min: 1, max: 8, final: 2))
    }
}
