import Foundation
import Trawl
import TrawlJobs

/// The end-of-job summary, the failure list and the JSON report, shared by `fetch` and `demo`.
enum JobSummary {
    static func text(_ report: JobReport) -> String {
        let seconds = max(report.seconds, 0.001)
        let totals = report.totals
        var lines: [String] = []
        let units = report.units
        var unitLine = "units: \(units.done) done"
        if units.skipped > 0 { unitLine += ", \(units.skipped) already done in an earlier run" }
        if units.failed > 0 { unitLine += ", \(units.failed) FAILED" }
        lines.append(unitLine + " (of \(units.total))")
        lines.append(
            "fetched: \(totals.pages) pages, \(totals.items) items, "
                + String(format: "%.1f MB in %.2f s", Double(totals.bytes) / 1e6, seconds))
        if let kept = report.kept, kept.pages > 0 || kept.units > 0 {
            // The output holds more than this run fetched: say what, so the counts add up.
            let units = kept.units > 0 ? " and \(kept.units) units done" : ""
            lines.append(
                "resumed: \(kept.pages) pages (\(kept.items) items)\(units) were kept from the interrupted run; "
                    + "with this run's: \(kept.pages + totals.pages) pages, \(kept.items + totals.items) items "
                    + "(of the units not done before)")
        }
        lines.append(
            String(
                format: "throughput: %.0f items/s, %.1f MB/s, %.0f requests/s",
                Double(totals.items) / seconds, Double(totals.bytes) / 1e6 / seconds, Double(totals.requests) / seconds))
        lines.append(
            "retries: \(totals.retries) (failed attempts \(totals.failedAttempts)); rate-limit pauses: "
                + "\(totals.rateLimitWaits)" + String(format: " (%.1f s of wall time", totals.rateLimitWaitSeconds)
                + (totals.cappedWaits > 0 ? ", \(totals.cappedWaits) capped)" : ")"))
        lines.append(
            String(
                format: "latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f", totals.latencyMs.p50,
                totals.latencyMs.p90, totals.latencyMs.p99, totals.latencyMs.max))
        if totals.notModified > 0 { lines.append("not modified: \(totals.notModified) pages (304: the stored page)") }
        if totals.duplicatesDropped != nil || totals.rereads != nil {
            lines.append(
                "drift: \(totals.duplicatesDropped ?? 0) duplicate item(s) dropped by primary key, "
                    + "\(totals.rereads ?? 0) page(s) re-read")
        }
        for (name, stats) in report.sources.sorted(by: { $0.key < $1.key }) {
            lines.append(
                "  \(name): \(stats.pages) pages, \(stats.items) items, \(stats.retries) retries, "
                    + String(format: "p50 %.1f ms", stats.latencyMs.p50))
        }
        for (name, change) in (report.marks ?? [:]).sorted(by: { $0.key < $1.key }) { lines.append(change.line(name)) }
        for (host, range) in (report.concurrency ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append("  adaptive concurrency \(host): min \(range.min), max \(range.max), final \(range.final)")
        }
        for flag in report.flags.prefix(10) {
            lines.append("incomplete? \(flag.source) [\(flag.unit)]: \(flag.message)")
        }
        if report.flags.count > 10 { lines.append("… and \(report.flags.count - 10) more completeness flags") }
        for output in report.outputs {
            var line = "output: \(output.path) (\(output.bytes) bytes, \(output.units) units"
            if !output.incomplete.isEmpty { line += "; \(output.incomplete.count) incomplete" }
            lines.append(line + ")")
        }
        return lines.joined(separator: "\n")
    }

    static func failureText(_ report: JobReport, retry: String) -> String {
        var lines = ["error: \(report.failures.count) page(s) failed after their retries:"]
        for failure in report.failures.prefix(20) {
            let kept =
                failure.keptPages > 0
                ? "its \(failure.keptPages) page(s) before it (\(failure.keptItems) items) are kept"
                : "nothing of the unit is kept"
            lines.append(
                "  \(failure.source) [\(failure.unit)] \(failure.page) (page index \(failure.pageIndex), "
                    + "\(failure.attempts) attempts): \(failure.error); \(kept)")
        }
        if report.failures.count > 20 { lines.append("  … and \(report.failures.count - 20) more (see --report)") }
        if report.failures.contains(where: { $0.status == 404 && $0.pageIndex > 0 }) {
            lines.append(
                "a 404 after the first page may be how the server says there are no more pages (Django REST "
                    + "Framework's page pagination does): if so, add --stop-on-status 404 (job file: "
                    + "settings.stop_on_status: [404])")
        }
        for output in report.outputs where !output.incomplete.isEmpty {
            let units = output.incomplete.map { "\($0.unit) (\($0.pages) pages)" }
            lines.append(
                "\(output.path) holds every item read, in job order, but not all of: "
                    + units.prefix(10).joined(separator: ", ") + (units.count > 10 ? ", …" : "") + ".")
            lines.append(
                "  Its first \(output.settledBytes) bytes are final; the retry fetches only the missing pages and "
                    + "writes the rest again, ending as an uninterrupted run would.")
        }
        if let state = report.stateDirectory { lines.append("progress is saved in \(state)") }
        lines.append("retry only what failed: \(retry)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Why a run whose pages all succeeded is no success: units ended short of the total their server announced.
    static func shortText(_ flags: [CompletenessFlag], outputs: [JobReport.OutputRecord]) -> String {
        flagsText(
            "ended with fewer items than the server announced", flags, outputs: outputs, kept: "every item read is kept",
            remedy: "the server's total may count what its pages do not serve (a search cap, items deleted meanwhile); "
                + "to accept that, pass --allow-short (job file: settings.allow_short: true)")
    }

    /// Why a run whose pages all succeeded is no success: units drifted (keys repeated or missing) and a re-read
    /// did not settle them.
    static func driftText(_ flags: [CompletenessFlag], outputs: [JobReport.OutputRecord]) -> String {
        flagsText(
            "drifted while they were walked (their data changed)", flags, outputs: outputs,
            kept: "each key once, its last answer kept (its first on a walk that cannot be read again)",
            remedy: "run again when the data is quiet, or keep the distinct items with --allow-drift "
                + "(job file: settings.allow_drift: true)")
    }

    /// The units flagged (the first 20), what each output kept, and what to do.
    private static func flagsText(
        _ what: String, _ flags: [CompletenessFlag], outputs: [JobReport.OutputRecord], kept: String, remedy: String
    ) -> String {
        var lines = ["error: \(flags.count) unit(s) \(what):"]
        for flag in flags.prefix(20) { lines.append("  \(flag.source) [\(flag.unit)]: \(flag.message)") }
        if flags.count > 20 { lines.append("  … and \(flags.count - 20) more (see --report)") }
        for output in outputs { lines.append("written: \(output.path) (\(output.bytes) bytes): \(kept)") }
        lines.append(remedy)
        return lines.joined(separator: "\n") + "\n"
    }

    static func writeReport(_ report: JobReport, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let bytes: Data
        do {
            bytes = try encoder.encode(report)
        } catch {
            throw CLIFailure("error: --report: the report could not be encoded (\(error))")
        }
        try ReportFile.write([UInt8](bytes), to: path, flag: "--report")
    }

    static func shellQuoted(_ argument: String) -> String {
        let safe = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./:=@%+,".contains($0) }
        if safe, !argument.isEmpty { return argument }
        return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
